import { formatUsdShort, formatUsdWhole } from '../format.js';
import { MIN_SIMILAR_RECEIPTS, type Band } from './band.js';

/** A band as a person reads it: "$4–11 · 20–55 min · 81%", "· 2 of 5 in band" while few had bands. Pure. */

/** Whole dollars from $10 up ("$4–11"), cents below ("$0.40–3.20"); one figure when the ends meet. */
export function formatMoneyRange(lowMicros: number, highMicros: number): string {
  const whole = highMicros >= 10_000_000;
  const lo = whole ? formatUsdWhole(lowMicros) : formatUsdShort(lowMicros);
  const hi = whole ? formatUsdWhole(highMicros) : formatUsdShort(highMicros);
  return lo === hi ? lo : `${lo}–${hi.slice(1)}`;
}

/** "20–55 min", "2–4.5 h" from two hours up. */
export function formatMinutesRange(low: number, high: number): string {
  if (high >= 120) {
    const h = (m: number): string => String(Math.round(m / 6) / 10);
    return h(low) === h(high) ? `${h(high)} h` : `${h(low)}–${h(high)} h`;
  }
  const lo = Math.round(low);
  const hi = Math.round(high);
  return lo === hi ? `${hi} min` : `${lo}–${hi} min`;
}

/** "81%" once enough had bands to make a share; "2 of 5 in band" before; null when none had one. */
export function formatFit(fit: Band['fit']): string | null {
  if (!fit || fit.of === 0) return null;
  if (fit.of >= MIN_SIMILAR_RECEIPTS) return `${Math.round((100 * fit.inBand) / fit.of)}%`;
  return `${fit.inBand} of ${fit.of} in band`;
}

export function formatBand(band: Band): string {
  const parts = [formatMoneyRange(band.lowMicros, band.highMicros), formatMinutesRange(band.lowMinutes, band.highMinutes)];
  if (band.basis === 'prior') parts.push('prior');
  else parts.push(formatFit(band.fit) ?? 'no fit yet');
  return parts.join(' · ');
}
