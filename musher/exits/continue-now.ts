import type { ExitTaker } from '../walls/ports.js';
import type { ExitDeps } from './deps.js';
import { continueOnKey } from './on-key.js';

/** 1 — continue now on the platform key. */
export function continueNowExit(d: ExitDeps): ExitTaker {
  return { take: (wall) => continueOnKey(d, wall, null) };
}
