import type { ExitTaker } from '../walls/ports.js';
import type { ExitDeps } from './deps.js';
import { cancelScheduled, decided } from './later.js';
import { parseCapWords } from '../../core/overnight/night-job.js';

/**
 * The scheduler's job kind exit 3 and the picker's Queue used before overnight jobs were route nodes; one still in a
 * store is turned into a job route when it comes due (musher/app.ts).
 */
export const OVERNIGHT_KIND = 'overnight';

/**
 * 3 — run overnight on the batch tier: the session becomes an overnight job (musher/engine/night-jobs.ts), sized and
 * capped first, whose node resumes this session headless in its own worktree in the window. Over its cap it is refused
 * with its band, and nothing is queued.
 */
export function overnightExit(d: ExitDeps): ExitTaker {
  return {
    take: async (wall, arg) => {
      if (!wall.context.overnight) return { ok: false, line: 'the policy has no overnight window' };
      if (!d.nightJobs) return { ok: false, line: 'this musher makes no overnight jobs' };
      const cap = arg ? parseCapWords(arg) : null;
      if (cap && !cap.ok) return { ok: false, line: cap.error };
      const made = await d.nightJobs.atWall(wall, cap ? cap.capMicros : null);
      if (!made.ok) return { ok: false, line: made.line };
      d.scheduler.cancelForWall(wall.wallId, 'replaced by an overnight run');
      d.nightJobs.cancelForWall(wall.wallId, 'replaced by a new overnight job at the same wall', made.job);
      return {
        ok: true,
        outcome: {
          ...decided(d, wall),
          exit: 'overnight',
          result: 'scheduled',
          startMs: made.window.startMs,
          endMs: made.window.endMs,
          job: made.job,
          lowMicros: Math.round(made.band.lowUsd * 1_000_000),
          highMicros: Math.round(made.band.highUsd * 1_000_000),
          capMicros: made.capMicros,
        },
      };
    },
    cancel: (wall) => {
      const jobs = d.nightJobs?.cancelForWall(wall.wallId, 'cancelled at the prompt (/sled cancel)') ?? [];
      return cancelScheduled(d, wall) || jobs.length > 0;
    },
  };
}
