import type { ExitTaker } from '../walls/ports.js';
import type { ExitDeps } from './deps.js';
import { cancelScheduled, runTime, scheduleResume, when } from './later.js';

/** 6 — defer to the reset: the session runs itself headless then, on the same model; the result shows afterwards. */
export function deferExit(d: ExitDeps): ExitTaker {
  return {
    take: async (wall, arg) => {
      const t = runTime(d, wall, arg);
      if ('error' in t) return { ok: false, line: t.error };
      scheduleResume(d, wall, 'defer', t.atMs, 'headless');
      return {
        ok: true,
        line: `Deferred: this session runs itself headless at ${when(d, t.atMs)} on the same model; the result shows at your next prompt and in \`sleds status\`. /sled cancel undoes it.`,
      };
    },
    cancel: (wall) => cancelScheduled(d, wall),
  };
}
