import type { HookAnswer } from '../../core/wire.js';
import { dialectOf } from '../hook-answers.js';

/**
 * Lets the prompt through with context for the model (and, where the harness shows one, a line for the person). Both
 * harnesses put `additionalContext` beside the prompt (Claude Code as a system message, Codex as a developer message;
 * facts §1.4 of each); each adapter's dialect says which other fields it takes.
 */
export function carryOnWithContext(context: string, note: string | null, harness: string): HookAnswer {
  return dialectOf(harness).carryOnWithContext(context, note);
}
