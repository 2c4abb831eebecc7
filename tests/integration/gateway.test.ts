/**
 * The gateway in process, against fake upstreams on 127.0.0.1 that speak the real wire formats: real sockets, a
 * real SQLite store, the repo's price table. Streaming is checked with a gate (the upstream holds the rest of its
 * answer until the test has read the first event), never with sleeps.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { Db } from '../../musher/store/db.js';
import { startGateway } from '../../musher/gateway/server.js';
import { allowanceLeft } from '../../musher/gateway/allowance.js';
import { gatewayWorld, post, prices, type GatewayWorld } from '../support/gateway-world.js';
import { startFakeAnthropic } from '../e2e/harness/fake-anthropic.js';
import { startFakeOpenAI } from '../e2e/harness/fake-openai.js';
import { parseSse } from '../e2e/harness/sse.js';
import { waitFor } from '../support/sleds-env.js';

const REAL_KEY = 'sk-ant-api03-REALPLATFORMKEY-0123456789abcdef';
const OPENAI_KEY = 'sk-proj-REALOPENAIKEY-0123456789';
const utc = () => 0;

const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

type World = GatewayWorld & { clock: { t: number; now(): number } };

async function world(upstreams: { anthropic?: string; openai?: string }, keys: { anthropic?: string | null; openai?: string | null } = {}): Promise<World> {
  const clock = { t: Date.UTC(2026, 11, 2, 15), now() { return this.t; } };
  const w = await gatewayWorld(cleanups, {
    upstreams,
    clock,
    platformKey: async (p) => (p === 'anthropic' ? (keys.anthropic === undefined ? REAL_KEY : keys.anthropic) : keys.openai === undefined ? OPENAI_KEY : keys.openai),
  });
  return { ...w, clock };
}

const MESSAGES_BODY = { model: 'claude-opus-5-5', max_tokens: 1024, stream: true, messages: [{ role: 'user', content: 'hello' }] };
const CLAUDE_HEADERS = { 'anthropic-version': '2023-06-01', 'anthropic-beta': 'claude-code-20250219,interleaved-thinking-2025-05-14' };

function rows(db: Db): Array<Record<string, unknown>> {
  return db.prepare('SELECT * FROM platform_key_usage ORDER BY ts, request_id').all() as Array<Record<string, unknown>>;
}

/**
 * An upstream that answers every POST /v1/messages with a fixed SSE stream in two parts: `head` at once, `tail`
 * when the test opens `gate` (or at once with no gate). Every response carries the same request-id: the same
 * response sent again, as a retry or a replay would.
 */
async function scriptedUpstream(head: string, tail: string, requestId: string | (() => string) = 'req_replayed_1') {
  const seen: Array<{ headers: http.IncomingHttpHeaders }> = [];
  let open: () => void = () => undefined;
  let gate: Promise<void> | null = null;
  let finished = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', async () => {
      seen.push({ headers: req.headers });
      res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'request-id': typeof requestId === 'string' ? requestId : requestId() });
      if (head === '') res.flushHeaders();
      else res.write(head);
      if (gate) await gate;
      res.end(tail, () => finished++);
    });
    res.on('error', () => undefined);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  cleanups.push(() => new Promise<void>((r) => { server.close(() => r()); server.closeAllConnections(); }));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    finished: () => finished,
    hold() {
      gate = new Promise<void>((r) => (open = r));
    },
    release() {
      open();
      gate = null;
    },
  };
}

const ev = (event: string, data: object) => `event: ${event}\ndata: ${JSON.stringify({ type: event, ...data })}\n\n`;
const START = ev('message_start', {
  message: { id: 'msg_scripted', type: 'message', role: 'assistant', model: 'claude-opus-5-5', content: [], stop_reason: null,
    usage: { input_tokens: 1000, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 }, output_tokens: 1, service_tier: 'standard' } },
}) + ev('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }) + ev('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'first words' } });
const REST = ev('content_block_delta', { index: 0, delta: { type: 'text_delta', text: ' and the rest' } }) + ev('content_block_stop', { index: 0 }) +
  ev('message_delta', { delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { input_tokens: 1000, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 500 } }) +
  ev('message_stop', {});
// claude-opus-5-5 in prices/effective: $4 / M input, $20 / M output → 1000 in + 500 out = $0.004 + $0.010.
const SCRIPTED_COST = 14_000;

/** Opens a streaming request and resolves once the first SSE event has arrived, with a way to read the rest. */
function openStream(base: string, token: string, path = '/v1/messages?beta=true') {
  return new Promise<{ status: number; first: string; rest: () => Promise<string>; abort: () => void }>((resolve, reject) => {
    const req = http.request(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': token, ...CLAUDE_HEADERS } }, (res) => {
      let text = '';
      let resolved = false;
      const ended = new Promise<string>((r) => res.on('end', () => r(text)));
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        text += c;
        if (!resolved && text.includes('\n\n')) {
          resolved = true;
          resolve({ status: res.statusCode!, first: text, rest: () => ended, abort: () => req.destroy() });
        }
      });
      res.on('error', () => undefined);
    });
    req.on('error', reject);
    req.end(JSON.stringify(MESSAGES_BODY));
  });
}

describe('the gateway', () => {
  it('streams without buffering: the client reads message_start while the upstream still holds the rest', async () => {
    const up = await scriptedUpstream(START, REST);
    const w = await world({ anthropic: up.url });
    up.hold();
    const s = await openStream(w.gateway.url, w.token);
    expect(s.status).toBe(200);
    expect(s.first.startsWith('event: message_start\n')).toBe(true);
    expect(up.finished()).toBe(0); // the upstream has not sent its end: the first event came through on its own
    expect(rows(w.db)).toHaveLength(0);
    up.release();
    const all = await s.rest();
    expect(all).toBe(START + REST); // byte for byte what the upstream sent
    const row = await waitFor('the metered response', () => rows(w.db)[0]);
    expect(row).toMatchObject({ request_id: 'req_replayed_1', seat: 'dana', project: 'acme/api', model: 'claude-opus-5-5', input_tokens: 1000, output_tokens: 500, cost_micros: SCRIPTED_COST, output_known: 1, source: 'gateway' });
  });

  it('a body sent in chunks, with no Content-Length, reaches the upstream whole and is metered', async () => {
    const fake = await startFakeAnthropic({ usage: { input_tokens: 100, output_tokens: 10, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 } });
    cleanups.push(() => fake.close());
    const w = await world({ anthropic: fake.url });
    const raw = JSON.stringify(MESSAGES_BODY);
    const status = await new Promise<number>((resolve, reject) => {
      const req = http.request(`${w.gateway.url}/v1/messages?beta=true`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': w.token, ...CLAUDE_HEADERS } }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode!));
      });
      req.on('error', reject);
      req.write(raw.slice(0, 20)); // two writes before end: node sends it chunked
      req.end(raw.slice(20));
    });
    expect(status).toBe(200);
    const [seen] = fake.messageRequests();
    expect(seen!.headers['transfer-encoding']).toBe('chunked');
    expect(seen!.rawBody).toBe(raw);
    const row = await waitFor('the metered response', () => rows(w.db)[0]);
    expect(row).toMatchObject({ input_tokens: 100, output_tokens: 10, output_known: 1 });
  });

  it('an upstream that sends its head and then thinks: the client gets the head at once', async () => {
    const up = await scriptedUpstream('', START + REST);
    const w = await world({ anthropic: up.url });
    up.hold();
    const head = await new Promise<{ status: number; requestId: string | undefined; res: http.IncomingMessage }>((resolve, reject) => {
      const req = http.request(`${w.gateway.url}/v1/messages?beta=true`, { method: 'POST', headers: { 'x-api-key': w.token, ...CLAUDE_HEADERS } }, (res) =>
        resolve({ status: res.statusCode!, requestId: res.headers['request-id'] as string | undefined, res }),
      );
      req.on('error', reject);
      req.end(JSON.stringify(MESSAGES_BODY));
    });
    expect(head).toMatchObject({ status: 200, requestId: 'req_replayed_1' });
    expect(up.finished()).toBe(0);
    up.release();
    let body = '';
    head.res.setEncoding('utf8').on('data', (c: string) => (body += c));
    await new Promise((r) => head.res.on('end', r));
    expect(body).toBe(START + REST);
  });

  it('swaps the local token for the real key, keeps the Anthropic headers, and meters exact tokens and cost from the real SSE', async () => {
    const fake = await startFakeAnthropic({ reply: 'Done: the tests pass.', usage: { input_tokens: 2000, output_tokens: 300, cache_read_input_tokens: 10_000, cache_creation_input_tokens: 500 } });
    cleanups.push(() => fake.close());
    const w = await world({ anthropic: fake.url });
    const r = await post(w.gateway.url, '/v1/messages?beta=true', { 'x-api-key': w.token, ...CLAUDE_HEADERS, connection: 'keep-alive' }, MESSAGES_BODY);
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    const events = parseSse(r.body);
    expect(events.map((e) => e.event)).toEqual(['message_start', 'content_block_start', 'ping', 'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop']);

    const [seen] = fake.messageRequests();
    expect(seen!.path).toBe('/v1/messages?beta=true');
    expect(seen!.headers['x-api-key']).toBe(REAL_KEY);
    expect(seen!.headers.authorization).toBeUndefined();
    expect(seen!.headers['anthropic-version']).toBe('2023-06-01');
    expect(seen!.headers['anthropic-beta']).toBe('claude-code-20250219,interleaved-thinking-2025-05-14');
    expect(JSON.stringify(seen!.headers)).not.toContain(w.token);
    expect(seen!.body).toEqual(MESSAGES_BODY);

    const row = await waitFor('the metered response', () => rows(w.db)[0]);
    // claude-opus-5-5: 2000 in × $4/M + 300 out × $20/M + 10,000 cache reads × $0.20/M + 500 5-minute writes × $5/M
    expect(row).toMatchObject({
      request_id: seen!.requestId,
      seat: 'dana',
      project: 'acme/api',
      model: 'claude-opus-5-5',
      input_tokens: 2000,
      output_tokens: 300,
      cache_read: 10_000,
      cache_write: 500,
      cost_micros: 8000 + 6000 + 2000 + 2500,
    });
    expect(w.logLines.join('\n')).not.toContain(REAL_KEY);
  });

  it('a non-streaming Messages response is metered from its JSON body, and count_tokens passes unmetered', async () => {
    const fake = await startFakeAnthropic({ usage: { input_tokens: 100, output_tokens: 10, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 } });
    cleanups.push(() => fake.close());
    const w = await world({ anthropic: fake.url });
    const r = await post(w.gateway.url, '/v1/messages', { 'x-api-key': w.token, 'anthropic-version': '2023-06-01' }, { ...MESSAGES_BODY, stream: false });
    expect(r.status).toBe(200);
    expect(JSON.parse(r.body).usage.output_tokens).toBe(10);
    const count = await post(w.gateway.url, '/v1/messages/count_tokens', { 'x-api-key': w.token, 'anthropic-version': '2023-06-01' }, { model: 'claude-opus-5-5', messages: [] });
    expect(count.status).toBe(200);
    expect(JSON.parse(count.body).input_tokens).toBeGreaterThan(0);
    expect(fake.requests.map((q) => q.pathname)).toEqual(['/v1/messages', '/v1/messages/count_tokens']);
    const all = await waitFor('the metered response', () => (rows(w.db).length === 1 ? rows(w.db) : null));
    expect(all[0]).toMatchObject({ input_tokens: 100, output_tokens: 10, cost_micros: 400 + 200 });
  });

  it('the same response seen twice (a retry, a replay) is counted once', async () => {
    const up = await scriptedUpstream(START, REST, 'req_same');
    const w = await world({ anthropic: up.url });
    for (let i = 0; i < 2; i++) {
      const r = await post(w.gateway.url, '/v1/messages?beta=true', { 'x-api-key': w.token, ...CLAUDE_HEADERS }, MESSAGES_BODY);
      expect(r.body).toBe(START + REST);
    }
    expect(up.seen).toHaveLength(2);
    await waitFor('both responses metered', () => w.logLines.filter((l) => l.includes('req_same')).length >= 1);
    expect(rows(w.db)).toHaveLength(1);
    expect(w.rail.seatSpendMicros('dana', 0, Number.MAX_SAFE_INTEGER)).toBe(SCRIPTED_COST);
  });

  it('the allowance: refused with 402 and the seat\'s message before anything reaches the upstream; a stream under way is never cut; the next day opens again', async () => {
    let n = 0;
    const up = await scriptedUpstream(START, REST, () => `req_${++n}`);
    const w = await world({ anthropic: up.url });
    w.allowance.current = { perDayMicros: 20_000, perWeekMicros: null }; // $0.02 a day
    expect(allowanceLeft(w.rail, 'dana', w.allowance.current, w.clock.now(), utc)).toEqual({ dayMicros: 20_000, weekMicros: null });

    const first = await post(w.gateway.url, '/v1/messages?beta=true', { 'x-api-key': w.token, ...CLAUDE_HEADERS }, MESSAGES_BODY);
    expect(first.status).toBe(200);
    await waitFor('the spend recorded', () => w.rail.seatSpendMicros('dana', 0, Number.MAX_SAFE_INTEGER) === SCRIPTED_COST);
    expect(allowanceLeft(w.rail, 'dana', w.allowance.current, w.clock.now(), utc)).toEqual({ dayMicros: 20_000 - SCRIPTED_COST, weekMicros: null });

    // Under the cap, a second stream starts and is held; meanwhile the day goes over its cap (another response).
    up.hold();
    const second = await openStream(w.gateway.url, w.token);
    w.rail.record({ requestId: 'req_other_session', seat: 'dana', project: null, model: 'claude-opus-5-5', timestampMs: w.clock.now(), inputTokens: 1, outputTokens: 1, cacheWriteTokens: 0, cacheReadTokens: 0, costMicros: 10_000, source: 'gateway' });
    up.release();
    expect(await second.rest()).toBe(START + REST); // the response already streaming ran to its end
    await waitFor('the second response recorded', () => rows(w.db).length === 3);

    const refused = await post(w.gateway.url, '/v1/messages?beta=true', { 'x-api-key': w.token, ...CLAUDE_HEADERS }, MESSAGES_BODY);
    expect(refused.status).toBe(402);
    expect(refused.headers['x-should-retry']).toBe('false');
    expect(JSON.parse(refused.body)).toEqual({
      type: 'error',
      error: { type: 'billing_error', message: 'allowance for dana spent: $0.02 today — it renews at midnight; type /sled exits for the other ways on' },
      request_id: null,
    });
    expect(up.seen).toHaveLength(2); // the refused request never reached the upstream
    expect(allowanceLeft(w.rail, 'dana', w.allowance.current, w.clock.now(), utc)).toEqual({ dayMicros: 0, weekMicros: null });
    expect(w.logLines.some((l) => l.startsWith('WARN gateway: dana refused, allowance spent today'))).toBe(true);

    // Local midnight: a new day's allowance.
    w.clock.t = Date.UTC(2026, 11, 3, 0, 0, 1);
    const nextDay = await post(w.gateway.url, '/v1/messages?beta=true', { 'x-api-key': w.token, ...CLAUDE_HEADERS }, MESSAGES_BODY);
    expect(nextDay.status).toBe(200);
    expect(up.seen).toHaveLength(3);
    await waitFor('the next day\'s response recorded', () => rows(w.db).length === 4);

    // A weekly cap already spent is said as the week.
    w.allowance.current = { perDayMicros: 20_000, perWeekMicros: 30_000 };
    const week = await post(w.gateway.url, '/v1/messages?beta=true', { 'x-api-key': w.token, ...CLAUDE_HEADERS }, MESSAGES_BODY);
    expect(week.status).toBe(402);
    expect(JSON.parse(week.body).error.message).toMatch(/^allowance for dana spent: \$0\.03 this week — it renews on Monday/);
    expect(up.seen).toHaveLength(3);
  });

  it('refuses a request without the seat\'s local token, with a wrong one, or an expired one: 401 in each provider\'s envelope, nothing sent upstream', async () => {
    const fake = await startFakeAnthropic({});
    const oai = await startFakeOpenAI({});
    cleanups.push(() => fake.close(), () => oai.close());
    const w = await world({ anthropic: fake.url, openai: oai.origin });
    const expired = w.tokens.mint({ seat: 'dana', project: null, sessionId: 's0', expiresAtMs: w.clock.t - 1 });
    const cases: Array<[string, Record<string, string>, RegExp]> = [
      ['none', {}, /no local token/],
      ['wrong', { 'x-api-key': 'sleds_gw_notonemusherminted' }, /not one musher minted/],
      ['the real key itself', { 'x-api-key': REAL_KEY }, /not one musher minted/],
      ['expired', { authorization: `Bearer ${expired}` }, /expired/],
    ];
    for (const [name, headers, message] of cases) {
      const a = await post(w.gateway.url, '/v1/messages?beta=true', { ...headers, 'anthropic-version': '2023-06-01' }, MESSAGES_BODY);
      expect(a.status, name).toBe(401);
      expect(a.headers['x-should-retry']).toBe('false');
      const body = JSON.parse(a.body);
      expect(body.type).toBe('error');
      expect(body.error.type).toBe('authentication_error');
      expect(body.error.message).toMatch(message);
      expect(body.error.message).toMatch(/\/sled 1/);

      const o = await post(w.gateway.url, '/v1/responses', headers.authorization ? headers : headers['x-api-key'] ? { authorization: `Bearer ${headers['x-api-key']}` } : {}, { model: 'gpt-5.4', input: 'hi', stream: true });
      expect(o.status, name).toBe(401);
      expect(JSON.parse(o.body).error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_api_key' });
    }
    expect(fake.requests).toHaveLength(0);
    expect(oai.requests).toHaveLength(0);
  });

  it('OpenAI Responses: the Bearer token is swapped for the key and usage comes from response.completed; project from the URL prefix', async () => {
    const oai = await startFakeOpenAI({ reply: 'hello from codex', usage: { input_tokens: 1200, cached_tokens: 1024, output_tokens: 300, reasoning_tokens: 128 } });
    cleanups.push(() => oai.close());
    const w = await world({ openai: oai.origin });
    const r = await post(w.gateway.url, '/p/acme%2Fweb/v1/responses', { authorization: `Bearer ${w.token}` }, { model: 'gpt-5.4', input: 'hi', stream: true });
    expect(r.status).toBe(200);
    expect(r.headers['x-request-id']).toBe(oai.responseRequests()[0]!.requestId);
    expect(parseSse(r.body).at(-1)!.event).toBe('response.completed');
    const [seen] = oai.responseRequests();
    expect(seen!.pathname).toBe('/v1/responses');
    expect(seen!.headers.authorization).toBe(`Bearer ${OPENAI_KEY}`);
    const row = await waitFor('the metered response', () => rows(w.db)[0]);
    // gpt-5.4: (1200 − 1024) in × $2.50/M + 1024 cached × $0.25/M + 300 out × $15/M
    expect(row).toMatchObject({ request_id: seen!.requestId, seat: 'dana', project: 'acme/web', model: 'gpt-5.4', input_tokens: 176, cache_read: 1024, output_tokens: 300, cost_micros: 440 + 256 + 4500 });
  });

  it('OpenAI Responses: the allowance refusal is a 400 in the OpenAI envelope (Codex shows a 400 once), nothing sent upstream', async () => {
    const oai = await startFakeOpenAI({});
    cleanups.push(() => oai.close());
    const w = await world({ openai: oai.origin });
    w.allowance.current = { perDayMicros: 0, perWeekMicros: null };
    const r = await post(w.gateway.url, '/v1/responses', { authorization: `Bearer ${w.token}` }, { model: 'gpt-5.4', input: 'hi', stream: true });
    expect(r.status).toBe(400);
    expect(JSON.parse(r.body)).toEqual({
      error: { message: 'allowance for dana spent: $0.00 today — it renews at midnight; type /sled exits for the other ways on', type: 'invalid_request_error', param: null, code: 'allowance_spent' },
    });
    expect(oai.requests).toHaveLength(0);
  });

  it('ANTHROPIC_AUTH_TOKEN-style Bearer works too; an unknown model is recorded unpriced, not as $0', async () => {
    const fake = await startFakeAnthropic({ model: 'claude-from-the-future-9', usage: { input_tokens: 10, output_tokens: 2, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 } });
    cleanups.push(() => fake.close());
    const w = await world({ anthropic: fake.url });
    const r = await post(w.gateway.url, '/v1/messages', { authorization: `Bearer ${w.token}`, 'anthropic-version': '2023-06-01' }, MESSAGES_BODY);
    expect(r.status).toBe(200);
    expect(fake.messageRequests()[0]!.headers['x-api-key']).toBe(REAL_KEY);
    expect(fake.messageRequests()[0]!.headers.authorization).toBeUndefined();
    const row = await waitFor('the metered response', () => rows(w.db)[0]);
    expect(row).toMatchObject({ model: 'claude-from-the-future-9', cost_micros: null });
    expect(w.rail.spend(0, Number.MAX_SAFE_INTEGER)).toEqual([{ seat: 'dana', model: 'claude-from-the-future-9', costMicros: 0, unpricedRecords: 1, records: 1 }]);
  });

  it("the user's own ANTHROPIC_API_KEY beside the session's token (Claude Code sends both): the token is used, the user's key goes nowhere", async () => {
    const fake = await startFakeAnthropic({ usage: { input_tokens: 10, output_tokens: 2, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 } });
    cleanups.push(() => fake.close());
    const w = await world({ anthropic: fake.url });
    const userKey = 'sk-ant-api03-THE-USERS-OWN-KEY-0123456789';
    const r = await post(w.gateway.url, '/v1/messages', { 'x-api-key': userKey, authorization: `Bearer ${w.token}`, 'anthropic-version': '2023-06-01' }, MESSAGES_BODY);
    expect(r.status, r.body).toBe(200);
    expect(fake.messageRequests()[0]!.headers['x-api-key']).toBe(REAL_KEY);
    expect(JSON.stringify(fake.messageRequests()[0]!.headers)).not.toContain(userKey);
    await waitFor('the metered response', () => rows(w.db)[0]);
    // A key that is no token of musher's, alone, is still refused.
    const alone = await post(w.gateway.url, '/v1/messages', { 'x-api-key': userKey, 'anthropic-version': '2023-06-01' }, MESSAGES_BODY);
    expect(alone.status).toBe(401);
  });

  it('upstream errors pass through verbatim and unmetered; an unreachable upstream is a 529 that says so', async () => {
    const fake = await startFakeAnthropic({ usageLimitRejection: { claim: 'five_hour', resetsAt: 1_800_000_000 } });
    cleanups.push(() => fake.close());
    const w = await world({ anthropic: fake.url });
    const r = await post(w.gateway.url, '/v1/messages?beta=true', { 'x-api-key': w.token, ...CLAUDE_HEADERS }, MESSAGES_BODY);
    expect(r.status).toBe(429);
    expect(r.headers['request-id']).toBe(fake.messageRequests()[0]!.requestId);
    expect(r.headers['anthropic-ratelimit-unified-status']).toBe('rejected');
    expect(JSON.parse(r.body).error.type).toBe('rate_limit_error');

    const dead = await world({ anthropic: 'http://127.0.0.1:1' });
    const u = await post(dead.gateway.url, '/v1/messages', { 'x-api-key': dead.token, 'anthropic-version': '2023-06-01' }, MESSAGES_BODY);
    expect(u.status).toBe(529);
    expect(JSON.parse(u.body).error).toMatchObject({ type: 'overloaded_error' });
    expect(JSON.parse(u.body).error.message).toMatch(/127\.0\.0\.1:1 is unreachable \(ECONNREFUSED\)/);
    expect(rows(w.db)).toHaveLength(0);
  });

  it('no platform key configured: one clear error naming the command that sets it', async () => {
    const fake = await startFakeAnthropic({});
    cleanups.push(() => fake.close());
    const w = await world({ anthropic: fake.url }, { anthropic: null });
    const r = await post(w.gateway.url, '/v1/messages', { 'x-api-key': w.token, 'anthropic-version': '2023-06-01' }, MESSAGES_BODY);
    expect(r.status).toBe(500);
    expect(r.headers['x-should-retry']).toBe('false');
    expect(JSON.parse(r.body).error.message).toMatch(/no anthropic platform key configured — run 'sleds key set anthropic'/);
    expect(fake.requests).toHaveLength(0);
  });

  it('a client that goes away mid-stream: the gateway reads on and meters the real usage when it comes', async () => {
    const up = await scriptedUpstream(START, REST, 'req_cut');
    const w = await world({ anthropic: up.url });
    up.hold();
    const s = await openStream(w.gateway.url, w.token);
    s.abort();
    await waitFor('the gateway reading on', () => w.logLines.some((l) => /dana's client left before the end of its anthropic response — reading on/.test(l)));
    expect(rows(w.db)).toHaveLength(0);
    up.release();
    const row = await waitFor('the response metered', () => rows(w.db)[0]);
    expect(row).toMatchObject({ request_id: 'req_cut', input_tokens: 1000, output_tokens: 500, output_known: 1, cost_micros: SCRIPTED_COST });
  });

  it('refuses Codex\'s WebSocket upgrade with 426, so it falls back to POST + SSE', async () => {
    const w = await world({});
    const status = await new Promise<number>((resolve, reject) => {
      const req = http.request(`${w.gateway.url}/v1/responses`, { headers: { connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-version': '13', 'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==' } });
      req.on('response', (res) => {
        res.resume();
        resolve(res.statusCode!);
      });
      req.on('upgrade', () => reject(new Error('upgraded')));
      req.on('error', reject);
      req.end();
    });
    expect(status).toBe(426);
  });

  it('binds loopback only', async () => {
    const base = { upstreams: { anthropic: 'http://127.0.0.1:9', openai: 'http://127.0.0.1:9' } };
    const w = await world({});
    const opts = { ...base, tokens: w.tokens, platformKeys: w.rail, batches: w.batches, prices, clock: w.clock, log: { info() {}, warn() {}, error() {} }, platformKey: async () => null, allowance: () => w.allowance.current };
    for (const host of ['0.0.0.0', '::', '192.168.1.20', 'example.com']) {
      await expect(startGateway({ ...opts, host }), host).rejects.toThrow(/^gateway binds 127\.0\.0\.1 only/);
    }
    for (const [host, prefix] of [['::1', 'http://[::1]:'], ['localhost', 'http://127.0.0.1:']] as const) {
      const g = await startGateway({ ...opts, host });
      cleanups.push(() => g.close());
      expect(g.url.startsWith(prefix)).toBe(true);
    }
    expect(w.gateway.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });
});
