import { describe, expect, it } from 'vitest';
import { BARE_BLOCK_HARNESSES, DEFAULT_HARNESS_ID, hookHarness } from '../../harnesses/hook-defaults.js';
import { allHarnesses, storedHarness } from '../../harnesses/registry.js';

/**
 * A hook knows two things of harnesses before musher answers (harnesses/hook-defaults.ts, a module that imports
 * nothing so hooks/ may load it): the harness it serves without --harness, and which harnesses take only a bare
 * block. Both must agree with the adapters, which are the only other place harnesses are named.
 */
describe('the hooks\' harness defaults agree with the registry', () => {
  it('the default harness is a built-in one, and a hook without --harness serves it', () => {
    expect(storedHarness(DEFAULT_HARNESS_ID).ok).toBe(true);
    expect(hookHarness(undefined)).toBe(DEFAULT_HARNESS_ID);
    expect(hookHarness('')).toBe(DEFAULT_HARNESS_ID);
    expect(hookHarness('codex')).toBe('codex');
  });

  it.each(allHarnesses().map((a) => [a.id, a] as const))('%s: the away block is bare exactly when its adapter\'s block is', (id, adapter) => {
    const answer = JSON.parse(adapter.hooks.block('sleds: musher is away').stdout) as Record<string, unknown>;
    const bare = Object.keys(answer).sort().join(',') === 'decision,reason';
    expect(BARE_BLOCK_HARNESSES.includes(id)).toBe(bare);
  });
});

describe("a teammate's roster line as the harness they pick a hand-off up in (musher/handoff/harness-words.ts)", () => {
  it.each<[string[], string]>([
    [[], DEFAULT_HARNESS_ID],
    [['codex'], 'codex'],
    [['Codex CLI', 'codex'], 'codex'],
    [['claude'], 'claude-code'],
    // Several harnesses, or one sleds does not know: the default harness, whose slash command any of its sessions routes.
    [['claude-code', 'codex'], DEFAULT_HARNESS_ID],
    [['codex', 'aider'], DEFAULT_HARNESS_ID],
    [['aider'], DEFAULT_HARNESS_ID],
    // A harness that runs route nodes but keeps no sessions sleds can hand off (no `/sled pickup` there).
    [['gemini'], DEFAULT_HARNESS_ID],
  ])('%j → %s', async (roster, want) => {
    const { rosterHarness } = await import('../../musher/handoff/harness-words.js');
    const words = rosterHarness(roster);
    expect(words.id).toBe(want);
    const adapter = allHarnesses().find((a) => a.id === want)!;
    expect(words.displayName).toBe(adapter.displayName);
    expect(words.sledCommand).toBe(adapter.sledCommand ?? '/sled');
  });
});
