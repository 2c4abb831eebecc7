import { builtInHarness } from '../../harnesses/registry.js';
import type { ExitTaker } from '../walls/ports.js';
import type { ExitDeps } from './deps.js';
import { cancelScheduled, decided, runTime, scheduleResume } from './later.js';

/**
 * 2 — hold until the reset. Claude Code continues by itself at the reset (autoContinueAtUsageLimit, on by default),
 * so a plain hold only records it. A moved hold (`/sled 2 +2h`) is sleds' to run: Claude Code's own continue at the
 * reset is blocked and sleds resumes the session at the chosen time, in its pane if it still has one. Codex has no
 * continue of its own: sleds runs it.
 */
export function holdExit(d: ExitDeps): ExitTaker {
  return {
    take: async (wall, arg) => {
      const t = runTime(d, wall, arg);
      if ('error' in t) return { ok: false, line: t.error };
      const harness = builtInHarness(wall.harness);
      if (!arg && harness.continuesItselfAtReset) {
        d.scheduler.cancelForWall(wall.wallId, 'replaced by a hold');
        return { ok: true, outcome: { ...decided(d, wall), exit: 'hold', result: 'held', resumesAtMs: t.atMs, resumedBy: 'harness', harnessName: harness.displayName, ownContinueHeldBack: false } };
      }
      scheduleResume(d, wall, 'hold', t.atMs, 'pane-else-headless');
      return {
        ok: true,
        outcome: { ...decided(d, wall), exit: 'hold', result: 'scheduled', resumesAtMs: t.atMs, resumedBy: 'sleds', harnessName: harness.displayName, ownContinueHeldBack: harness.continuesItselfAtReset },
      };
    },
    // A plain hold schedules nothing: cancelling it just reopens the wall.
    cancel: (wall) => cancelScheduled(d, wall) || wall.choice === 'hold',
  };
}
