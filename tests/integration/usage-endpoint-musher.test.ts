import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeUsageEndpoint, type FakeUsageEndpoint } from '../support/fake-usage-endpoint.js';
import { writeSledsConfig } from '../support/sleds-config.js';
import { disposeWorld, makeWorld, sleds, startMusher, status, waitFor, type SledsWorld } from '../support/sleds-env.js';

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const iso = (ms: number) => new Date(ms).toISOString();

async function setUp(): Promise<{ w: SledsWorld; fake: FakeUsageEndpoint }> {
  const fake = await startFakeUsageEndpoint();
  cleanups.push(() => fake.close());
  const w = makeWorld();
  writeSledsConfig(w, { upstreams: { claudeUsage: fake.baseUrl } });
  cleanups.push(() => disposeWorld(w));
  return { w, fake };
}

describe('musher and the Claude usage endpoint', () => {
  it('polls once with the login, and its per-model weekly bars and credits reach sleds bars and the statusline', async () => {
    const { w, fake } = await setUp();
    const fiveHour = Date.now() + 2 * 3_600_000;
    const week = Date.now() + 4 * 86_400_000;
    fake.otherwise({
      kind: 'json',
      body: {
        five_hour: { utilization: 42.5, resets_at: iso(fiveHour) },
        seven_day: { utilization: 71, resets_at: iso(week) },
        seven_day_opus: { utilization: 33, resets_at: iso(week) },
        seven_day_sonnet: null,
        extra_usage: { is_enabled: true, monthly_limit: 5000, used_credits: 1234, utilization: 24.68, currency: 'usd' },
      },
    });
    mkdirSync(w.claudeDir, { recursive: true });
    writeFileSync(join(w.claudeDir, '.credentials.json'), JSON.stringify({ claudeAiOauth: { accessToken: 'sk-ant-oat01-musher-test', expiresAt: Date.now() + 3_600_000 } }), { mode: 0o600 });
    await startMusher(w);

    const bars = await waitFor('the endpoint bars', async () => {
      const r = JSON.parse((await sleds(w, ['bars', '--json'])).stdout) as { bars: Array<{ window: string; usedPct: number; source: string }> };
      return r.bars.some((b) => b.window === 'seven_day_opus') ? r.bars : null;
    });
    expect(bars.map((b) => [b.window, b.usedPct, b.source])).toEqual([
      ['five_hour', 42.5, 'usage-endpoint'],
      ['seven_day', 71, 'usage-endpoint'],
      ['seven_day_opus', 33, 'usage-endpoint'],
    ]);
    expect(fake.requests).toHaveLength(1);
    expect(fake.requests[0]).toMatchObject({ method: 'GET', path: '/api/oauth/usage' });
    expect(fake.requests[0]!.headers.authorization).toBe('Bearer sk-ant-oat01-musher-test');
    expect(fake.requests[0]!.headers['anthropic-beta']).toBe('oauth-2025-04-20');

    // Claude Code hands the statusline only 5h and weekly; the per-model bar comes from the endpoint.
    const line = await sleds(w, ['statusline'], JSON.stringify({ session_id: 's', model: { display_name: 'Opus 5.5' }, rate_limits: { five_hour: { used_percentage: 43, resets_at: Math.floor(fiveHour / 1000) }, seven_day: { used_percentage: 71, resets_at: Math.floor(week / 1000) } } }));
    expect(line.stdout).toMatch(/5h 43% ↻\S+ · wk 71% ↻\S+ \S+ · wk opus 33% ↻/);

    const human = await sleds(w, ['bars']);
    expect(human.stdout).toMatch(/claude wk opus\s+33%/);
    const s = await status(w);
    expect(s.bars.find((b) => b.window === 'five_hour')).toMatchObject({ usedPct: 43, source: 'statusline' });
    expect(s.credits).toEqual([expect.objectContaining({ provider: 'anthropic', usedMinor: 1234, limitMinor: 5000, exponent: 2 })]);
    const card = JSON.parse((await sleds(w, ['hook', 'UserPromptSubmit'], JSON.stringify({ session_id: 's', prompt: '/sled status' }))).stdout).reason as string;
    expect(card).toContain('Extra usage: $12.34 of $50.00 used (25%)');
  });

  it("polls after a kill -9: a poller lock whose pid still shows (a zombie the container never reaped) is a dead musher's", async () => {
    const { w, fake } = await setUp();
    fake.otherwise({ kind: 'json', body: { five_hour: { utilization: 12, resets_at: iso(Date.now() + 3_600_000) }, seven_day: null } });
    mkdirSync(w.claudeDir, { recursive: true });
    writeFileSync(join(w.claudeDir, '.credentials.json'), JSON.stringify({ claudeAiOauth: { accessToken: 'sk-ant-oat01-musher-test', expiresAt: Date.now() + 3_600_000 } }), { mode: 0o600 });
    // What a musher killed with -9 leaves: its lock file, naming a pid that still answers kill(0) (here: ours).
    mkdirSync(dirname(w.socket), { recursive: true, mode: 0o700 });
    writeFileSync(join(dirname(w.socket), 'usage-poller.lock'), String(process.pid), { mode: 0o600 });
    await startMusher(w);
    const bars = await waitFor('the endpoint polled', async () => {
      const r = JSON.parse((await sleds(w, ['bars', '--json'])).stdout) as { bars: Array<{ window: string; usedPct: number; source: string }> };
      return r.bars.some((b) => b.source === 'usage-endpoint') ? r.bars : null;
    });
    expect(bars.find((b) => b.window === 'five_hour')).toMatchObject({ usedPct: 12, source: 'usage-endpoint' });
    expect((await status(w)).usageEndpoint).not.toMatch(/polled by another musher/);
  });

  it('sends nothing without a login, and says why', async () => {
    const { w, fake } = await setUp();
    await startMusher(w);
    const s = await waitFor('the poller to say why', async () => {
      const st = await status(w);
      return /credentials/.test(st.usageEndpoint) ? st : null;
    });
    expect(s.usageEndpoint).toMatch(/no Claude OAuth credentials at .*\.credentials\.json — sign in with `claude`/);
    expect(fake.requests).toHaveLength(0);
  });
});
