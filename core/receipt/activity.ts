/**
 * What a receipt measures from a task's sessions, from their records alone. Pure.
 */

/**
 * A gap between two consecutive model calls longer than this is a wait (for the user's input, for a limit's reset,
 * for a hold or a hand-off), not work, and is not counted. Five minutes: a model call and the tools between two calls
 * take seconds to a couple of minutes; a long test run may be cut short, a coffee break is not counted.
 */
export const ACTIVE_GAP_MS = 5 * 60_000;

/** Active minutes over the model calls' times (any order; several sessions' calls merged): the sum of gaps ≤ ACTIVE_GAP_MS. */
export function activeMinutes(timestamps: readonly number[], gapMs = ACTIVE_GAP_MS): number {
  const ts = [...timestamps].sort((a, b) => a - b);
  let active = 0;
  for (let i = 1; i < ts.length; i++) {
    const gap = ts[i]! - ts[i - 1]!;
    if (gap <= gapMs) active += gap;
  }
  return Math.round(active / 6_000) / 10;
}

/**
 * The files a task changed, from what musher kept of its sessions' PostToolUse events (core/hook-fields.ts: each
 * `{tool, files}`): distinct paths; unknown shapes are skipped.
 */
export function filesTouched(kept: readonly unknown[]): number {
  const files = new Set<string>();
  for (const k of kept) {
    if (typeof k !== 'object' || k === null) continue;
    const list = (k as { files?: unknown }).files;
    if (!Array.isArray(list)) continue;
    for (const f of list) if (typeof f === 'string' && f !== '') files.add(f);
  }
  return files.size;
}
