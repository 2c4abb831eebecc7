import { formatWhen } from '../../core/exits/words.js';
import type { WallRow } from '../store/wall-book.js';
import type { TakeResult } from '../walls/ports.js';
import type { ExitDeps, ScheduledJob } from './deps.js';

/** When a hold or defer runs: the time the user gave, else the reset. Null with a reason when neither is known. */
export function runTime(d: ExitDeps, wall: WallRow, arg: string | null): { atMs: number } | { error: string } {
  const now = d.clock.now();
  if (arg) {
    const when = d.parseWhen(arg, now, d.timeZone);
    if (!when.ok) return { error: when.error };
    if (when.atMs <= now) return { error: `${arg} is in the past — give a later time, e.g. +2h` };
    return { atMs: when.atMs };
  }
  if (wall.resetsAtMs === null) return { error: 'the reset time is not known — give a time, e.g. /sled 6 +2h' };
  return { atMs: wall.resetsAtMs };
}

export function scheduleLater(d: ExitDeps, wall: WallRow, kind: ScheduledJob['kind'], atMs: number, payload: Record<string, unknown>): string {
  d.scheduler.cancelForWall(wall.wallId);
  return d.scheduler.schedule({ kind, wallId: wall.wallId, sessionId: wall.sessionId, runAtMs: atMs, payload });
}

export function when(d: ExitDeps, atMs: number): string {
  return formatWhen(atMs, d.clock.now(), d.timeZone);
}

export function cancelLater(d: ExitDeps, wall: WallRow): boolean {
  return d.scheduler.cancelForWall(wall.wallId) > 0;
}

export type { TakeResult };
