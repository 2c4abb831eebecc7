import type { HookAnswer } from '../../core/wire.js';

/**
 * Lets the prompt through with context for the model (and, in Claude Code, a line for the person). Both harnesses
 * put `additionalContext` beside the prompt (Claude Code as a system message, Codex as a developer message; facts
 * §1.4 of each). Codex rejects fields it does not know, so it gets the hook-specific part alone.
 */
export function carryOnWithContext(context: string, note: string | null, harness: string): HookAnswer {
  const specific = { hookEventName: 'UserPromptSubmit', additionalContext: context };
  const answer = harness === 'codex' || note === null ? { hookSpecificOutput: specific } : { systemMessage: note, hookSpecificOutput: specific };
  return { stdout: JSON.stringify(answer), exitCode: 0 };
}
