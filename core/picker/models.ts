
/** Which models the picker offers on each harness. Pure. */

/** Whether a model id belongs to a plan provider (a harness on 'anthropic' runs Claude models, one on 'openai' the others). */
export function modelFitsProvider(model: string, provider: string): boolean {
  return provider === 'anthropic' ? model.startsWith('claude-') : !model.startsWith('claude-');
}

/** Models offered per harness: the one it starts from and at most this many cheaper steps. */
export const MAX_CHEAPER_STEPS = 2;

/**
 * The start model and its cheaper steps (the policy's `cheaper` chain), keeping only models the price table knows
 * (an unpriced model could not be sized) and stopping at a cycle. "claude-opus-5-5" → [opus 5.5, sonnet 5.5, haiku 5.5].
 */
export function modelLadder(start: string, cheaperOf: (model: string) => string | null, priced: (model: string) => boolean, maxSteps = MAX_CHEAPER_STEPS): string[] {
  const out = [start];
  let at = start;
  for (let i = 0; i < maxSteps; i++) {
    const next = cheaperOf(at);
    if (next === null || out.includes(next)) break;
    at = next;
    if (priced(next)) out.push(next);
  }
  return out;
}
