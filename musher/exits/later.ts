import { parseWhen } from '../../core/when.js';
import { CONTINUE_PROMPT, type ResumeJob } from '../../harnesses/resume-plan.js';
import type { WallRow } from '../store/wall-book.js';
import type { ExitDeps } from './deps.js';

/** When a hold or defer runs: the time the user gave, else the reset. */
export function runTime(d: ExitDeps, wall: WallRow, arg: string | null): { atMs: number } | { error: string } {
  const now = d.clock.now();
  if (arg) {
    const when = parseWhen(arg, now, d.timeZone);
    if (!when.ok) return { error: when.error };
    if (when.atMs <= now) return { error: `${arg} is in the past — give a later time, e.g. +2h` };
    return { atMs: when.atMs };
  }
  if (wall.resetsAtMs === null) return { error: 'the reset time is not known — give a time, e.g. /sled 6 +2h' };
  return { atMs: wall.resetsAtMs };
}

/** Replaces whatever the wall had scheduled with one resume of its session at `atMs`. */
export function scheduleResume(d: ExitDeps, wall: WallRow, kind: 'hold' | 'defer', atMs: number, where: ResumeJob['where']): void {
  d.scheduler.cancelForWall(wall.wallId, 'replaced by a new choice at the wall');
  const payload: ResumeJob = { harness: wall.harness, sessionId: wall.sessionId, cwd: d.sessionCwd(wall.sessionId) ?? process.cwd(), model: null, prompt: CONTINUE_PROMPT, where };
  d.scheduler.schedule({ kind, wallId: wall.wallId, sessionId: wall.sessionId, runAt: atMs, payload });
}

/** The facts every outcome carries: which wall, when it was taken, the zone its times are told in. */
export function decided(d: ExitDeps, wall: WallRow): { wallId: string; atMs: number; timeZone: string } {
  return { wallId: wall.wallId, atMs: d.clock.now(), timeZone: d.timeZone };
}

export function cancelScheduled(d: ExitDeps, wall: WallRow): boolean {
  return d.scheduler.cancelForWall(wall.wallId, 'cancelled at the prompt (/sled cancel)').length > 0;
}
