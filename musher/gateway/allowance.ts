import {
  allowanceRemaining,
  checkAllowance,
  localDayStart,
  localWeekStart,
  type Allowance,
  type AllowanceSpend,
  type AllowanceVerdict,
  type UtcOffset,
} from '../../core/gateway/allowance.js';
import type { PlatformKeyStore } from '../store/platform-key.js';

export type { Allowance } from '../../core/gateway/allowance.js';

/** musher's own zone: the offset the process's local time has at an instant. */
export const localUtcOffset: UtcOffset = (ms) => -new Date(ms).getTimezoneOffset();

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

/** The verdict before a request is forwarded: refused once the day's or the week's cap is spent. */
export function allowanceVerdict(
  store: PlatformKeyStore,
  seat: string,
  allowance: Allowance,
  nowMs: number,
  offset: UtcOffset = localUtcOffset,
): AllowanceVerdict {
  if (allowance.perDayMicros === null && allowance.perWeekMicros === null) return { ok: true };
  return checkAllowance(allowance, seatSpend(store, seat, nowMs, offset));
}
