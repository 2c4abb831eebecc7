import type { HookAnswer } from '../core/wire.js';

/** The answers a hook prints, in each harness's dialect. */

export const CARRY_ON: HookAnswer = { stdout: '', exitCode: 0 };

/**
 * Blocks the typed prompt and answers it in place. Claude Code gets `suppressOriginalPrompt` so the prompt is not
 * echoed; Codex validates hook output strictly and fails the hook on any field it does not know (facts, measured
 * on 0.169.0), so it gets the bare decision.
 */
export function blockWith(reason: string, harness: string): HookAnswer {
  const answer =
    harness === 'codex'
      ? { decision: 'block', reason }
      : { decision: 'block', reason, hookSpecificOutput: { hookEventName: 'UserPromptSubmit', suppressOriginalPrompt: true } };
  return { stdout: JSON.stringify(answer), exitCode: 0 };
}

/**
 * Lets the prompt through with a line shown to the user (Claude Code: "UserPromptSubmit says: …"). Codex rejects
 * fields it does not know, so there the prompt just goes on.
 */
export function carryOnWithNote(note: string, harness: string): HookAnswer {
  if (harness === 'codex') return CARRY_ON;
  return { stdout: JSON.stringify({ systemMessage: note }), exitCode: 0 };
}
