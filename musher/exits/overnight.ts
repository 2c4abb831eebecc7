import { formatShortTime } from '../../core/exits/words.js';
import type { ExitTaker } from '../walls/ports.js';
import type { ExitDeps } from './deps.js';
import { cancelLater, scheduleLater } from './later.js';

/**
 * 3 — run overnight on the batch tier. This records the offer and queues the job for the window's start; the
 * overnight runner (its own issue) picks queued jobs up. Until it exists the job says so when its time comes.
 */
export function overnightExit(d: ExitDeps): ExitTaker {
  return {
    take: async (wall) => {
      const window = wall.context.overnight;
      if (!window) return { ok: false, line: 'the policy has no overnight window' };
      scheduleLater(d, wall, 'overnight', window.startMs, { endMs: window.endMs });
      return {
        ok: true,
        line: `Queued for tonight's window (${formatShortTime(window.startMs, d.timeZone)}–${formatShortTime(window.endMs, d.timeZone)}) on the batch tier at ½ price; \`sleds jobs\` shows it. /sled cancel undoes it.`,
      };
    },
    cancel: (wall) => cancelLater(d, wall),
  };
}
