/**
 * Wall-clock time in an IANA time zone, with Intl only (no libraries, no clock reads). Pure: the same inputs give
 * the same answer; the formatter cache is an optimisation, not state.
 */

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(timeZone, f);
  }
  return f;
}

/** Formatters for `zonedParts`, by zone and options (building one costs far more than using it). */
const partFormatters = new Map<string, Intl.DateTimeFormat>();

/**
 * The named parts of an instant in a zone (`{ hour: '4', minute: '10', dayPeriod: 'PM', … }`), en-US: the one
 * `formatToParts` helper the formatters share. `timeZone` undefined: the runtime's zone.
 */
export function zonedParts(ms: number, timeZone: string | undefined, opts: Intl.DateTimeFormatOptions): Record<string, string> {
  // The runtime's zone is read afresh each time (TZ may change under a process); a named zone's formatter is kept.
  const key = timeZone === undefined ? null : `${timeZone}\u0000${JSON.stringify(opts)}`;
  let f = key === null ? undefined : partFormatters.get(key);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', { ...opts, timeZone });
    if (key !== null) partFormatters.set(key, f);
  }
  const out: Record<string, string> = {};
  for (const p of f.formatToParts(new Date(ms))) out[p.type] = p.value;
  return out;
}

export function isValidTimeZone(timeZone: string): boolean {
  try {
    formatter(timeZone);
    return true;
  } catch {
    // Intl throws a RangeError for a zone it does not know: that is the answer.
    return false;
  }
}

export interface LocalDateTime {
  year: number;
  month: number; // 1–12
  day: number;
  hour: number;
  minute: number;
  second: number;
}

export function localDateTime(ms: number, timeZone: string): LocalDateTime {
  const p: Record<string, number> = {};
  for (const part of formatter(timeZone).formatToParts(new Date(ms))) {
    if (part.type !== 'literal') p[part.type] = Number(part.value);
  }
  return { year: p.year!, month: p.month!, day: p.day!, hour: p.hour! % 24, minute: p.minute!, second: p.second! };
}

/** How far the zone's wall clock is ahead of UTC at `ms` (−4 h for New York in summer). */
export function zoneOffsetMs(ms: number, timeZone: string): number {
  const whole = Math.floor(ms / 1000) * 1000;
  const l = localDateTime(whole, timeZone);
  return Date.UTC(l.year, l.month - 1, l.day, l.hour, l.minute, l.second) - whole;
}

/** A wall-clock reading in a zone, to the millisecond. */
export interface WallClock extends LocalDateTime {
  ms: number;
}

export function wallClock(ms: number, timeZone: string): WallClock {
  return { ...localDateTime(ms, timeZone), ms: ((ms % 1000) + 1000) % 1000 };
}

/**
 * Every instant a wall-clock reading names in a zone, earliest first: two in the autumn hour that happens twice;
 * in the spring gap (a time that never happens) one, moved forward by the gap, so 02:30 on the spring-forward night
 * in New York is 03:30 EDT — the same choice as Temporal's "compatible".
 */
export function zonedInstants(w: WallClock, timeZone: string): number[] {
  const asUtc = Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second, w.ms);
  // The offsets a day either side cover any change near this time (zones change at most once a day).
  const before = zoneOffsetMs(asUtc - 86_400_000, timeZone);
  const after = zoneOffsetMs(asUtc + 86_400_000, timeZone);
  const fits = [...new Set([asUtc - before, asUtc - after])].filter((t) => zoneOffsetMs(t, timeZone) === asUtc - t).sort((a, b) => a - b);
  return fits.length > 0 ? fits : [asUtc - before];
}

/** The instant a wall-clock time happens in a zone: the first of `zonedInstants`. */
export function zonedTimeToEpoch(year: number, month: number, day: number, minuteOfDay: number, timeZone: string): number {
  return zonedInstants({ year, month, day, hour: Math.floor(minuteOfDay / 60), minute: minuteOfDay % 60, second: 0, ms: 0 }, timeZone)[0]!;
}

/** The calendar day `days` after the given one (negative for before), across month and year ends. */
export function addDays(year: number, month: number, day: number, days: number): { year: number; month: number; day: number } {
  const d = new Date(Date.UTC(year, month - 1, day + days));
  return { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate() };
}

/** The instant the calendar day holding `ms` began in a zone (local midnight, or the first instant after a gap). */
export function startOfZonedDay(ms: number, timeZone: string): number {
  const l = localDateTime(ms, timeZone);
  return zonedTimeToEpoch(l.year, l.month, l.day, 0, timeZone);
}

/** Minutes east of UTC a zone is at an instant (+540 for Tokyo, −240 for New York in summer). */
export function zoneOffsetMinutes(ms: number, timeZone: string): number {
  return Math.round(zoneOffsetMs(ms, timeZone) / 60_000);
}
