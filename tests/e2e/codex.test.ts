/**
 * sleds with the REAL Codex CLI (pinned in harness/codex-binary.ts) against the fake OpenAI Responses API:
 * `sleds install` wires Codex's hooks (and their trust), the bars Codex hands its rollout reach `sleds bars`,
 * and `codex exec "sled status"` is answered by the hook with no model request.
 */
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ensureCodexBinary } from './harness/codex-binary.js';
import { makeCodexHome, makeCodexProjectDir, runCodexExec } from './harness/codex-env.js';
import { startFakeOpenAI } from './harness/fake-openai.js';
import { sleds, status, stopMusher, waitFor, worldIn } from '../support/sleds-env.js';
import { rm } from 'node:fs/promises';

describe('sleds in the real Codex CLI', { timeout: 90_000 }, () => {
  let bin: string;
  const cleanups: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    for (const fn of cleanups.splice(0).reverse()) await fn().catch(() => undefined);
  });
  beforeAll(async () => {
    bin = await ensureCodexBinary();
  }, 600_000);

  it('codex exec: the rollout bars reach sleds bars, and "sled status" is answered by the hook with no model request', async () => {
    const t = Math.floor(Date.now() / 1000);
    const fake = await startFakeOpenAI({
      reply: 'Codex fake reply.',
      rateLimits: {
        primary: { usedPercent: 42.5, windowMinutes: 300, resetAt: t + 3600 },
        secondary: { usedPercent: 7, windowMinutes: 10080, resetAt: t + 3 * 86400 },
        credits: { hasCredits: true, unlimited: false, balance: '12.34' },
        limitName: 'codex',
      },
    });
    cleanups.push(() => fake.close());
    const cwd = await makeCodexProjectDir();
    cleanups.push(() => rm(cwd, { recursive: true, force: true }));
    const home = await makeCodexHome({ fakeUrl: fake.url, cwd });
    cleanups.push(() => home.cleanup());
    const env = { ...home.env, SLEDS_HOME: join(home.home, 's'), SLEDS_CODEX_BIN: bin, SLEDS_CLAUDE_BIN: '/nonexistent/claude', TZ: 'UTC' };
    const world = worldIn(home.home, env);
    cleanups.push(() => stopMusher(world));

    const installed = await sleds(world, ['install']);
    expect(installed.stdout).toMatch(/codex/i);

    const hello = await runCodexExec(bin, ['exec', '--skip-git-repo-check', 'hello'], { env, cwd: home.cwd, timeoutMs: 30_000 });
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

    const card = await runCodexExec(bin, ['exec', '--skip-git-repo-check', 'sled status'], { env, cwd: home.cwd, timeoutMs: 30_000 });
    expect(card.code, card.stderr).toBe(0);
    expect(card.stderr).toMatch(/UserPromptSubmit.*Blocked/i);
    expect(fake.responseRequests()).toHaveLength(1); // no model request for "sled status"
    const after = await status(world);
    expect(after.hookEvents.UserPromptSubmit).toBe(2);
  });
});
