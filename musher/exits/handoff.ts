import type { ExitTaker } from '../walls/ports.js';

/** 5 — hand off to a teammate. Priced here (the teammate from the roster); the sealed transport is its own part. */
export function handoffExit(): ExitTaker {
  return {
    take: async () => ({ ok: false, line: 'hand-off is not available on this machine yet: it needs the roster and seat keys (`sleds keys init`)' }),
  };
}
