import { zonedParts as parts } from './zoned-time.js';

/** Formatting at the edge: money in micro-dollars, times in the user's zone. No packages, so thin clients can load it. */

export function formatUsd(micros: number): string {
  const dollars = micros / 1_000_000;
  if (dollars > 0 && dollars < 0.01) return '<$0.01';
  return `$${dollars.toFixed(2)}`;
}

/** One line, no control characters, at most `max` characters (an ellipsis marks a cut): text from elsewhere in a line of ours. */
export function oneLine(s: string, max = 200): string {
  // eslint-disable-next-line no-control-regex
  const flat = s.replace(/[\u0000-\u001f\u007f]+/g, ' ').replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** "4:10pm" */
export function formatClock(ms: number, timeZone?: string): string {
  const p = parts(ms, timeZone, { hour: 'numeric', minute: '2-digit', hour12: true });
  return `${p.hour}:${p.minute}${(p.dayPeriod ?? '').toLowerCase()}`;
}

/** "4:10pm" within the next 20 hours, else "Thu 9:00am". */
export function formatReset(resetMs: number, nowMs: number, timeZone?: string): string {
  const clock = formatClock(resetMs, timeZone);
  if (resetMs - nowMs < 20 * 3_600_000) return clock;
  const p = parts(resetMs, timeZone, { weekday: 'short' });
  return `${p.weekday} ${clock}`;
}

/** "40s", "12m", "3h", "2d" */
export function formatAge(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.round(s / 60);
  if (m < 60) return `${m}m`;
  const h = Math.round(m / 60);
  if (h < 48) return `${h}h`;
  return `${Math.round(h / 24)}d`;
}

/** "$0.40", "$0.00": to the cent, a sub-cent amount shown as it rounds (a receipt states its figures, not "<$0.01"). */
export function formatUsdCents(micros: number): string {
  return `$${(micros / 1_000_000).toFixed(2)}`;
}

/**
 * An amount in a currency's minor units ("$10.00", "1200 JPY", "12.34" when the currency is not known):
 * what a seat's extra usage or credits are billed in. `exponent` is the currency's digits after the point.
 */
export function formatMinorUnits(amount: number, exponent: number, currency: string | null): string {
  const value = (amount / 10 ** exponent).toFixed(exponent);
  return currency === null || currency === 'USD' ? (currency ? `$${value}` : value) : `${value} ${currency}`;
}

/** "$11": whole dollars, for ranges wide enough that cents are noise. */
export function formatUsdWhole(micros: number): string {
  return `$${Math.round(micros / 1_000_000)}`;
}

/** "$6", "$12", "$6.40", "$0.40": whole dollars from $10 up or when there are no cents; where space is short. */
export function formatUsdShort(micros: number): string {
  const cents = Math.round(micros / 10_000);
  if (micros >= 10_000_000 || cents % 100 === 0) return formatUsdWhole(micros);
  return formatUsd(micros);
}

/** A size in mebibytes with one decimal ("20.0 MB"): what a cap or a cut file is told in. */
export function formatMegabytes(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}
