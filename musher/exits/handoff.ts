import type { ExitTaker } from '../walls/ports.js';
import type { ExitDeps } from './deps.js';
import { decided } from './later.js';

/** 5 — hand off to a teammate: the wall's snapshot sealed to them and sent over the repository's remote. */
export function handoffExit(d: ExitDeps): ExitTaker {
  return {
    take: async (wall, arg) => {
      if (!d.handoff) return { ok: false, line: 'hand-offs are not set up on this machine — run `sleds keys init` and commit the roster entry it prints' };
      try {
        const sent = await d.handoff.send(wall, d.sessionCwd(wall.sessionId), arg, wall.context.teammate?.handle ?? null);
        const handedOff = (words: string) => ({ ...decided(d, wall), exit: 'handoff', result: 'handed-off', handoffId: sent.id, words }) as const;
        return { ok: true, outcome: handedOff(sent.line), after: sent.after, settled: () => handedOff(sent.settled()) };
      } catch (e) {
        return { ok: false, line: `hand-off not sent: ${(e as Error).message}` };
      }
    },
  };
}
