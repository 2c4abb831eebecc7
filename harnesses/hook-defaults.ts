/**
 * What a hook must know of harnesses before musher answers, in a module that imports nothing: hooks/ loads node
 * builtins only (shared/ARCHITECTURE.md), so it cannot load the adapters. tests/conformance/harness-hook-defaults.test.ts
 * checks these against the registry's adapters.
 */

/**
 * The harness a hook serves when called without `--harness`: Claude Code's plugin (plugin/hooks/hooks.json) calls
 * `sleds hook <Event>` without it, as it always has; every other harness's hook config passes `--harness <id>`.
 */
export const DEFAULT_HARNESS_ID = 'claude-code';

/**
 * Harnesses whose hook validator fails an answer with a field it does not know: the hook's own "musher is away"
 * block is the bare `{decision, reason}` for them (their adapter's hooks.block says the same).
 */
export const BARE_BLOCK_HARNESSES: readonly string[] = ['codex', 'gemini-cli', 'opencode', 'cursor-agent'];

/** The one string a hook treats as the harness it serves: the `--harness` value, or the default. */
export function hookHarness(flagValue: string | undefined | null): string {
  return flagValue ? flagValue : DEFAULT_HARNESS_ID;
}
