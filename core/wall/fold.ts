/**
 * Whether a limit signal is another sight of a wall already open, so the two fold into one wall (issue 12): the
 * StopFailure hook's generic text ("You've hit your limit · resets 9:24pm (UTC)": no window, the reset rounded to
 * the minute) and the transcript's record (exact reset, `five_hour`) are one limit. Pure: the keeper and the store
 * ask it the same question.
 */

/** Claude Code prints the reset in whole minutes: the exact one is up to a minute later. */
export const RESET_ROUNDING_MS = 60_000;
/** Sources' clocks and roundings differ by a few seconds more. */
const SLACK_MS = 30_000;

export interface LimitSighting {
  window: string | null;
  resetsAtMs: number | null;
}

/** Same session is the caller's part; here: the window (or one side unnamed) and the reset (or one side unknown). */
export function sameLimit(wall: LimitSighting, signal: LimitSighting): boolean {
  const windowMatches = wall.window === null || signal.window === null || wall.window === signal.window;
  if (!windowMatches) return false;
  if (wall.resetsAtMs === null || signal.resetsAtMs === null) return true;
  return Math.abs(wall.resetsAtMs - signal.resetsAtMs) <= RESET_ROUNDING_MS + SLACK_MS;
}

/**
 * What the wall becomes once a folded signal is seen: the precise reset wins over a rounded one, a named window over
 * none. Null fields: nothing to change.
 */
export function refinedBy(
  wall: LimitSighting,
  signal: LimitSighting & { precise: boolean },
): { window: string | null; resetsAtMs: number | null } {
  const window = wall.window === null && signal.window !== null ? signal.window : null;
  const resetsAtMs =
    signal.resetsAtMs !== null && signal.resetsAtMs !== wall.resetsAtMs && (signal.precise || wall.resetsAtMs === null) ? signal.resetsAtMs : null;
  return { window, resetsAtMs };
}
