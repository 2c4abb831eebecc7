import type { AllowanceCaps, Policy, WorthLevel } from './schema.js';
import { addDays, isValidTimeZone, localDateTime, zonedTimeToEpoch } from '../zoned-time.js';

/** What the wall card and the exits ask of the policy. Pure. */

export function amberAt(policy: Policy): number {
  return policy.amberAt;
}

/** The levels, highest first. */
export function worthLevels(policy: Policy): WorthLevel[] {
  return policy.worth.levels;
}

export function isWorthLevel(policy: Policy, name: string): boolean {
  return policy.worth.levels.some((l) => l.name === name);
}

/** The seat's platform-key allowance: its own caps where the policy names them, else the default's. */
export function allowanceFor(policy: Policy, seat: string | null): AllowanceCaps {
  const base = policy.allowance.default;
  const own = seat === null ? undefined : policy.allowance.seats[seat.toLowerCase()];
  return {
    perDayMicros: own?.perDayMicros !== undefined ? own.perDayMicros : base.perDayMicros,
    perWeekMicros: own?.perWeekMicros !== undefined ? own.perWeekMicros : base.perWeekMicros,
  };
}

/** `five_hour` matches `five_hour`; `seven_day_*` matches `seven_day_opus`; `*` matches anything. */
export function matchesPattern(pattern: string, value: string): boolean {
  return pattern.endsWith('*') ? value.startsWith(pattern.slice(0, -1)) : pattern === value;
}

/** The cheaper step for a model: an exact entry first, else the longest matching `prefix*`; null when none. */
export function cheaperModel(policy: Policy, model: string): string | null {
  const exact = policy.cheaper.find((s) => !s.pattern.endsWith('*') && s.pattern === model);
  if (exact) return exact.model;
  let best: { length: number; model: string | null } | null = null;
  for (const s of policy.cheaper) {
    if (!s.pattern.endsWith('*') || !matchesPattern(s.pattern, model)) continue;
    if (best === null || s.pattern.length > best.length) best = { length: s.pattern.length, model: s.model };
  }
  return best?.model ?? null;
}

export interface TimeSpan {
  startMs: number;
  endMs: number;
}

/**
 * The overnight window now in progress, else the next one; null when the policy has none. A window whose end is
 * not after its start (22:00–06:00) crosses midnight and ends the next day. The window's own `time_zone` wins over
 * the one passed in (musher's); an unknown zone counts as UTC.
 */
export function nextOvernightWindow(policy: Policy, nowMs: number, timeZone: string): TimeSpan | null {
  const w = policy.overnight;
  if (!w) return null;
  const candidate = w.timeZone ?? timeZone;
  const zone = isValidTimeZone(candidate) ? candidate : 'UTC';
  const today = localDateTime(nowMs, zone);
  const crosses = w.toMinute <= w.fromMinute;
  // Yesterday's window may still be running (it is 03:00 and the window is 22:00–06:00).
  for (const offset of [-1, 0, 1]) {
    const startDay = addDays(today.year, today.month, today.day, offset);
    const endDay = addDays(startDay.year, startDay.month, startDay.day, crosses ? 1 : 0);
    const endMs = zonedTimeToEpoch(endDay.year, endDay.month, endDay.day, w.toMinute, zone);
    if (endMs > nowMs) return { startMs: zonedTimeToEpoch(startDay.year, startDay.month, startDay.day, w.fromMinute, zone), endMs };
  }
  // Unreachable: tomorrow's window always ends after now.
  return null;
}
