import type { RemainingWork } from '../exits/types.js';
import type { Band } from './band.js';

/**
 * The wall card's remaining work from the band the task was given: the band less what the task has already spent
 * and taken. Null (the card falls back to the session's burn) without a measured band, or once the task has gone
 * past the top of its band (what is left is then not known). Pure.
 */
export function remainingFromBand(band: Band | null, spentMicros: number, minutesSoFar: number): Omit<RemainingWork, 'burnPerHourMicros'> | null {
  if (!band || band.basis !== 'receipts') return null;
  if (spentMicros >= band.highMicros) return null;
  const fit = band.fit && band.fit.of > 0 ? band.fit.inBand / band.fit.of : null;
  const lo = Math.max(0, band.lowMicros - spentMicros);
  const hi = band.highMicros - spentMicros;
  const minLo = Math.max(0, Math.round(band.lowMinutes - minutesSoFar));
  const minHi = Math.max(minLo, Math.round(band.highMinutes - minutesSoFar));
  return { usd: { loMicros: lo, hiMicros: hi }, minutes: { lo: minLo, hi: minHi }, fit };
}
