import type { ExitTaker } from '../walls/ports.js';
import type { ExitDeps } from './deps.js';
import { continueOnKey } from './on-key.js';

/** 4 — the cheaper model on the platform key, for the rest of the session. */
export function switchModelExit(d: ExitDeps): ExitTaker {
  return {
    take: async (wall) => {
      const model = wall.context.cheaper?.model;
      if (!model) return { ok: false, line: 'the policy names no cheaper model for this session' };
      return continueOnKey(d, wall, model);
    },
  };
}
