/** How long a hook waits for musher before carrying on. A typed /sled gets longer: the user is waiting for it. */
const BUDGET_MS: Record<string, number> = { UserPromptSubmit: 2_000 };
const DEFAULT_BUDGET_MS = 1_000;
/**
 * `/sled pickup` fetches and checks out a teammate's work; `/sled 5` and `/sled handoff` snapshot and seal the
 * session: the user waits for all three. Read from the raw payload, before any parse (the hook's hot path).
 */
const SLOW_VERB = /"prompt"\s*:\s*"\s*(?:\/(?:sleds?:)?)?sled\s+(?:pickup|5|hand-?off)\b/i;
// Under the 10 s the plugin (and the Codex hooks) give a hook.
export const SLOW_VERB_BUDGET_MS = 9_000;

export function budgetFor(event: string, raw: string): number {
  if (event === 'UserPromptSubmit' && SLOW_VERB.test(raw)) return SLOW_VERB_BUDGET_MS;
  return BUDGET_MS[event] ?? DEFAULT_BUDGET_MS;
}
