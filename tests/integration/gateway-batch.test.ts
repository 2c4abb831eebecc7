/**
 * The half-price tier in the gateway (issue 15 § 3), in process against the fake APIs on 127.0.0.1, a real SQLite
 * rail and the repo's price table. A batch-tier token's Claude request goes out as a Message Batch of one and comes
 * back as an ordinary SSE answer; its OpenAI request goes on flex. Timers are real but set to milliseconds; a batch
 * ends when the test opens its gate (the fake's `endWhen`), never after a sleep.
 */
import http from 'node:http';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Db } from '../../musher/store/db.js';
import { priceUsage } from '../../core/pricing.js';
import { gatewayWorld, post, prices, type GatewayWorld } from '../support/gateway-world.js';
import { startFakeAnthropic, type FakeAnthropic, type StartFakeAnthropicOptions } from '../e2e/harness/fake-anthropic.js';
import { startFakeOpenAI, type StartFakeOpenAIOptions } from '../e2e/harness/fake-openai.js';
import { parseSse } from '../e2e/harness/sse.js';
import { accumulate, sseEvents } from '../support/message-accumulator.js';
import { waitFor } from '../support/sleds-env.js';

const REAL_KEY = 'sk-ant-api03-REALPLATFORMKEY-0123456789abcdef';
const OPENAI_KEY = 'sk-proj-REALOPENAIKEY-0123456789';
const DEDUP_MS = 60_000;

const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

type World = GatewayWorld & { clock: { t: number; now(): number } };

async function world(upstreams: { anthropic?: string; openai?: string }, dir?: string): Promise<World> {
  const clock = { t: Date.UTC(2026, 11, 2, 23), now() { return this.t; } };
  const w = await gatewayWorld(cleanups, {
    upstreams,
    ...(dir ? { dir } : {}),
    clock,
    platformKey: async (p) => (p === 'anthropic' ? REAL_KEY : OPENAI_KEY),
    batch: { pollMs: 2, maxPollMs: 5, keepaliveMs: 2, dedupMs: DEDUP_MS, maxAttempts: 3 },
    flex: { maxRetries: 3, backoffMs: 1, maxBackoffMs: 4 },
  });
  return { ...w, clock };
}

async function fakeAnthropic(opts: StartFakeAnthropicOptions = {}): Promise<FakeAnthropic> {
  const fake = await startFakeAnthropic({ reply: 'The cart total is fixed; 340/340 tests pass.', usage: USAGE, ...opts });
  cleanups.push(() => fake.close());
  return fake;
}

const USAGE = { input_tokens: 2000, output_tokens: 300, cache_read_input_tokens: 10_000, cache_creation_input_tokens: 500 };
// claude-opus-5-5 at the standard price: 2000 in × $4/M + 300 out × $20/M + 10,000 cache reads × $0.20/M + 500
// 5-minute writes × $5/M = $0.0185 (the same sum tests/integration/gateway.test.ts checks on the standard path).
const STANDARD_COST = 8000 + 6000 + 2000 + 2500;

const BODY = {
  model: 'claude-opus-5-5',
  max_tokens: 1024,
  stream: true,
  system: [{ type: 'text', text: 'You are Claude Code.' }],
  messages: [{ role: 'user', content: 'fix the cart total' }],
};
const CLAUDE_HEADERS = { 'anthropic-version': '2023-06-01', 'anthropic-beta': 'claude-code-20250219,oauth-2025-04-20,interleaved-thinking-2025-05-14' };

function rows(db: Db): Array<Record<string, unknown>> {
  return db.prepare('SELECT * FROM platform_key_usage ORDER BY ts, request_id').all() as Array<Record<string, unknown>>;
}

/** A streaming request, read as it comes: the text so far, a wait for a predicate on it, the end, an abort. */
function openStream(base: string, token: string, body: unknown = BODY, path = '/v1/messages?beta=true') {
  let text = '';
  let status = 0;
  let headers: http.IncomingHttpHeaders = {};
  const waiters: Array<() => void> = [];
  let req!: http.ClientRequest;
  const ended = new Promise<string>((resolve, reject) => {
    req = http.request(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': token, ...CLAUDE_HEADERS } }, (res) => {
      status = res.statusCode!;
      headers = res.headers;
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        text += c;
        for (const w of waiters.splice(0)) w();
      });
      res.on('end', () => resolve(text));
      res.on('error', () => resolve(text));
      for (const w of waiters.splice(0)) w();
    });
    req.on('error', (e) => (req.destroyed ? resolve(text) : reject(e)));
    req.end(JSON.stringify(body));
  });
  return {
    get text() {
      return text;
    },
    get status() {
      return status;
    },
    get headers() {
      return headers;
    },
    /** Resolves once what has arrived satisfies `pred`. */
    until(pred: (text: string) => boolean): Promise<string> {
      return new Promise((resolve) => {
        const check = () => (status !== 0 && pred(text) ? resolve(text) : waiters.push(check));
        check();
      });
    },
    ended,
    abort: () => req.destroy(),
  };
}

/** The Message the fake's batch produced, from its results JSONL. */
function resultMessage(fake: FakeAnthropic, i = 0): Record<string, any> {
  const line = JSON.parse(fake.batches[i]!.results![0]!) as { result: { type: string; message: Record<string, any> } };
  expect(line.result.type).toBe('succeeded');
  return line.result.message;
}

describe('the batch route (Claude, a batch-tier token)', () => {
  it('goes out as a Message Batch of one, keeps the client alive while it runs, streams the Message back, and meters it at half the standard price', async () => {
    const fake = await fakeAnthropic();
    const w = await world({ anthropic: fake.url });
    let open = false;
    fake.setBatchBehaviour({ endWhen: () => open });

    const s = openStream(w.gateway.url, w.batchToken);
    // The head at once, then keepalives while the batch is still in progress: the client has data before any answer.
    await s.until((t) => t.includes(': keepalive\n\n'));
    expect(s.status).toBe(200);
    expect(s.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(s.text).not.toContain('event:');
    await waitFor('the batch polled', () => (fake.batches[0]?.polls ?? 0) >= 1);
    expect(fake.batches[0]!.status).toBe('in_progress');
    open = true;
    const body = await s.ended;

    // One batch of one request: the body without `stream`, through the beta API with the client's betas (not its
    // OAuth one), on the platform key.
    expect(fake.messageRequests()).toHaveLength(0);
    const [create] = fake.batchCreates();
    expect(create!.path).toBe('/v1/messages/batches?beta=true');
    expect(create!.headers['x-api-key']).toBe(REAL_KEY);
    expect(create!.headers['anthropic-version']).toBe('2023-06-01');
    expect(create!.headers['anthropic-beta']).toBe('claude-code-20250219,interleaved-thinking-2025-05-14');
    expect(JSON.stringify(create!.headers)).not.toContain(w.batchToken);
    const { stream: _stream, ...params } = BODY;
    expect(create!.body.requests).toHaveLength(1);
    expect(create!.body.requests[0].custom_id).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
    expect(create!.body.requests[0].params).toEqual(params);
    expect(fake.requests.filter((q) => q.method === 'GET' && q.pathname === `/v1/messages/batches/${fake.batches[0]!.id}`).every((q) => q.path.endsWith('?beta=true'))).toBe(true);
    expect(fake.requests.filter((q) => q.pathname.endsWith('/results'))).toHaveLength(1);

    // The client's stream: ordinary Messages SSE after the keepalives, the Message the batch produced, its real id.
    const events = sseEvents(body);
    expect(events.map((e) => e.event)).toEqual(['message_start', 'content_block_start', 'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop']);
    const rebuilt = accumulate(events);
    expect(rebuilt).toEqual(resultMessage(fake));
    expect(rebuilt.content).toEqual([{ type: 'text', text: 'The cart total is fixed; 340/340 tests pass.' }]);
    expect(events[0]!.data.message.id).toMatch(/^msg_fake_/);

    // Metered once, into the rail, at half the standard price for that usage.
    const [row] = await waitFor('the metered answer', () => (rows(w.db).length === 1 ? rows(w.db) : null));
    expect(row).toMatchObject({ request_id: fake.batches[0]!.id, seat: 'dana', project: 'acme/api', session_id: 'sess-night', model: 'claude-opus-5-5', input_tokens: 2000, output_tokens: 300, cache_read: 10_000, cache_write: 500, output_known: 1, source: 'gateway' });
    expect(row!.cost_micros).toBe(STANDARD_COST / 2);
    const standard = priceUsage(prices, { inputTokens: 2000, outputTokens: 300, cacheWrite5mTokens: 500, cacheWrite1hTokens: 0, cacheReadTokens: 10_000, webSearchRequests: 0, serviceTier: 'standard', inferenceGeo: null, source: 'gateway', dedupKey: '', sessionId: '', model: 'claude-opus-5-5', timestampMs: w.clock.now(), cwd: null });
    expect(standard).toEqual({ priced: true, costMicros: STANDARD_COST });
    expect(w.logLines.join('\n')).not.toContain(REAL_KEY);
  });

  it('the same request sent again while its batch runs (Claude Code after its idle timeout) is attached to it: one batch, billed once', async () => {
    const fake = await fakeAnthropic();
    const w = await world({ anthropic: fake.url });
    let open = false;
    fake.setBatchBehaviour({ endWhen: () => open });

    const first = openStream(w.gateway.url, w.batchToken);
    await waitFor('the batch polled', () => (fake.batches[0]?.polls ?? 0) >= 1);
    // The client gives up on the silent stream and sends the identical request again.
    first.abort();
    await first.ended;
    const second = openStream(w.gateway.url, w.batchToken);
    await waitFor('the re-sent request attached', () => w.logLines.some((l) => /dana's request came again while its Message Batch msgbatch_fake_\S+ runs — attached to it, billed once/.test(l)));
    await second.until((t) => t.includes(': keepalive'));
    // And a twin on its own connection at the same time (two sessions sending the same request): both are answered.
    const twin = openStream(w.gateway.url, w.batchToken);
    await waitFor('the twin attached', () => w.logLines.filter((l) => l.includes('attached to it, billed once')).length === 2);
    open = true;
    const answer = accumulate(sseEvents(await second.ended));
    expect(answer).toEqual(resultMessage(fake));
    expect(accumulate(sseEvents(await twin.ended))).toEqual(answer);
    expect(fake.batchCreates()).toHaveLength(1);

    // Sent a third time after the batch ended, within the window: the same answer at once, still one batch.
    const third = await post(w.gateway.url, '/v1/messages?beta=true', { 'x-api-key': w.batchToken, ...CLAUDE_HEADERS }, BODY);
    expect(accumulate(sseEvents(third.body))).toEqual(answer);
    expect(fake.batchCreates()).toHaveLength(1);
    const all = await waitFor('the answer metered', () => (rows(w.db).length > 0 ? rows(w.db) : null));
    expect(all).toHaveLength(1);
    expect(w.rail.seatSpendMicros('dana', 0, Number.MAX_SAFE_INTEGER)).toBe(STANDARD_COST / 2);

    // A different request is its own batch; the same one past the window is asked again (and billed again).
    const other = await post(w.gateway.url, '/v1/messages?beta=true', { 'x-api-key': w.batchToken, ...CLAUDE_HEADERS }, { ...BODY, messages: [{ role: 'user', content: 'and the tax line' }] });
    expect(other.status).toBe(200);
    expect(fake.batchCreates()).toHaveLength(2);
    w.clock.t += DEDUP_MS + 1;
    await post(w.gateway.url, '/v1/messages?beta=true', { 'x-api-key': w.batchToken, ...CLAUDE_HEADERS }, BODY);
    expect(fake.batchCreates()).toHaveLength(3);
    await waitFor('three answers metered', () => rows(w.db).length === 3);
  });

  it('an expired batch is sent again and its answer still arrives; expired every time, the client gets overloaded_error and nothing is billed', async () => {
    const fake = await fakeAnthropic();
    const w = await world({ anthropic: fake.url });
    fake.setBatchBehaviour({ inProgressPolls: 1, outcomes: ['expired'] });
    const r = await post(w.gateway.url, '/v1/messages?beta=true', { 'x-api-key': w.batchToken, ...CLAUDE_HEADERS }, BODY);
    expect(r.status).toBe(200);
    expect(accumulate(sseEvents(r.body))).toEqual(resultMessage(fake, 1));
    expect(fake.batchCreates()).toHaveLength(2);
    await waitFor('the answer metered', () => rows(w.db).length === 1);
    expect(rows(w.db)[0]).toMatchObject({ request_id: fake.batches[1]!.id, cost_micros: STANDARD_COST / 2 });
    expect(w.logLines.some((l) => l.includes(`Message Batch ${fake.batches[0]!.id} ended expired — sending it again`))).toBe(true);

    fake.setBatchBehaviour({ outcomes: ['expired', 'canceled', 'expired'] });
    const gaveUp = await post(w.gateway.url, '/v1/messages?beta=true', { 'x-api-key': w.batchToken, ...CLAUDE_HEADERS }, { ...BODY, messages: [{ role: 'user', content: 'never answered' }] });
    expect(gaveUp.status).toBe(200); // the head went out at once: the failure comes as the stream's error event
    expect(sseEvents(gaveUp.body)).toEqual([
      { event: 'error', data: { type: 'error', error: { type: 'overloaded_error', message: 'sleds gateway: the Message Batch for this request ended without an answer 3 times (expired or canceled) — try again later, or on the standard tier' } } },
    ]);
    expect(fake.batchCreates()).toHaveLength(5);
    expect(rows(w.db)).toHaveLength(1);
    expect(w.gateway.heldMicros('dana')).toBe(0);
    // Sent again, a request that got no answer is not handed the old failure: a new batch, and this time the answer.
    const again = await post(w.gateway.url, '/v1/messages?beta=true', { 'x-api-key': w.batchToken, ...CLAUDE_HEADERS }, { ...BODY, messages: [{ role: 'user', content: 'never answered' }] });
    expect(accumulate(sseEvents(again.body))).toEqual(resultMessage(fake, 5));
    expect(fake.batchCreates()).toHaveLength(6);
    await waitFor('the answer metered', () => rows(w.db).length === 2);
  });

  it('an errored result is the API\'s error: an error event to a stream, the status and envelope to a plain request; not billed', async () => {
    const fake = await fakeAnthropic();
    const w = await world({ anthropic: fake.url });
    fake.setBatchBehaviour({ outcomes: [{ errored: { type: 'invalid_request_error', message: 'messages.0.content: tool_result blocks must follow a tool_use' } }] });
    const s = await post(w.gateway.url, '/v1/messages?beta=true', { 'x-api-key': w.batchToken, ...CLAUDE_HEADERS }, BODY);
    expect(sseEvents(s.body)).toEqual([{ event: 'error', data: { type: 'error', error: { type: 'invalid_request_error', message: 'messages.0.content: tool_result blocks must follow a tool_use' } } }]);

    // Asynchronous validation: a body the batch refuses only when it ends (here max_tokens 0), to a client that did not stream.
    const plain = await post(w.gateway.url, '/v1/messages', { 'x-api-key': w.batchToken, 'anthropic-version': '2023-06-01' }, { ...BODY, stream: false, max_tokens: 0 });
    expect(plain.status).toBe(400);
    expect(JSON.parse(plain.body)).toEqual({ type: 'error', error: { type: 'invalid_request_error', message: 'max_tokens: must be at least 1' }, request_id: null });
    expect(fake.batchCreates().map((q) => q.path)).toEqual(['/v1/messages/batches?beta=true', '/v1/messages/batches']);
    expect(rows(w.db)).toHaveLength(0);
  });

  it('a client that does not stream gets the Message as JSON, metered the same', async () => {
    const fake = await fakeAnthropic();
    const w = await world({ anthropic: fake.url });
    const r = await post(w.gateway.url, '/v1/messages', { 'x-api-key': w.batchToken, 'anthropic-version': '2023-06-01' }, { ...BODY, stream: false });
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('application/json');
    expect(JSON.parse(r.body)).toEqual(resultMessage(fake));
    expect(fake.batchCreates()[0]!.body.requests[0].params.stream).toBeUndefined();
    await waitFor('the answer metered', () => rows(w.db)[0]?.cost_micros === STANDARD_COST / 2);
  });

  it('the allowance holds on the batch tier: a spent seat is refused before any batch, a running batch holds its estimate until it is metered', async () => {
    const fake = await fakeAnthropic();
    const w = await world({ anthropic: fake.url });
    w.allowance.current = { perDayMicros: 1_000_000, perWeekMicros: null };
    let open = false;
    fake.setBatchBehaviour({ endWhen: () => open });
    const s = openStream(w.gateway.url, w.batchToken);
    await waitFor('the batch polled', () => (fake.batches[0]?.polls ?? 0) >= 1);
    expect(w.gateway.heldMicros('dana')).toBeGreaterThan(0);
    open = true;
    await s.ended;
    await waitFor('the hold released', () => w.gateway.heldMicros('dana') === 0);
    expect(w.rail.seatSpendMicros('dana', 0, Number.MAX_SAFE_INTEGER)).toBe(STANDARD_COST / 2);

    w.allowance.current = { perDayMicros: STANDARD_COST / 2, perWeekMicros: null };
    const refused = await post(w.gateway.url, '/v1/messages?beta=true', { 'x-api-key': w.batchToken, ...CLAUDE_HEADERS }, { ...BODY, messages: [{ role: 'user', content: 'one more' }] });
    expect(refused.status).toBe(402);
    expect(JSON.parse(refused.body).error.type).toBe('billing_error');
    expect(fake.batchCreates()).toHaveLength(1);
  });

  it('a standard-tier token on the same gateway is untouched: straight to /v1/messages, no batch, the standard price', async () => {
    const fake = await fakeAnthropic();
    const w = await world({ anthropic: fake.url });
    expect(w.tokens.check(w.batchToken)).toMatchObject({ ok: true, grant: { tier: 'batch' } });
    expect(w.tokens.check(w.token)).toMatchObject({ ok: true, grant: { tier: 'standard' } });
    const r = await post(w.gateway.url, '/v1/messages?beta=true', { 'x-api-key': w.token, ...CLAUDE_HEADERS }, BODY);
    expect(r.status).toBe(200);
    expect(parseSse(r.body).map((e) => e.event)).toContain('ping'); // the upstream's own stream, passed through
    expect(fake.messageRequests()).toHaveLength(1);
    expect(fake.batchCreates()).toHaveLength(0);
    // count_tokens is not a billed answer: even a batch-tier token passes it straight through.
    const count = await post(w.gateway.url, '/v1/messages/count_tokens', { 'x-api-key': w.batchToken, 'anthropic-version': '2023-06-01' }, { model: 'claude-opus-5-5', messages: [] });
    expect(count.status).toBe(200);
    expect(fake.batchCreates()).toHaveLength(0);
    await waitFor('the answer metered', () => rows(w.db)[0]?.cost_micros === STANDARD_COST);
  });

  it('a results_url on another origin is not followed (the key goes to the upstream only): the client is told, nothing billed', async () => {
    const seen: Array<{ method: string; url: string }> = [];
    const elsewhere: string[] = [];
    const evil = http.createServer((req, res) => {
      elsewhere.push(String(req.headers['x-api-key']));
      res.end('{}');
    });
    const up = http.createServer((req, res) => {
      seen.push({ method: req.method!, url: req.url! });
      req.resume();
      const ended = req.method === 'GET';
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: 'msgbatch_01', type: 'message_batch', processing_status: ended ? 'ended' : 'in_progress', results_url: ended ? `http://127.0.0.1:${(evil.address() as { port: number }).port}/v1/messages/batches/msgbatch_01/results` : null }));
    });
    for (const srv of [evil, up]) {
      await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
      cleanups.push(() => new Promise<void>((r) => { srv.close(() => r()); srv.closeAllConnections(); }));
    }
    const w = await world({ anthropic: `http://127.0.0.1:${(up.address() as { port: number }).port}` });
    const r = await post(w.gateway.url, '/v1/messages?beta=true', { 'x-api-key': w.batchToken, ...CLAUDE_HEADERS }, BODY);
    expect(sseEvents(r.body)).toEqual([{ event: 'error', data: { type: 'error', error: { type: 'overloaded_error', message: expect.stringMatching(/results_url is on 127\.0\.0\.1:\d+, not the upstream/) } } }]);
    expect(seen.map((q) => q.method)).toEqual(['POST', 'GET']);
    expect(elsewhere).toEqual([]);
    expect(rows(w.db)).toHaveLength(0);
  });
});

describe('the batch route across a musher restart (one store, two gateways in turn)', () => {
  function sharedDir(): string {
    const dir = mkdtempSync(join(tmpdir(), 'sl-gw-shared-'));
    cleanups.unshift(() => rmSync(dir, { recursive: true, force: true })); // removed after both gateways closed
    return dir;
  }
  function kept(db: Db): Array<Record<string, unknown>> {
    return db.prepare('SELECT * FROM gateway_batches ORDER BY created_at, rowid').all() as Array<Record<string, unknown>>;
  }

  it('the first gateway stops mid-poll; the same request sent to the next one follows the batch already sent: one batch, one charge', async () => {
    const fake = await fakeAnthropic();
    let open = false;
    fake.setBatchBehaviour({ endWhen: () => open });
    const dir = sharedDir();
    const first = await world({ anthropic: fake.url }, dir);

    const s1 = openStream(first.gateway.url, first.batchToken);
    // The client's first byte comes after the batch is kept: a crash from here on loses no batch.
    await s1.until((t) => t.includes(': keepalive'));
    expect(kept(first.db)).toMatchObject([{ batch_id: fake.batches[0]!.id, seat: 'dana', state: 'running', billed_at: null, custom_id: fake.batchCreates()[0]!.body.requests[0].custom_id }]);
    await waitFor('the batch polled', () => (fake.batches[0]?.polls ?? 0) >= 1);
    await first.gateway.close(); // musher goes away while the batch runs; its client's stream ends unanswered
    await s1.ended;
    expect(s1.text).not.toContain('message_start');

    // The harness sends the identical request again, to the musher that came back on the same store.
    const second = await world({ anthropic: fake.url }, dir);
    const s2 = openStream(second.gateway.url, first.batchToken);
    await waitFor('the batch followed', () => second.logLines.some((l) => l.includes(`follows Message Batch ${fake.batches[0]!.id}, sent before musher restarted — not sent again`)));
    await s2.until((t) => t.includes(': keepalive'));
    open = true;
    const answer = accumulate(sseEvents(await s2.ended));
    expect(answer).toEqual(resultMessage(fake));
    expect(fake.batchCreates()).toHaveLength(1);
    const [charge] = await waitFor('the answer metered', () => (rows(second.db).length === 1 ? rows(second.db) : null));
    expect(charge).toMatchObject({ request_id: fake.batches[0]!.id, seat: 'dana', cost_micros: STANDARD_COST / 2 });
    expect(kept(second.db)).toMatchObject([{ batch_id: fake.batches[0]!.id, state: 'ended', billed_at: second.clock.now() }]);

    // A third musher on the same store (no memory of it), the request once more within the window: the same answer
    // from the same batch, streamed but not billed again.
    await second.gateway.close();
    const third = await world({ anthropic: fake.url }, dir);
    const again = await post(third.gateway.url, '/v1/messages?beta=true', { 'x-api-key': first.batchToken, ...CLAUDE_HEADERS }, BODY);
    expect(accumulate(sseEvents(again.body))).toEqual(answer);
    expect(fake.batchCreates()).toHaveLength(1);
    expect(third.logLines.some((l) => l.includes(`Message Batch ${fake.batches[0]!.id}'s answer was billed before`))).toBe(true);
    expect(rows(third.db)).toHaveLength(1);
    expect(third.rail.seatSpendMicros('dana', 0, Number.MAX_SAFE_INTEGER)).toBe(STANDARD_COST / 2);
  });

  it('a kept batch the API no longer knows (404) is given up for a new one: the client still gets its answer', async () => {
    const fake = await fakeAnthropic();
    const w = await world({ anthropic: fake.url });
    const dedupKey = createHash('sha256').update('dana').update('\0').update(JSON.stringify(BODY)).digest('hex');
    w.batches.created({ batchId: 'msgbatch_gone', dedupKey, seat: 'dana', customId: 'sleds-gone', createdAtMs: w.clock.now() });
    const r = await post(w.gateway.url, '/v1/messages?beta=true', { 'x-api-key': w.batchToken, ...CLAUDE_HEADERS }, BODY);
    expect(accumulate(sseEvents(r.body))).toEqual(resultMessage(fake));
    expect(fake.requests.filter((q) => q.pathname === '/v1/messages/batches/msgbatch_gone')).toHaveLength(1);
    expect(fake.batchCreates()).toHaveLength(1);
    expect(kept(w.db).map((b) => [b.batch_id, b.state])).toEqual([['msgbatch_gone', 'failed'], [fake.batches[0]!.id, 'ended']]);
    await waitFor('the answer metered', () => rows(w.db).length === 1);
  });

  it('a batch that ended without an answer is not followed again; a kept batch is forgotten after a day', async () => {
    const fake = await fakeAnthropic();
    const dir = sharedDir();
    const first = await world({ anthropic: fake.url }, dir);
    fake.setBatchBehaviour({ outcomes: [{ errored: { type: 'invalid_request_error', message: 'messages.0: bad' } }] });
    await post(first.gateway.url, '/v1/messages?beta=true', { 'x-api-key': first.batchToken, ...CLAUDE_HEADERS }, BODY);
    expect(kept(first.db)).toMatchObject([{ state: 'failed' }]);
    await first.gateway.close();

    const second = await world({ anthropic: fake.url }, dir);
    const r = await post(second.gateway.url, '/v1/messages?beta=true', { 'x-api-key': first.batchToken, ...CLAUDE_HEADERS }, BODY);
    expect(accumulate(sseEvents(r.body))).toEqual(resultMessage(fake, 1));
    expect(fake.batchCreates()).toHaveLength(2);
    expect(kept(second.db).map((b) => b.state)).toEqual(['failed', 'ended']);

    // A day and a bit on, the next batch sent sweeps the old rows (and the old answer no longer stands in for a new one).
    second.clock.t += 25 * 3_600_000;
    await post(second.gateway.url, '/v1/messages?beta=true', { 'x-api-key': first.batchToken, ...CLAUDE_HEADERS }, BODY);
    expect(fake.batchCreates()).toHaveLength(3);
    expect(kept(second.db)).toMatchObject([{ batch_id: fake.batches[2]!.id, state: 'ended' }]);
  });
});

describe('flex (OpenAI, a batch-tier token)', () => {
  async function fakeOpenAI(opts: StartFakeOpenAIOptions = {}) {
    const oai = await startFakeOpenAI({ reply: 'hello from codex', usage: { input_tokens: 1200, cached_tokens: 1024, output_tokens: 300, reasoning_tokens: 128 }, ...opts });
    cleanups.push(() => oai.close());
    return oai;
  }
  const REQUEST = { model: 'gpt-5.4', input: 'hi', stream: true };
  // gpt-5.4 at the standard price: (1200 − 1024) in × $2.50/M + 1024 cached × $0.25/M + 300 out × $15/M.
  const OPENAI_STANDARD = 440 + 256 + 4500;

  it('goes upstream with service_tier flex; "resource unavailable" 429s are waited out, never shown; metered at the flex tier (half)', async () => {
    const oai = await fakeOpenAI({ flexUnavailable: 2 });
    const w = await world({ openai: oai.origin });
    const r = await post(w.gateway.url, '/v1/responses', { authorization: `Bearer ${w.batchToken}` }, REQUEST);
    expect(r.status).toBe(200);
    const events = parseSse(r.body);
    expect(events.at(-1)!.data.response.service_tier).toBe('flex');
    expect(oai.responseRequests().map((q) => [q.status, q.serviceTier])).toEqual([[429, 'flex'], [429, 'flex'], [200, 'flex']]);
    expect(oai.responseRequests()[2]!.body).toEqual({ ...REQUEST, service_tier: 'flex' });
    expect(oai.responseRequests()[2]!.headers.authorization).toBe(`Bearer ${OPENAI_KEY}`);
    expect(r.headers['x-request-id']).toBe(oai.responseRequests()[2]!.requestId);
    const [row] = await waitFor('the metered answer', () => (rows(w.db).length === 1 ? rows(w.db) : null));
    expect(row).toMatchObject({ request_id: oai.responseRequests()[2]!.requestId, model: 'gpt-5.4', input_tokens: 176, cache_read: 1024, output_tokens: 300, cost_micros: OPENAI_STANDARD / 2 });
    expect(w.logLines.filter((l) => l.includes('no flex capacity for dana'))).toHaveLength(2);
  });

  it('no capacity through every retry: the client gets the 429 once they are spent; another 429 passes at once; a standard token asks no tier', async () => {
    const oai = await fakeOpenAI({ flexUnavailable: 10 });
    const w = await world({ openai: oai.origin });
    const r = await post(w.gateway.url, '/v1/responses', { authorization: `Bearer ${w.batchToken}` }, REQUEST);
    expect(r.status).toBe(429);
    expect(JSON.parse(r.body).error.code).toBe('resource_unavailable');
    expect(oai.responseRequests()).toHaveLength(4); // the first and 3 retries

    oai.setBehaviour({ flexUnavailable: 0, usageLimitRejection: { resetsAt: 1_800_000_000 } });
    const quota = await post(w.gateway.url, '/v1/responses', { authorization: `Bearer ${w.batchToken}` }, REQUEST);
    expect(quota.status).toBe(429);
    expect(JSON.parse(quota.body).error.type).toBe('usage_limit_reached');
    expect(oai.responseRequests()).toHaveLength(5);

    oai.setBehaviour({ usageLimitRejection: null });
    const standard = await post(w.gateway.url, '/v1/responses', { authorization: `Bearer ${w.token}` }, REQUEST);
    expect(standard.status).toBe(200);
    expect(oai.responseRequests()[5]!.serviceTier).toBeUndefined();
    await waitFor('the standard answer metered', () => rows(w.db)[0]?.cost_micros === OPENAI_STANDARD);
    expect(rows(w.db)).toHaveLength(1);
  });
});
