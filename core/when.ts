/**
 * When to resume: `/sled 2 +2h`, `/sled 6 tomorrow 9am`, an ISO time. Pure: the clock and the user's time zone are
 * passed in; wall-clock times are resolved with Intl alone, so a DST change on the way is handled.
 *
 * - `+90m`, `+2h`, `+1h30m`, `+1d` (also `in 2h`): hours and minutes are elapsed time; days are calendar days
 *   (`+1d` at 9pm is 9pm tomorrow, also across a DST change).
 * - `15:40`, `3:40pm`, `9am`, `noon`, `midnight`: the next time the clock shows it, in the time zone.
 * - `tomorrow 9am`, `today 5pm`.
 * - ISO 8601 with a time: `2026-03-08T09:00`, `…T09:00:00Z`, `…T09:00+02:00`, `2026-03-08 09:00`. Without an offset
 *   it is read in the time zone.
 *
 * A wall time that does not exist (the hour skipped at spring-forward) moves forward by the gap, and one that
 * exists twice (the hour repeated at fall-back) is the earlier one: Temporal's "compatible" disambiguation.
 */
import { addDays as addCalendarDays, isValidTimeZone, wallClock, zonedInstants } from './zoned-time.js';

export type WhenResult = { ok: true; atMs: number } | { ok: false; error: string };

const EXAMPLES = 'e.g. +2h, +1h30m, 15:40, 3:40pm, tomorrow 9am or 2026-03-08T09:00';
const MINUTE = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;

const fail = (error: string): WhenResult => ({ ok: false, error });

export function parseWhen(text: string, nowMs: number, timeZone: string): WhenResult {
  const raw = text.trim();
  const input = raw.toLowerCase().replace(/\s+/g, ' ');
  if (!input) return fail(`no time given — ${EXAMPLES}`);
  const zone = zoneOf(timeZone);
  if (!zone) return fail(`unknown time zone '${timeZone}' — set TZ to an IANA name such as America/New_York`);

  if (input === 'now') return { ok: true, atMs: nowMs };

  const relative = /^(?:\+|in )\s*(.*)$/.exec(input);
  if (relative) return parseRelative(relative[1]!, raw, nowMs, zone);

  if (/^\d{4}-\d{2}-\d{2}/.test(input)) return parseIso(raw, nowMs, zone);

  const day = /^(today|tomorrow)(?: (.*))?$/.exec(input);
  if (day) {
    if (!day[2]) return fail(`'${raw}' needs a time of day — e.g. ${day[1]} 9am`);
    const clock = parseClock(day[2]);
    if (!clock) return fail(`can't read '${day[2]}' as a time of day — e.g. ${day[1]} 9am or ${day[1]} 15:40`);
    const today = zone.wall(nowMs);
    const date = addDays(today, day[1] === 'tomorrow' ? 1 : 0);
    const atMs = zone.toUtc({ ...date, hour: clock.hour, minute: clock.minute, second: 0, ms: 0 });
    if (atMs <= nowMs) return fail(`'${raw}' has already passed — e.g. tomorrow ${day[2]} or +2h`);
    return { ok: true, atMs };
  }

  const clock = parseClock(input);
  if (clock) {
    // The next instant the clock shows it: on the fall-back night 1:30am comes twice, and the second still counts.
    const today = zone.wall(nowMs);
    for (const days of [0, 1, 2]) {
      const at = zone.instants({ ...addDays(today, days), hour: clock.hour, minute: clock.minute, second: 0, ms: 0 }).find((u) => u > nowMs);
      if (at !== undefined) return { ok: true, atMs: at };
    }
  }
  return fail(`can't read '${raw}' as a time — ${EXAMPLES}`);
}

function parseRelative(spec: string, raw: string, nowMs: number, zone: Zone): WhenResult {
  const m = /^(?:(\d+) ?d(?:ays?)?)? ?(?:(\d+(?:\.\d+)?) ?h(?:ours?|rs?)?)? ?(?:(\d+) ?m(?:in(?:utes?|s)?)?)?$/.exec(spec);
  if (!m || (m[1] === undefined && m[2] === undefined && m[3] === undefined)) {
    return fail(`can't read '${raw}' as a span — e.g. +90m, +2h, +1h30m or +1d`);
  }
  const days = Number(m[1] ?? 0);
  const elapsed = Math.round(Number(m[2] ?? 0) * HOUR) + Number(m[3] ?? 0) * MINUTE;
  if (days === 0 && elapsed === 0) return fail(`'${raw}' is no time from now — e.g. +2h`);
  if (days > 366 || elapsed > 366 * DAY) return fail(`'${raw}' is over a year away — give a nearer time, e.g. +2h`);
  let atMs = nowMs;
  if (days > 0) {
    const w = zone.wall(nowMs);
    atMs = zone.toUtc({ ...w, ...addDays(w, days) });
  }
  return { ok: true, atMs: atMs + elapsed };
}

function parseIso(raw: string, nowMs: number, zone: Zone): WhenResult {
  const m = /^(\d{4})-(\d{2})-(\d{2})(?:[tT ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?\s*(z|[+-]\d{2}(?::?\d{2})?)?)?$/i.exec(raw.trim());
  if (!m) return fail(`can't read '${raw}' as an ISO time — e.g. 2026-03-08T09:00 or 2026-03-08T09:00-05:00`);
  if (m[4] === undefined) return fail(`'${raw}' has no time of day — e.g. ${raw.trim()}T09:00`);
  const f = {
    year: Number(m[1]),
    month: Number(m[2]),
    day: Number(m[3]),
    hour: Number(m[4]),
    minute: Number(m[5]),
    second: Number(m[6] ?? 0),
    ms: Math.floor(Number(`0.${m[7] ?? '0'}`) * 1000),
  };
  const check = new Date(Date.UTC(f.year, f.month - 1, f.day));
  const validDate = check.getUTCFullYear() === f.year && check.getUTCMonth() === f.month - 1 && check.getUTCDate() === f.day;
  if (!validDate || f.hour > 23 || f.minute > 59 || f.second > 59) return fail(`'${raw}' is not a real date and time — e.g. 2026-03-08T09:00`);
  let atMs: number;
  const offset = m[8];
  if (offset === undefined) atMs = zone.toUtc(f);
  else if (offset.toLowerCase() === 'z') atMs = Date.UTC(f.year, f.month - 1, f.day, f.hour, f.minute, f.second, f.ms);
  else {
    const o = /^([+-])(\d{2}):?(\d{2})?$/.exec(offset)!;
    const minutes = (Number(o[2]) * 60 + Number(o[3] ?? 0)) * (o[1] === '-' ? -1 : 1);
    if (Math.abs(minutes) > 18 * 60) return fail(`'${offset}' is not a UTC offset — e.g. -05:00`);
    atMs = Date.UTC(f.year, f.month - 1, f.day, f.hour, f.minute, f.second, f.ms) - minutes * MINUTE;
  }
  if (atMs <= nowMs) return fail(`'${raw}' is in the past — give a later time, e.g. +2h`);
  return { ok: true, atMs };
}

/** "15:40", "3:40pm", "3:40 p.m.", "9am", "noon", "midnight" → hour and minute of a 24-hour clock. */
function parseClock(s: string): { hour: number; minute: number } | null {
  if (s === 'noon') return { hour: 12, minute: 0 };
  if (s === 'midnight') return { hour: 0, minute: 0 };
  const m = /^(\d{1,2})(?:[:.h](\d{2}))? ?(a|p|am|pm|a\.m\.|p\.m\.)?$/.exec(s);
  if (!m) return null;
  let hour = Number(m[1]);
  const minute = Number(m[2] ?? 0);
  if (minute > 59) return null;
  if (m[3]) {
    if (hour < 1 || hour > 12) return null;
    hour = (hour % 12) + (m[3].startsWith('p') ? 12 : 0);
  } else if (m[2] === undefined || hour > 23) {
    return null; // a bare "9" is ambiguous; "25:00" is no time
  }
  return { hour, minute };
}

interface WallDate {
  year: number;
  month: number;
  day: number;
}
interface WallTime extends WallDate {
  hour: number;
  minute: number;
  second: number;
  ms: number;
}

function addDays(d: WallDate, days: number): WallDate {
  return addCalendarDays(d.year, d.month, d.day, days);
}

interface Zone {
  /** The wall-clock reading at an instant. */
  wall(utcMs: number): WallTime;
  /** The instant a wall-clock reading names (gap: moved forward; overlap: the earlier). */
  toUtc(w: WallTime): number;
  /** Every instant it names, earliest first: two at fall-back, one (moved forward) in the spring-forward gap. */
  instants(w: WallTime): number[];
}

/** The zone's clock, or null for a name Intl does not know. */
function zoneOf(timeZone: string): Zone | null {
  if (!isValidTimeZone(timeZone)) return null;
  const instants = (w: WallTime): number[] => zonedInstants(w, timeZone);
  return { wall: (utcMs) => wallClock(utcMs, timeZone), instants, toUtc: (w) => instants(w)[0]! };
}
