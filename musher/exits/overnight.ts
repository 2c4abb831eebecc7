import type { ExitTaker } from '../walls/ports.js';
import type { ExitDeps } from './deps.js';
import { cancelScheduled, decided } from './later.js';

/** The job kind the overnight runner (its own issue) will take; until it exists such a job says so at its time. */
export const OVERNIGHT_KIND = 'overnight';

/** 3 — run overnight on the batch tier: records the offer and queues the job for the window's start. */
export function overnightExit(d: ExitDeps): ExitTaker {
  return {
    take: async (wall) => {
      const window = wall.context.overnight;
      if (!window) return { ok: false, line: 'the policy has no overnight window' };
      d.scheduler.cancelForWall(wall.wallId, 'replaced by an overnight run');
      d.scheduler.schedule({ kind: OVERNIGHT_KIND, wallId: wall.wallId, sessionId: wall.sessionId, runAt: window.startMs, payload: { endMs: window.endMs, harness: wall.harness } });
      return { ok: true, outcome: { ...decided(d, wall), exit: 'overnight', result: 'scheduled', startMs: window.startMs, endMs: window.endMs } };
    },
    cancel: (wall) => cancelScheduled(d, wall),
  };
}
