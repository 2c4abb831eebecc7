/**
 * The per-seat allowance on the platform key: arithmetic only. Pure: the time and the zone's UTC offset are passed
 * in. A day is the seat's local calendar day; a week starts on Monday at local midnight.
 */
import { formatUsd } from '../format.js';

export interface Allowance {
  /** Null = no cap. */
  perDayMicros: number | null;
  perWeekMicros: number | null;
}

/** Minutes east of UTC in force at an instant (musher passes its zone's: musher/gateway/allowance.ts zoneUtcOffset). */
export type UtcOffset = (ms: number) => number;

export interface AllowanceSpend {
  dayMicros: number;
  weekMicros: number;
}

export type AllowanceVerdict =
  | { ok: true }
  | { ok: false; period: 'today' | 'this week'; capMicros: number; spentMicros: number };

const DAY_MS = 86_400_000;
const MINUTE_MS = 60_000;

/** Local wall-clock `localMs` (ms since 1970 in local time) back to an instant, offset looked up where it lands. */
function toInstant(localMs: number, offset: UtcOffset, hintMs: number): number {
  const guess = localMs - offset(hintMs) * MINUTE_MS;
  // Across a DST change the offset at the result differs from the one at `hintMs`: use the one in force there.
  return localMs - offset(guess) * MINUTE_MS;
}

function localDayNumber(ms: number, offset: UtcOffset): number {
  return Math.floor((ms + offset(ms) * MINUTE_MS) / DAY_MS);
}

/** The instant the local day holding `nowMs` began. */
export function localDayStart(nowMs: number, offset: UtcOffset): number {
  return toInstant(localDayNumber(nowMs, offset) * DAY_MS, offset, nowMs);
}

/** The instant the local week (Monday 00:00) holding `nowMs` began. */
export function localWeekStart(nowMs: number, offset: UtcOffset): number {
  const day = localDayNumber(nowMs, offset);
  const sinceMonday = (((day + 3) % 7) + 7) % 7; // 1970-01-01 was a Thursday
  return toInstant((day - sinceMonday) * DAY_MS, offset, nowMs);
}

/** Refused when the week's cap is spent (the wider window, so the message says when it really renews), else the day's. */
export function checkAllowance(allowance: Allowance, spent: AllowanceSpend): AllowanceVerdict {
  if (allowance.perWeekMicros !== null && spent.weekMicros >= allowance.perWeekMicros) {
    return { ok: false, period: 'this week', capMicros: allowance.perWeekMicros, spentMicros: spent.weekMicros };
  }
  if (allowance.perDayMicros !== null && spent.dayMicros >= allowance.perDayMicros) {
    return { ok: false, period: 'today', capMicros: allowance.perDayMicros, spentMicros: spent.dayMicros };
  }
  return { ok: true };
}

/** What is left of each cap (never below 0); null where there is no cap. */
export function allowanceRemaining(allowance: Allowance, spent: AllowanceSpend): { dayMicros: number | null; weekMicros: number | null } {
  const left = (cap: number | null, used: number): number | null => (cap === null ? null : Math.max(0, cap - used));
  return { dayMicros: left(allowance.perDayMicros, spent.dayMicros), weekMicros: left(allowance.perWeekMicros, spent.weekMicros) };
}

/** The one line the harness shows: "allowance for dana spent: $40.00 today — it renews at midnight; …". */
export function allowanceRefusalMessage(seat: string, verdict: Extract<AllowanceVerdict, { ok: false }>): string {
  const renews = verdict.period === 'today' ? 'at midnight' : 'on Monday';
  return `allowance for ${seat} spent: ${formatUsd(verdict.capMicros)} ${verdict.period} — it renews ${renews}; type /sled exits for the other ways on`;
}
