import type { ExitTaker } from '../walls/ports.js';
import type { ExitDeps } from './deps.js';
import { cancelLater, runTime, scheduleLater, when } from './later.js';

/**
 * 2 — hold until the reset. Claude Code continues by itself at the reset (autoContinueAtUsageLimit, on by default),
 * so a plain hold only records it. A moved hold (`/sled 2 +2h`) is sleds' to run: Claude Code's own continue at the
 * reset is blocked and sleds resumes the session at the chosen time. Codex has no continue of its own: sleds runs it.
 */
export function holdExit(d: ExitDeps): ExitTaker {
  return {
    take: async (wall, arg) => {
      const t = runTime(d, wall, arg);
      if ('error' in t) return { ok: false, line: t.error };
      if (!arg && wall.harness === 'claude-code') {
        return { ok: true, line: `Holding: Claude Code continues by itself at ${when(d, t.atMs)}. Nothing is spent until then.` };
      }
      scheduleLater(d, wall, 'hold', t.atMs, {});
      const blocked = wall.harness === 'claude-code' ? " Claude Code's own continue at the reset is held back." : '';
      return { ok: true, line: `Holding until ${when(d, t.atMs)}; sleds resumes this session then.${blocked} /sled cancel undoes it.` };
    },
    cancel: (wall) => cancelLater(d, wall) || wall.choice === 'hold',
  };
}
