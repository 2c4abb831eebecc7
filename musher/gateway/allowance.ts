import {
  allowanceRemaining,
  localDayStart,
  localWeekStart,
  type Allowance,
  type AllowanceSpend,
  type UtcOffset,
} from '../../core/gateway/allowance.js';
import { zoneOffsetMinutes } from '../../core/zoned-time.js';
import { admit, type AdmissionVerdict } from '../../core/gateway/reservation.js';
import type { PlatformKeyStore } from '../store/platform-key.js';

export type { Allowance } from '../../core/gateway/allowance.js';

/** The process's zone: the offset its local time has at an instant (the default where no zone is given). */
export const localUtcOffset: UtcOffset = (ms) => -new Date(ms).getTimezoneOffset();

/** A named zone's offset at an instant: musher passes `musher.timeZone`, so "today" is the day the user sees. */
export function zoneUtcOffset(timeZone: string): UtcOffset {
  return (ms) => zoneOffsetMinutes(ms, timeZone);
}

/**
 * Until the workspace policy supplies the allowance, every seat is uncapped.
 * LEAD: replace with the policy module's per-seat allowance when wiring it.
 */
export const noAllowance = (_seat: string): Allowance => ({ perDayMicros: null, perWeekMicros: null });

/** The seat's key spend today and this week (local calendar, week from Monday), priced responses only. */
export function seatSpend(store: PlatformKeyStore, seat: string, nowMs: number, offset: UtcOffset = localUtcOffset): AllowanceSpend {
  const end = Number.MAX_SAFE_INTEGER;
  return {
    dayMicros: store.seatSpendMicros(seat, localDayStart(nowMs, offset), end),
    weekMicros: store.seatSpendMicros(seat, localWeekStart(nowMs, offset), end),
  };
}

/** What the seat may still spend on the key ("allowance left $38.00" on the wall card); null where uncapped. */
export function allowanceLeft(
  store: PlatformKeyStore,
  seat: string,
  allowance: Allowance,
  nowMs: number,
  offset: UtcOffset = localUtcOffset,
): { dayMicros: number | null; weekMicros: number | null } {
  if (allowance.perDayMicros === null && allowance.perWeekMicros === null) return { dayMicros: null, weekMicros: null };
  return allowanceRemaining(allowance, seatSpend(store, seat, nowMs, offset));
}

/** Whether the seat has a cap at all (an uncapped seat's requests are neither estimated nor reserved). */
export function isCapped(allowance: Allowance): boolean {
  return allowance.perDayMicros !== null || allowance.perWeekMicros !== null;
}

/**
 * The gateway's verdict before a metered request goes upstream: recorded spend plus what the seat's requests under
 * way hold (`heldMicros`), against each cap (core/gateway/reservation.ts).
 */
export function admissionVerdict(
  store: PlatformKeyStore,
  heldMicros: number,
  seat: string,
  allowance: Allowance,
  nowMs: number,
  offset: UtcOffset = localUtcOffset,
): AdmissionVerdict {
  if (!isCapped(allowance)) return { ok: true };
  return admit(allowance, seatSpend(store, seat, nowMs, offset), heldMicros);
}
