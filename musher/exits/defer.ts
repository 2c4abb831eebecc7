import type { ExitTaker } from '../walls/ports.js';
import type { ExitDeps } from './deps.js';
import { cancelScheduled, decided, runTime, scheduleResume } from './later.js';

/** 6 — defer to the reset: the session runs itself headless then, on the same model; the result shows afterwards. */
export function deferExit(d: ExitDeps): ExitTaker {
  return {
    take: async (wall, arg) => {
      const t = runTime(d, wall, arg);
      if ('error' in t) return { ok: false, line: t.error };
      scheduleResume(d, wall, 'defer', t.atMs, 'headless');
      return { ok: true, outcome: { ...decided(d, wall), exit: 'defer', result: 'scheduled', runsAtMs: t.atMs } };
    },
    cancel: (wall) => cancelScheduled(d, wall),
  };
}
