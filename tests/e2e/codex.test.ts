/**
 * sleds with the REAL Codex CLI (pinned in harness/codex-binary.ts) against the fake OpenAI Responses API:
 * `sleds install` wires Codex's hooks (and their trust), the bars Codex hands its rollout reach `sleds bars`,
 * and `codex exec "sled status"` is answered by the hook with no model request.
 */
import { describe, expect, it } from 'vitest';
import { runCodexExec } from './harness/codex-env.js';
import { useE2eFixture } from './harness/fixture.js';
import { sleds, status, waitFor } from '../support/sleds-env.js';

describe('sleds in the real Codex CLI', { timeout: 90_000 }, () => {
  const fx = useE2eFixture({ codex: true });

  it('codex exec: the rollout bars reach sleds bars, and "sled status" is answered by the hook with no model request', async () => {
    const t = Math.floor(Date.now() / 1000);
    const fake = await fx.fakeOpenAI({
      reply: 'Codex fake reply.',
      rateLimits: {
        primary: { usedPercent: 42.5, windowMinutes: 300, resetAt: t + 3600 },
        secondary: { usedPercent: 7, windowMinutes: 10080, resetAt: t + 3 * 86400 },
        credits: { hasCredits: true, unlimited: false, balance: '12.34' },
        limitName: 'codex',
      },
    });
    const { home, env, world } = await fx.codexWithSleds({ fakeUrl: fake.url });

    const installed = await sleds(world, ['install']);
    expect(installed.stdout).toMatch(/codex/i);

    const hello = await runCodexExec(fx.codexBin, ['exec', '--skip-git-repo-check', 'hello'], { env, cwd: home.cwd, timeoutMs: 30_000 });
    expect(hello.code, hello.stderr).toBe(0);
    expect(hello.stdout).toContain('Codex fake reply.');
    expect(fake.responseRequests()).toHaveLength(1);

    const bars = await waitFor('the Codex bars from the rollout', async () => {
      const r = JSON.parse((await sleds(world, ['bars', '--json'])).stdout) as { bars: Array<{ provider: string; window: string; usedPct: number; source: string }> };
      const codex = r.bars.filter((b) => b.provider === 'openai');
      return codex.length >= 2 ? codex : null;
    });
    expect(bars.map((b) => [b.usedPct, b.source]).sort()).toEqual([
      [42.5, 'codex-rollout'],
      [7, 'codex-rollout'],
    ]);
    const s = await status(world);
    expect(s.credits).toEqual([expect.objectContaining({ provider: 'openai', balanceMinor: 1234, exponent: 2, enabled: true })]);
    const session = s.sessions.find((x) => x.harness === 'codex');
    expect(session?.usageRecords).toBe(1);
    expect(s.hookEvents.UserPromptSubmit).toBe(1);

    const card = await runCodexExec(fx.codexBin, ['exec', '--skip-git-repo-check', 'sled status'], { env, cwd: home.cwd, timeoutMs: 30_000 });
    expect(card.code, card.stderr).toBe(0);
    expect(card.stderr).toMatch(/UserPromptSubmit.*Blocked/i);
    expect(fake.responseRequests()).toHaveLength(1); // no model request for "sled status"
    const after = await status(world);
    expect(after.hookEvents.UserPromptSubmit).toBe(2);
  });
});
