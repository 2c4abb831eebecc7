/**
 * kill -9 of musher while the REAL Claude Code waits on a Message Batch (issue 15 § 3, acceptance 3): the batch is
 * kept in musher's store before claude gets a byte, so when musher dies mid-batch and comes back on the same home,
 * store and gateway port, claude's retry of its dropped request follows the batch already sent. claude prints the
 * ordinary answer, the fake API saw one batch created, the rail holds one charge at half the standard price.
 */
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { priceUsage } from '../../core/pricing.js';
import { requestMusher } from '../../hooks/musher-client.js';
import { runClaudePrint } from './harness/claude-env.js';
import { useE2eFixture } from './harness/fixture.js';
import { prices } from '../support/gateway-world.js';
import { musherPid, processGone, sleds, startMusher, status, waitFor } from '../support/sleds-env.js';

const PLATFORM_KEY = 'sk-ant-api03-E2E-PLATFORM-KEY-0123456789abcdefghij';
const USAGE = { input_tokens: 2000, output_tokens: 300, cache_read_input_tokens: 10_000, cache_creation_input_tokens: 500 };


describe('kill -9 of musher mid-batch, with the real Claude Code waiting', { timeout: 180_000 }, () => {
  const fx = useE2eFixture({ claude: true });

  it('claude retries into the restarted musher, which follows the batch already sent: the ordinary answer, one batch, one charge at half price', async () => {
    const fake = await fx.fakeAnthropic({ reply: 'Still answered after the crash.', usage: USAGE });
    let open = false;
    // The batch stays in progress until the test lets it end.
    fake.setBatchBehaviour({ endWhen: () => open });
    const { home, world } = await fx.claudeWithSleds({
      mode: 'apiKey',
      fakeUrl: 'http://127.0.0.1:9', // replaced by the gateway's URL below
      sledsEnv: { SLEDS_KEYRING: 'file', SLEDS_SEAT: 'dana' },
      sledsConfig: { upstreams: { anthropic: fake.url }, gateway: { batchPollMs: 100, batchMaxPollMs: 200, batchKeepaliveMs: 100 } },
    });
    expect((await sleds(world, ['key', 'set', 'anthropic'], PLATFORM_KEY)).code).toBe(0);
    await startMusher(world);
    const minted = await requestMusher(world.socket, 'POST', '/v1/gateway/tokens', JSON.stringify({ sessionId: 'overnight-job', project: 'acme/api', tier: 'batch' }), {}, 5000);
    expect(minted.status, minted.body).toBe(200);
    const { token, baseUrl, claudeEnv } = JSON.parse(minted.body) as { token: string; baseUrl: string; claudeEnv: Record<string, string> };

    // What the runner hands claude on this tier (wait through a silent stream), the token as its API key, and
    // Claude Code's own retries as a user has them (10; the test homes turn them off): measured on 2.1.328, a stream
    // dropped mid-answer is sent again at once, and ECONNREFUSED while musher is down is retried with backoff
    // (0.5 s, 1.2 s, 2 s, …), so the request reaches the musher that comes back.
    const env: Record<string, string> = {
      ...home.env,
      ANTHROPIC_BASE_URL: baseUrl,
      ANTHROPIC_API_KEY: token,
      CLAUDE_STREAM_IDLE_TIMEOUT_MS: claudeEnv.CLAUDE_STREAM_IDLE_TIMEOUT_MS!,
      API_FORCE_IDLE_TIMEOUT: claudeEnv.API_FORCE_IDLE_TIMEOUT!,
      CLAUDE_CODE_MAX_RETRIES: '10',
    };
    const run = runClaudePrint(fx.claudeBin, ['-p', 'continue the task'], { env, cwd: home.cwd, timeoutMs: 150_000 });

    // claude is waiting on its batch (the stream's head and keepalives came after the batch was kept).
    await waitFor('the batch sent and polled', () => (fake.batches[0]?.polls ?? 0) >= 2, 60_000);
    const pid = musherPid(world);
    process.kill(pid, 'SIGKILL');
    await waitFor('musher gone', () => processGone(pid), 10_000);

    // musher again on the same home, store, socket and (stored) gateway port.
    await startMusher(world);
    const restarted = musherPid(world);
    expect(restarted).not.toBe(pid);
    await waitFor(
      "claude's retry following the kept batch",
      () => existsSync(world.logFile) && readFileSync(world.logFile, 'utf8').includes(`follows Message Batch ${fake.batches[0]!.id}, sent before musher restarted — not sent again`),
      90_000,
    );
    open = true;
    const done = await run;
    expect(done.code, done.stderr + done.stdout).toBe(0);
    expect(done.stdout).toContain('Still answered after the crash.');

    // One batch for claude's one request, and nothing went to /v1/messages.
    expect(fake.messageRequests()).toHaveLength(0);
    expect(fake.batchCreates()).toHaveLength(1);

    // One charge: half of what that usage costs at the standard price.
    const half = priceUsage(prices, { inputTokens: 2000, outputTokens: 300, cacheWrite5mTokens: 500, cacheWrite1hTokens: 0, cacheReadTokens: 10_000, webSearchRequests: 0, serviceTier: 'batch', inferenceGeo: null, source: 'gateway', dedupKey: '', sessionId: '', model: (JSON.parse(fake.batches[0]!.results![0]!) as { result: { message: { model: string } } }).result.message.model, timestampMs: Date.now(), cwd: null });
    if (!half.priced) throw new Error('the model has no price');
    const s = await waitFor('the answer in the platform-key rail', async () => {
      const st = await status(world);
      return st.platformKey.bySeatModel.reduce((n, r) => n + r.records, 0) >= 1 ? st : null;
    });
    expect(s.platformKey.bySeatModel.reduce((n, r) => n + r.records, 0)).toBe(1);
    expect(s.platformKey.bySeatModel.reduce((n, r) => n + r.costMicros, 0)).toBe(half.costMicros);
  });
});
