/**
 * A session's burn: API-equivalent dollars per hour of active work, from its priced records. Gaps longer than
 * IDLE_GAP_MS are waiting (for the user, for a limit), not work, and do not dilute the rate. Pure.
 */
export const IDLE_GAP_MS = 10 * 60_000;
/** Rates over less active time than this are too noisy to show. */
const MIN_ACTIVE_MS = 5 * 60_000;
const WINDOW_ACTIVE_MS = 60 * 60_000;

export function burnPerHourMicros(records: ReadonlyArray<{ ts: number; costMicros: number }>): number | null {
  if (records.length < 2) return null;
  // Walk back from the latest record until an hour of active time is covered.
  let active = 0;
  let cost = records[records.length - 1]!.costMicros;
  for (let i = records.length - 1; i > 0 && active < WINDOW_ACTIVE_MS; i--) {
    const gap = records[i]!.ts - records[i - 1]!.ts;
    if (gap <= IDLE_GAP_MS) active += gap;
    cost += records[i - 1]!.costMicros;
  }
  if (active < MIN_ACTIVE_MS) return null;
  return Math.round((cost * 3_600_000) / active);
}
