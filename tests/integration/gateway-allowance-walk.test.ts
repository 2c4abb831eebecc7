/**
 * The allowance cannot be walked past (issue 11, point 8): a client that closes its stream early is still metered at
 * the real output, and requests started together cannot spend past the allowance by more than one request's
 * estimate. The gateway in process against the fake Anthropic and OpenAI APIs (real SSE) on 127.0.0.1, real
 * sockets, a real SQLite rail, the repo's price table. The drain deadline runs on timers the test fires by hand.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { estimateRequest } from '../../core/gateway/request-estimate.js';
import type { Db } from '../../musher/store/db.js';
import { gatewayWorld, post, prices, type GatewayWorld } from '../support/gateway-world.js';
import { ManualTimers } from '../support/manual-timers.js';
import { startFakeAnthropic, type FakeAnthropic } from '../e2e/harness/fake-anthropic.js';
import { startFakeOpenAI, type FakeOpenAI } from '../e2e/harness/fake-openai.js';
import { waitFor } from '../support/sleds-env.js';
const NOW = Date.UTC(2026, 11, 2, 15);

const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

type World = GatewayWorld & {
  timers: ManualTimers;
  /** Set: reading the platform key fails (a locked keyring). */
  keyFails: { current: boolean };
};

async function world(upstreams: { anthropic?: string; openai?: string }, drain = { maxBytes: 64 * 1024, deadlineMs: 15_000 }): Promise<World> {
  const keyFails = { current: false };
  const timers = new ManualTimers();
  const w = await gatewayWorld(cleanups, {
    upstreams,
    clock: { now: () => NOW },
    timers,
    drain,
    platformKey: async (p) => {
      if (keyFails.current) throw new Error('the keyring is locked');
      return p === 'anthropic' ? 'sk-ant-api03-REALKEY' : 'sk-proj-REALKEY';
    },
  });
  return { ...w, timers, keyFails };
}

function rows(db: Db): Array<Record<string, any>> {
  return db.prepare('SELECT * FROM platform_key_usage ORDER BY ts, request_id').all() as Array<Record<string, any>>;
}

const MESSAGES = '/v1/messages?beta=true';
const RESPONSES = '/v1/responses';
const HEADERS = { anthropic: (t: string) => ({ 'x-api-key': t, 'anthropic-version': '2023-06-01' }), openai: (t: string) => ({ authorization: `Bearer ${t}` }) };

/**
 * Reads a stream until the event `until` has arrived whole, then destroys the socket (what a client that has what it
 * wants does); resolves with what it read.
 */
function readUntilThenClose(base: string, path: string, headers: Record<string, string>, body: unknown, until: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        text += c;
        const at = text.lastIndexOf(`event: ${until}\n`);
        if (at >= 0 && text.indexOf('\n\n', at) >= 0) {
          req.destroy();
          resolve(text);
        }
      });
      res.on('error', () => undefined);
      res.on('end', () => reject(new Error(`the stream ended before ${until}: ${text}`)));
    });
    req.on('error', () => undefined);
    req.end(JSON.stringify(body));
  });
}

/** The gateway has seen the client go: it says it reads on (today's code instead records the cut response at once). */
function clientGoneSeen(w: World): Promise<unknown> {
  return waitFor('the gateway to see the client go', () => w.logLines.some((l) => /client left/.test(l)) || rows(w.db).length > 0 || w.logLines.some((l) => /not metered/.test(l)), 5000);
}

/** A gate the fake upstream waits on before its final usage. */
function gate() {
  let open!: () => void;
  const p = new Promise<void>((r) => (open = r));
  return { wait: () => p, open };
}

// claude-opus-5-5 in prices/effective: $4 / M input, $20 / M output. gpt-5.4: $2.50 / M input, $15 / M output.
const REPLY = 'Here is the whole refactor: the parser now reads each line once, the cache is keyed by path, and the tests cover the three cases that broke. '.repeat(4);
const TOOL_INPUT = { path: 'src/parser.ts', content: 'export function parse(line: string) { return line.split(","); }\n'.repeat(6) };

async function fakeAnthropic(opts: Parameters<typeof startFakeAnthropic>[0]): Promise<FakeAnthropic> {
  const f = await startFakeAnthropic(opts);
  cleanups.push(() => f.close());
  return f;
}
async function fakeOpenAI(opts: Parameters<typeof startFakeOpenAI>[0]): Promise<FakeOpenAI> {
  const f = await startFakeOpenAI(opts);
  cleanups.push(() => f.close());
  return f;
}

const ANTHROPIC_BODY = { model: 'claude-opus-5-5', max_tokens: 4096, stream: true, messages: [{ role: 'user', content: 'refactor the parser' }] };
const OPENAI_BODY = { model: 'gpt-5.4', input: 'refactor the parser', stream: true };
const USAGE = { input_tokens: 1000, output_tokens: 700, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 };

describe('a stream the client closes early is metered at its real output', () => {
  it('Anthropic: the client reads through content_block_stop and hangs up; the message_delta sent after that is what the rail records', async () => {
    const tail = gate();
    const fake = await fakeAnthropic({ reply: [{ type: 'text', text: REPLY }, { type: 'tool_use', name: 'Write', input: TOOL_INPUT }], usage: USAGE, holdBeforeMessageDelta: tail.wait });
    const w = await world({ anthropic: fake.url });

    const read = await readUntilThenClose(w.gateway.url, MESSAGES, HEADERS.anthropic(w.token), ANTHROPIC_BODY, 'content_block_stop');
    expect(read.split('event: content_block_stop\n')).toHaveLength(3); // both blocks whole: the client has the answer
    expect(read).not.toContain('message_delta');
    await clientGoneSeen(w);
    tail.open(); // only now, with the client gone, does the upstream send its final usage

    const row = await waitFor('the response metered', () => rows(w.db)[0]);
    expect(row).toMatchObject({ seat: 'dana', model: 'claude-opus-5-5', input_tokens: 1000, output_tokens: 700, output_known: 1, cost_micros: 1000 * 4 + 700 * 20 });
    expect(w.timers.pending).toHaveLength(0); // the drain deadline is cleared once metered
  });

  it('Anthropic: an upstream that ends without message_delta is metered from the output deltas, never at the placeholder', async () => {
    const fake = await fakeAnthropic({ reply: [{ type: 'text', text: REPLY }, { type: 'tool_use', name: 'Write', input: TOOL_INPUT }], usage: USAGE, endBeforeMessageDelta: true });
    const w = await world({ anthropic: fake.url });
    const r = await post(w.gateway.url, MESSAGES, HEADERS.anthropic(w.token), ANTHROPIC_BODY);
    expect(r.status).toBe(200);
    expect(r.body).not.toContain('message_delta');

    const row = await waitFor('the response metered', () => rows(w.db)[0]);
    // What was seen: the text and the tool call's JSON. A real tokenizer runs about 4 characters a token on these.
    const seenChars = REPLY.length + JSON.stringify(TOOL_INPUT).length;
    expect(row.output_known).toBe(0);
    expect(row.input_tokens).toBe(1000);
    expect(row.output_tokens).toBeGreaterThanOrEqual(Math.ceil(seenChars / 4));
    expect(row.cost_micros).toBe(1000 * 4 + row.output_tokens * 20);
  });

  it('Anthropic: the client hangs up and the upstream stalls before its usage: at the drain deadline the deltas seen are metered', async () => {
    const never = gate();
    cleanups.push(() => never.open());
    const fake = await fakeAnthropic({ reply: REPLY, usage: USAGE, holdBeforeMessageDelta: never.wait });
    const w = await world({ anthropic: fake.url });
    await readUntilThenClose(w.gateway.url, MESSAGES, HEADERS.anthropic(w.token), ANTHROPIC_BODY, 'content_block_stop');
    await waitFor('the gateway reading on after the client left', () => w.logLines.some((l) => /client left/.test(l)), 5000);
    expect(rows(w.db)).toHaveLength(0); // still waiting for the real usage
    expect(w.timers.pending).toHaveLength(1); // the deadline
    w.timers.fireAll();

    const row = await waitFor('the response metered', () => rows(w.db)[0]);
    expect(row.output_known).toBe(0);
    expect(row.output_tokens).toBeGreaterThanOrEqual(Math.ceil(REPLY.length / 4));
    expect(row.cost_micros).toBe(1000 * 4 + row.output_tokens * 20);
  });

  it('Anthropic: what is read after the client left is capped; past the cap the upstream is cut and the deltas seen are metered', async () => {
    // An upstream that, once the client is gone, keeps writing far past the cap and never ends.
    const START = sse('message_start', { type: 'message_start', message: { id: 'msg_long', type: 'message', role: 'assistant', model: 'claude-opus-5-5', content: [], stop_reason: null, usage: { input_tokens: 1000, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 1 } } });
    const block = (index: number, text: string) =>
      sse('content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '' } }) +
      sse('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'text_delta', text } }) +
      sse('content_block_stop', { type: 'content_block_stop', index });
    const more = gate();
    let upstreamClosed = false;
    const server = http.createServer((req, res) => {
      req.resume();
      req.on('end', async () => {
        res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'request-id': 'req_long' });
        res.write(START + block(0, REPLY));
        await more.wait();
        for (let i = 1; i <= 50 && !res.destroyed; i++) res.write(block(i, 'x'.repeat(4000)));
      });
      res.on('close', () => (upstreamClosed = true));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    cleanups.push(() => new Promise<void>((r) => { more.open(); server.close(() => r()); server.closeAllConnections(); }));
    const w = await world({ anthropic: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }, { maxBytes: 16 * 1024, deadlineMs: 15_000 });

    await readUntilThenClose(w.gateway.url, MESSAGES, HEADERS.anthropic(w.token), ANTHROPIC_BODY, 'content_block_stop');
    await clientGoneSeen(w);
    more.open();
    await waitFor('the gateway to cut the upstream at the cap', () => upstreamClosed, 5000);
    const row = await waitFor('the response metered', () => rows(w.db)[0]);
    expect(row).toMatchObject({ request_id: 'req_long', output_known: 0, input_tokens: 1000 });
    // The deltas read before the cap count too: more than the first block alone.
    expect(row.output_tokens).toBeGreaterThan(Math.ceil(REPLY.length / 2));
    expect(w.timers.pending).toHaveLength(0);
  });

  it('OpenAI Responses: the client hangs up after the last output item; the response.completed sent after that is what the rail records', async () => {
    const tail = gate();
    const oai = await fakeOpenAI({ reply: REPLY, usage: { input_tokens: 1200, cached_tokens: 1024, output_tokens: 300, reasoning_tokens: 0 }, holdBeforeCompleted: tail.wait });
    const w = await world({ openai: oai.origin });
    const read = await readUntilThenClose(w.gateway.url, RESPONSES, HEADERS.openai(w.token), OPENAI_BODY, 'response.output_item.done');
    expect(read).not.toContain('response.completed');
    await clientGoneSeen(w);
    tail.open();
    const row = await waitFor('the response metered', () => rows(w.db)[0]);
    // gpt-5.4: (1200 − 1024) in × $2.50/M + 1024 cached × $0.25/M + 300 out × $15/M
    expect(row).toMatchObject({ model: 'gpt-5.4', input_tokens: 176, cache_read: 1024, output_tokens: 300, output_known: 1, cost_micros: 440 + 256 + 4500 });
  });

  it('OpenAI Responses: a stream that ends without response.completed is metered from its deltas (and the request for the input side)', async () => {
    const oai = await fakeOpenAI({ reply: REPLY, endBeforeCompleted: true });
    const w = await world({ openai: oai.origin });
    const r = await post(w.gateway.url, RESPONSES, HEADERS.openai(w.token), OPENAI_BODY);
    expect(r.status).toBe(200);
    const row = await waitFor('the response metered', () => rows(w.db)[0]);
    expect(row.model).toBe('gpt-5.4');
    expect(row.output_known).toBe(0);
    expect(row.output_tokens).toBeGreaterThanOrEqual(Math.ceil(REPLY.length / 4));
    expect(row.input_tokens).toBeGreaterThan(0);
    expect(row.cost_micros).toBeGreaterThanOrEqual(row.output_tokens * 15);
  });
});

function sse(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

describe('concurrent requests cannot walk past the allowance', () => {
  // Each request asks for up to 10,000 output tokens and is billed 1000 in + 9000 out at the fake.
  const PROMPT = 'Refactor the parser so that it reads each line once. '.repeat(80);
  const cases = [
    {
      provider: 'anthropic' as const,
      path: MESSAGES,
      body: { model: 'claude-opus-5-5', max_tokens: 10_000, stream: true, messages: [{ role: 'user', content: PROMPT }] },
      cost: 1000 * 4 + 9000 * 20,
      refusal: { status: 402, type: (b: any) => b.error.type, want: 'billing_error', message: (b: any) => b.error.message as string },
      async upstream() {
        const f = await fakeAnthropic({ reply: 'done', usage: { input_tokens: 1000, output_tokens: 9000, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 } });
        return { anthropic: f.url, reached: () => f.messageRequests().length };
      },
    },
    {
      provider: 'openai' as const,
      path: RESPONSES,
      body: { model: 'gpt-5.4', input: PROMPT, max_output_tokens: 10_000, stream: true },
      cost: 1000 * 2.5 + 9000 * 15,
      refusal: { status: 400, type: (b: any) => b.error.code, want: 'allowance_spent', message: (b: any) => b.error.message as string },
      async upstream() {
        const f = await fakeOpenAI({ reply: 'done', usage: { input_tokens: 1000, cached_tokens: 0, output_tokens: 9000, reasoning_tokens: 0 } });
        return { openai: f.origin, reached: () => f.responseRequests().length };
      },
    },
  ];

  for (const c of cases) {
    it(`${c.provider}: 20 requests fired at once against a $1 allowance spend at most the allowance plus one request's estimate; the rest are refused; nothing stays reserved`, async () => {
      const up = await c.upstream();
      const w = await world(up);
      w.allowance.current = { perDayMicros: 1_000_000, perWeekMicros: null };
      const estimate = estimateRequest(prices, c.provider, c.body, Buffer.byteLength(JSON.stringify(c.body)), NOW).costMicros;
      expect(estimate).toBeGreaterThanOrEqual(c.cost); // the estimate errs high

      const replies = await Promise.all(Array.from({ length: 20 }, () => post(w.gateway.url, c.path, HEADERS[c.provider](w.token), c.body)));
      const passed = replies.filter((r) => r.status === 200);
      const refused = replies.filter((r) => r.status !== 200);
      expect(passed.length).toBeGreaterThan(0);
      for (const r of refused) {
        expect(r.status).toBe(c.refusal.status);
        expect(c.refusal.type(JSON.parse(r.body))).toBe(c.refusal.want);
        expect(c.refusal.message(JSON.parse(r.body))).toMatch(/^allowance for dana /);
      }
      expect(up.reached()).toBe(passed.length); // a refused request never reached the upstream

      await waitFor('every answered request metered', () => rows(w.db).length === passed.length);
      const spent = w.rail.seatSpendMicros('dana', 0, Number.MAX_SAFE_INTEGER);
      expect(spent).toBe(passed.length * c.cost);
      expect(spent).toBeLessThanOrEqual(1_000_000 + estimate);
      expect(refused.length).toBeGreaterThan(0);
      expect(w.gateway.heldMicros('dana')).toBe(0);

      // With every request settled, the next one is judged on real spend alone: refused at exactly the spend, …
      w.allowance.current = { perDayMicros: spent, perWeekMicros: null };
      const atCap = await post(w.gateway.url, c.path, HEADERS[c.provider](w.token), c.body);
      expect(atCap.status).toBe(c.refusal.status);
      expect(c.refusal.message(JSON.parse(atCap.body))).toMatch(/^allowance for dana spent: /);
      // … and let through a micro-dollar above it: no reservation was left behind.
      w.allowance.current = { perDayMicros: spent + 1, perWeekMicros: null };
      const next = await post(w.gateway.url, c.path, HEADERS[c.provider](w.token), c.body);
      expect(next.status).toBe(200);
    });
  }

  it('a reservation is released on every path: upstream error, unreachable upstream, no key, a client gone before the head, an unparsable body', async () => {
    let answer: 'ok' | '429' = 'ok';
    const never = gate();
    cleanups.push(() => never.open());
    let holdHead = false;
    const fake = await fakeAnthropic({ reply: 'ok', usage: USAGE });
    // In front of the fake: answers 429 on demand, or holds the head forever.
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', async () => {
        if (holdHead) return void (await never.wait());
        if (answer === '429') {
          res.writeHead(429, { 'content-type': 'application/json', 'request-id': 'req_429' });
          return void res.end(JSON.stringify({ type: 'error', error: { type: 'rate_limit_error', message: 'slow down' }, request_id: 'req_429' }));
        }
        const up = http.request(`${fake.url}${req.url}`, { method: 'POST', headers: req.headers }, (r) => {
          res.writeHead(r.statusCode!, r.headers);
          r.pipe(res);
        });
        up.end(Buffer.concat(chunks));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    cleanups.push(() => new Promise<void>((r) => { server.close(() => r()); server.closeAllConnections(); }));
    const w = await world({ anthropic: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
    w.allowance.current = { perDayMicros: 1_000_000, perWeekMicros: null };

    answer = '429';
    expect((await post(w.gateway.url, MESSAGES, HEADERS.anthropic(w.token), ANTHROPIC_BODY)).status).toBe(429);
    expect(w.gateway.heldMicros('dana')).toBe(0);

    w.keyFails.current = true;
    const noKey = await post(w.gateway.url, MESSAGES, HEADERS.anthropic(w.token), ANTHROPIC_BODY);
    expect(JSON.parse(noKey.body).error.message).toMatch(/cannot read the anthropic platform key/);
    expect(w.gateway.heldMicros('dana')).toBe(0);
    w.keyFails.current = false;

    const raw = await new Promise<number>((resolve, reject) => {
      const req = http.request(`${w.gateway.url}${MESSAGES}`, { method: 'POST', headers: { 'content-type': 'application/json', ...HEADERS.anthropic(w.token) } }, (res) => {
        res.resume();
        resolve(res.statusCode!);
      });
      req.on('error', reject);
      req.end('{"model": "claude-opus-5-5", "max_tokens": 10');
    });
    expect(raw).toBe(400);
    expect(w.gateway.heldMicros('dana')).toBe(0);

    holdHead = true;
    const gone = http.request(`${w.gateway.url}${MESSAGES}`, { method: 'POST', headers: { 'content-type': 'application/json', ...HEADERS.anthropic(w.token) } });
    gone.on('error', () => undefined);
    gone.end(JSON.stringify(ANTHROPIC_BODY));
    await waitFor('the request held upstream', () => w.gateway.heldMicros('dana') > 0, 5000);
    gone.destroy();
    await waitFor('the gateway reading on after the client left', () => w.logLines.some((l) => /client left/.test(l)), 5000);
    expect(w.gateway.heldMicros('dana')).toBeGreaterThan(0); // the upstream may still answer and bill
    w.timers.fireAll();
    await waitFor('the reservation released at the deadline', () => w.gateway.heldMicros('dana') === 0, 5000);
    holdHead = false;
    answer = 'ok';

    const dead = await world({ anthropic: 'http://127.0.0.1:1' });
    dead.allowance.current = { perDayMicros: 1_000_000, perWeekMicros: null };
    expect((await post(dead.gateway.url, MESSAGES, HEADERS.anthropic(dead.token), ANTHROPIC_BODY)).status).toBe(529);
    expect(dead.gateway.heldMicros('dana')).toBe(0);

    // After all of that, nothing is held and nothing was spent: a request at a cap of one micro-dollar passes.
    w.allowance.current = { perDayMicros: 1, perWeekMicros: null };
    expect(rows(w.db)).toHaveLength(0);
    expect((await post(w.gateway.url, MESSAGES, HEADERS.anthropic(w.token), ANTHROPIC_BODY)).status).toBe(200);
  });
});
