/**
 * The half-price tier with the REAL Claude Code: `claude -p` through musher's gateway on a batch-tier token (as the
 * overnight runner will run it, with CLAUDE_STREAM_IDLE_TIMEOUT_MS and API_FORCE_IDLE_TIMEOUT=0 so it waits for a
 * slow batch). The fake API answers only through /v1/messages/batches; claude prints the ordinary answer, and the
 * rail holds half the standard price of what the batches used.
 */
import { describe, expect, it } from 'vitest';
import { priceUsage } from '../../core/pricing.js';
import { runClaudePrint } from './harness/claude-env.js';
import { useE2eFixture } from './harness/fixture.js';
import { requestMusher } from '../../hooks/musher-client.js';
import { prices } from '../support/gateway-world.js';
import { sleds, startMusher, status, waitFor } from '../support/sleds-env.js';

const PLATFORM_KEY = 'sk-ant-api03-E2E-PLATFORM-KEY-0123456789abcdefghij';

describe('the batch tier in front of the real Claude Code', { timeout: 180_000 }, () => {
  const fx = useE2eFixture({ claude: true });

  it('claude -p on a batch-tier token: the answer as usual, every request a Message Batch, billed at half price', async () => {
    const fake = await fx.fakeAnthropic({ reply: 'Answered overnight at half price.', usage: { input_tokens: 2000, output_tokens: 300, cache_read_input_tokens: 10_000, cache_creation_input_tokens: 500 } });
    // Each batch is polled twice in progress before it ends: claude waits through keepalives for its answer.
    fake.setBatchBehaviour({ inProgressPolls: 2 });
    const { home, world } = await fx.claudeWithSleds({
      mode: 'apiKey',
      fakeUrl: 'http://127.0.0.1:9', // replaced by the gateway's URL below
      sledsEnv: { SLEDS_KEYRING: 'file', SLEDS_SEAT: 'dana' },
      sledsConfig: { upstreams: { anthropic: fake.url }, gateway: { batchPollMs: 150, batchMaxPollMs: 300, batchKeepaliveMs: 100 } },
    });
    expect((await sleds(world, ['key', 'set', 'anthropic'], PLATFORM_KEY)).code).toBe(0);
    await startMusher(world);
    const res = await requestMusher(world.socket, 'POST', '/v1/gateway/tokens', JSON.stringify({ sessionId: 'overnight-job', project: 'acme/api', tier: 'batch' }), {}, 5000);
    expect(res.status, res.body).toBe(200);
    const { token, baseUrl, tier, claudeEnv } = JSON.parse(res.body) as { token: string; baseUrl: string; tier: string; claudeEnv: Record<string, string> };
    expect(tier).toBe('batch');
    // What the runner hands claude on this tier: wait through a silent stream, do not abort and re-send.
    const { CLAUDE_STREAM_IDLE_TIMEOUT_MS, API_FORCE_IDLE_TIMEOUT } = claudeEnv;
    expect({ CLAUDE_STREAM_IDLE_TIMEOUT_MS, API_FORCE_IDLE_TIMEOUT }).toEqual({ CLAUDE_STREAM_IDLE_TIMEOUT_MS: '1800000', API_FORCE_IDLE_TIMEOUT: '0' });

    const env: Record<string, string> = { ...home.env, ANTHROPIC_BASE_URL: baseUrl, ANTHROPIC_API_KEY: token, CLAUDE_STREAM_IDLE_TIMEOUT_MS: CLAUDE_STREAM_IDLE_TIMEOUT_MS!, API_FORCE_IDLE_TIMEOUT: API_FORCE_IDLE_TIMEOUT! };
    const run = await runClaudePrint(fx.claudeBin, ['-p', 'continue the task'], { env, cwd: home.cwd, timeoutMs: 120_000 });
    expect(run.code, run.stderr + run.stdout).toBe(0);
    expect(run.stdout).toContain('Answered overnight at half price.');

    // Nothing went to /v1/messages: every request claude made ran as a batch of one, on the platform key.
    expect(fake.messageRequests()).toHaveLength(0);
    const creates = fake.batchCreates();
    expect(creates.length).toBeGreaterThanOrEqual(1);
    for (const c of creates) {
      expect(c.path).toBe('/v1/messages/batches?beta=true');
      expect(c.headers['x-api-key']).toBe(PLATFORM_KEY);
      expect(JSON.stringify(c.headers)).not.toContain(token);
      expect(c.body.requests).toHaveLength(1);
      expect(c.body.requests[0].params.stream).toBeUndefined();
    }
    expect(fake.batches.every((b) => b.polls >= 3 && b.status === 'ended')).toBe(true);

    // The rail: each batch's answer once, at half of what the same usage costs at the standard price.
    const results = fake.batches.map((b) => (JSON.parse(b.results![0]!) as { result: { message: { model: string; usage: Record<string, number> } } }).result.message);
    const price = (m: (typeof results)[number], serviceTier: string) => {
      const u = m.usage;
      const p = priceUsage(prices, { inputTokens: u.input_tokens!, outputTokens: u.output_tokens!, cacheWrite5mTokens: u.cache_creation_input_tokens!, cacheWrite1hTokens: 0, cacheReadTokens: u.cache_read_input_tokens!, webSearchRequests: 0, serviceTier, inferenceGeo: null, source: 'gateway', dedupKey: '', sessionId: '', model: m.model, timestampMs: Date.now(), cwd: null });
      if (!p.priced) throw new Error(`${m.model} has no price: ${p.reason}`);
      return p.costMicros;
    };
    const standard = results.reduce((n, m) => n + price(m, 'standard'), 0);
    const half = results.reduce((n, m) => n + price(m, 'batch'), 0);
    expect(standard).toBeGreaterThan(0);
    expect(Math.abs(half * 2 - standard)).toBeLessThanOrEqual(results.length); // rounding, a micro-dollar a record at most

    const s = await waitFor('the answers in the platform-key rail', async () => {
      const st = await status(world);
      return st.platformKey.bySeatModel.reduce((n, r) => n + r.records, 0) === results.length ? st : null;
    });
    expect(s.platformKey.bySeatModel.every((r) => r.seat === 'dana' && r.unpricedRecords === 0)).toBe(true);
    expect(s.platformKey.bySeatModel.reduce((n, r) => n + r.costMicros, 0)).toBe(half);
  });
});
