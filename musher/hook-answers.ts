import type { HookAnswer } from '../core/wire.js';
import { COMMON_HOOK_DIALECT, type HookDialect } from '../harnesses/port.js';
import { harnessById } from '../harnesses/registry.js';

/** The answers a hook prints, in each harness's dialect (harnesses/<id>/index.ts `hooks`). */

export const CARRY_ON: HookAnswer = { stdout: '', exitCode: 0 };

/**
 * The dialect of the harness a hook said it runs in (`sleds hook --harness <id>`). A name sleds does not know gets
 * the bare answers every harness accepts (a block without extra fields), not another harness's dialect.
 */
export function dialectOf(harness: string): HookDialect {
  const found = harnessById(harness);
  return found.ok ? found.adapter.hooks : COMMON_HOOK_DIALECT;
}

/** Blocks the typed prompt and answers it in place (no model request is made). */
export function blockWith(reason: string, harness: string): HookAnswer {
  return dialectOf(harness).block(reason);
}

/** Lets the prompt through with a line shown to the user, where the harness shows one (Claude Code: "UserPromptSubmit says: …"). */
export function carryOnWithNote(note: string, harness: string): HookAnswer {
  return dialectOf(harness).carryOnWithNote(note);
}
