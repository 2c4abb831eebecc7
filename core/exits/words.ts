import { formatUsd } from '../format.js';
import { zonedParts } from '../zoned-time.js';
import type { MoneyBand, RemainingWork } from './types.js';

/** "$4.10–9.30", or "$4.10" when the ends meet. */
export function formatBand(b: MoneyBand): string {
  const lo = formatUsd(b.loMicros);
  if (Math.round(b.loMicros / 10_000) === Math.round(b.hiMicros / 10_000)) return lo;
  return `${lo}–${formatUsd(b.hiMicros).slice(1)}`;
}

export function scaleBand(b: MoneyBand, factor: number): MoneyBand {
  return { loMicros: Math.round(b.loMicros * factor), hiMicros: Math.round(b.hiMicros * factor) };
}

/** "$4.10–9.30 · 20–55 min · 82%", or "estimate: none (this session burns $12.40/h)". */
export function formatRemaining(r: RemainingWork): string {
  if (r.usd) {
    const parts = [formatBand(r.usd)];
    if (r.minutes) parts.push(r.minutes.lo === r.minutes.hi ? `${r.minutes.lo} min` : `${r.minutes.lo}–${r.minutes.hi} min`);
    if (r.fit !== null) parts.push(`${Math.round(r.fit * 100)}%`);
    return parts.join(' · ');
  }
  return r.burnPerHourMicros !== null && r.burnPerHourMicros > 0
    ? `estimate: none (this session burns ${formatUsd(r.burnPerHourMicros)}/h)`
    : 'estimate: none';
}

/** "claude-sonnet-5" → "sonnet 5", "claude-opus-5-5" → "opus 5.5"; other ids unchanged. */
export function shortModel(id: string): string {
  const m = /^claude-([a-z]+)-(\d+)(?:-(\d{1,2}))?(?:-\d{8})?$/.exec(id);
  if (!m) return id;
  return `${m[1]} ${m[2]}${m[3] ? `.${m[3]}` : ''}`;
}

/** "9:00 am EDT" today, "Thursday 9:00 am EDT" within the week, "Dec 9, 9:00 am EST" beyond. */
export function formatWhen(ms: number, nowMs: number, timeZone: string): string {
  const p = zonedParts(ms, timeZone, { hour: 'numeric', minute: '2-digit', hour12: true, timeZoneName: 'short', weekday: 'long', month: 'short', day: 'numeric' });
  const clock = `${p.hour}:${p.minute} ${(p.dayPeriod ?? '').toLowerCase()} ${p.timeZoneName ?? ''}`.trim();
  const sameDay = (a: number, b: number): boolean => {
    const x = zonedParts(a, timeZone, { year: 'numeric', month: 'numeric', day: 'numeric' });
    const y = zonedParts(b, timeZone, { year: 'numeric', month: 'numeric', day: 'numeric' });
    return x.year === y.year && x.month === y.month && x.day === y.day;
  };
  if (sameDay(ms, nowMs)) return clock;
  if (ms - nowMs < 6 * 86_400_000 && ms > nowMs) return `${p.weekday} ${clock}`;
  return `${p.month} ${p.day}, ${clock}`;
}

/** "9:00am" for the statusline, where space is short. */
export function formatShortTime(ms: number, timeZone: string): string {
  const p = zonedParts(ms, timeZone, { hour: 'numeric', minute: '2-digit', hour12: true });
  return `${p.hour}:${p.minute}${(p.dayPeriod ?? '').toLowerCase()}`;
}

/** "42m", "3h", "2d": how long someone has been idle. */
export function formatIdle(ms: number): string {
  const m = Math.round(ms / 60_000);
  if (m < 60) return `${m}m`;
  const h = Math.round(m / 60);
  return h < 48 ? `${h}h` : `${Math.round(h / 24)}d`;
}
