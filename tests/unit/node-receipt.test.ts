import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { buildPriceTable } from '../../core/price-table.js';
import { nodeReceiptBody, nodeReceiptLine, priceByModel, priceRuns, receiptLineOf, UNNAMED_MODEL, usageByModel, type RunStream, type StreamEvent } from '../../core/routes/node-receipt.js';
import { parseCodexHeadlessLine } from '../../harnesses/codex/headless.js';
import { parseClaudeHeadlessLine } from '../../harnesses/claude-code/headless.js';
import { rawPublicKey } from '../../musher/handoff/keys.js';
import { signReceipt, verifyReceipt } from '../../musher/receipts/sign.js';

/** A node's receipt, the pure half (issue 14 § 12): every run's usage summed once, priced per model, held against its band. */

// $3 in, $15 out, $3.75 cache write, $0.30 cache read per M tokens; $1.25 in, $10 out, $0.125 cache read.
const table = buildPriceTable([
  {
    effectiveFrom: '2024-01-01',
    rows: {
      'claude-t': { litellm_provider: 'anthropic', input_cost_per_token: 3e-6, output_cost_per_token: 15e-6, cache_creation_input_token_cost: 3.75e-6, cache_read_input_token_cost: 0.3e-6 },
      'gpt-t': { litellm_provider: 'openai', input_cost_per_token: 1.25e-6, output_cost_per_token: 10e-6, cache_read_input_token_cost: 0.125e-6 },
    },
  },
]);
const AT = Date.UTC(2026, 11, 2, 9);

const started = (sessionId: string | null, model: string | null): StreamEvent => ({ kind: 'turn_started', sessionId, model });
const usage = (inputTokens: number, outputTokens: number, more: Partial<StreamEvent> = {}): StreamEvent => ({ kind: 'usage', inputTokens, outputTokens, cacheReadTokens: 0, cacheWriteTokens: 0, ...more });
const done: StreamEvent = { kind: 'turn_completed', sessionId: null };
const run = (attempt: number, ...events: StreamEvent[]): RunStream => ({ attempt, events });

describe('the tokens of every run of a node', () => {
  const TABLE: Array<[string, RunStream[], string | null, Array<{ model: string; inputTokens: number; outputTokens: number }>]> = [
    ['one run, the model its stream named', [run(1, started('s1', 'claude-t'), usage(1000, 100), done)], 'gpt-t', [{ model: 'claude-t', inputTokens: 1000, outputTokens: 100 }]],
    ['a stream that names none: the node’s model', [run(1, started('s1', null), usage(1000, 100), done)], 'gpt-t', [{ model: 'gpt-t', inputTokens: 1000, outputTokens: 100 }]],
    ['neither names one: kept, under a name that says so', [run(1, usage(5, 1))], null, [{ model: UNNAMED_MODEL, inputTokens: 5, outputTokens: 1 }]],
    [
      'per-reply usage of three attempts (a failed check, a send-back) is added up',
      [run(1, started('s1', 'claude-t'), usage(1000, 100), done), run(2, started('s1', 'claude-t'), usage(400, 40), done), run(3, started('s1', 'claude-t'), usage(300, 30), usage(200, 20), done)],
      null,
      [{ model: 'claude-t', inputTokens: 1900, outputTokens: 190 }],
    ],
    [
      'a session’s running totals (Codex, resumed) count once: the last one of the session',
      [run(1, started('t1', null), usage(1000, 50, { sessionTotal: true }), done), run(2, started('t1', null), usage(2600, 90, { sessionTotal: true }), done)],
      'gpt-t',
      [{ model: 'gpt-t', inputTokens: 2600, outputTokens: 90 }],
    ],
    [
      'running totals of two sessions (a run that could not resume started a new one) are added',
      [run(1, started('t1', null), usage(1000, 50, { sessionTotal: true }), done), run(2, started('t2', null), usage(700, 20, { sessionTotal: true }), done)],
      'gpt-t',
      [{ model: 'gpt-t', inputTokens: 1700, outputTokens: 70 }],
    ],
    [
      'runs on two models (switched at a limit) are kept apart',
      [run(2, started('s2', 'gpt-t'), usage(10, 1), done), run(1, started('s1', 'claude-t'), usage(20, 2), done)],
      null,
      [{ model: 'claude-t', inputTokens: 20, outputTokens: 2 }, { model: 'gpt-t', inputTokens: 10, outputTokens: 1 }],
    ],
    ['events that carry no usage add nothing', [run(1, started('s1', 'claude-t'), { kind: 'tool_call' }, { kind: 'question' }, done)], null, []],
  ];
  it.each(TABLE)('%s', (_what, runs, nodeModel, want) => {
    expect(usageByModel(runs, nodeModel).map(({ model, inputTokens, outputTokens }) => ({ model, inputTokens, outputTokens }))).toEqual(want);
  });

  it('Claude’s stream counts its turn once (its result, not the per-message records); Codex’s cached input is not input twice', () => {
    const claude = [
      '{"type":"system","subtype":"init","session_id":"11111111-1111-4111-8111-111111111111","model":"claude-t"}',
      '{"type":"assistant","message":{"id":"msg_1","content":[{"type":"text","text":"hi"}],"usage":{"input_tokens":2000,"output_tokens":1}}}',
      '{"type":"assistant","message":{"id":"msg_1","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{}}],"usage":{"input_tokens":2000,"output_tokens":1}}}',
      '{"type":"result","session_id":"11111111-1111-4111-8111-111111111111","result":"done","is_error":false,"usage":{"input_tokens":2000,"output_tokens":120,"cache_read_input_tokens":500,"cache_creation_input_tokens":100}}',
    ].flatMap(parseClaudeHeadlessLine);
    expect(usageByModel([run(1, ...claude)], null)).toEqual([{ model: 'claude-t', inputTokens: 2000, outputTokens: 120, cacheReadTokens: 500, cacheWriteTokens: 100 }]);

    const codex = (total: number, cached: number, out: number) =>
      ['{"type":"thread.started","thread_id":"22222222-2222-4222-8222-222222222222"}', `{"type":"turn.completed","usage":{"input_tokens":${total},"cached_input_tokens":${cached},"output_tokens":${out}}}`].flatMap(parseCodexHeadlessLine);
    // The first run, then its resume: Codex reports the session so far each time.
    expect(usageByModel([run(1, ...codex(2000, 400, 100)), run(2, ...codex(5000, 3000, 180))], 'gpt-t')).toEqual([{ model: 'gpt-t', inputTokens: 2000, outputTokens: 180, cacheReadTokens: 3000, cacheWriteTokens: 0 }]);
  });
});

describe('priced per model', () => {
  it('each model at its own prices; a model the table does not have is named, not $0', () => {
    const priced = priceByModel(
      table,
      [
        { model: 'claude-t', inputTokens: 1000, outputTokens: 100, cacheReadTokens: 1000, cacheWriteTokens: 100 },
        { model: 'gpt-t', inputTokens: 2000, outputTokens: 200, cacheReadTokens: 0, cacheWriteTokens: 0 },
        { model: 'mystery-9', inputTokens: 5000, outputTokens: 500, cacheReadTokens: 0, cacheWriteTokens: 0 },
        { model: 'idle-1', inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 },
      ],
      AT,
    );
    // claude-t: 3000 + 1500 + 300 + 375 = 5175 µ$; gpt-t: 2500 + 2000 = 4500 µ$.
    expect(priced).toEqual({ costMicros: 9675, models: ['claude-t', 'gpt-t', 'mystery-9'], unpriced: ['mystery-9'] });
  });

  it('a run that finished its turn without reporting usage (Cursor’s stream carries none) is named, not $0; a refused run is not', () => {
    const silent = run(1, started('c1', 'claude-t'), { kind: 'tool_call' }, { kind: 'turn_completed', sessionId: 'c1', ok: true });
    const refused = run(2, started('c1', 'gpt-t'), { kind: 'rate_limited' }, { kind: 'turn_completed', sessionId: 'c1', ok: false });
    const counted = run(3, started('c1', 'gpt-t'), usage(2000, 200), { kind: 'turn_completed', sessionId: 'c1', ok: true });
    expect(priceRuns(table, [silent, refused, counted], null, AT)).toEqual({ costMicros: 4500, models: ['claude-t', 'gpt-t'], unpriced: ['claude-t'] });
  });
});

describe('the receipt’s body and line', () => {
  const band = { lowUsd: 0.5, highUsd: 2, lowMin: 2, highMin: 10, confidence: 0.7 };
  const base = {
    id: 'r1',
    routeKey: 'eng-503',
    nodeId: 'schema',
    title: 'Export jobs table',
    repo: 'acme/shop',
    seat: 'dana',
    harness: 'claude-code',
    promptChars: 40,
    filesTouched: 2,
    turns: 2,
    band,
    startedAt: AT - 3_600_000,
    endedAt: AT,
  };
  const priced = (costMicros: number, unpriced: string[] = []) => ({ costMicros, models: ['claude-t', ...unpriced], unpriced });

  const TABLE: Array<[string, number, number, boolean | null, string]> = [
    ['in band', 967_500, 5 * 60_000, true, '5 min · $0.97 · in band · seat dana · claude-code · claude-t · signed'],
    ['over band in dollars', 2_500_000, 5 * 60_000, false, '5 min · $2.50 · over band · seat dana · claude-code · claude-t · signed'],
    ['over band in minutes (runtime only: waits are not in it)', 967_500, 11 * 60_000, false, '11 min · $0.97 · over band · seat dana · claude-code · claude-t · signed'],
    ['under band', 100_000, 60_000, false, '1 min · $0.10 · under band · seat dana · claude-code · claude-t · signed'],
  ];
  it.each(TABLE)('%s', (_what, cost, runtimeMs, inBand, line) => {
    const body = nodeReceiptBody({ ...base, priced: priced(cost), runtimeMs });
    expect(body).toMatchObject({ taskId: 'eng-503/schema', costMicros: cost, activeMinutes: runtimeMs / 60_000, inBand, band: { lowMicros: 500_000, highMicros: 2_000_000, lowMinutes: 2, highMinutes: 10, basis: 'receipts' } });
    expect(nodeReceiptLine({ body, signature: 'sig' })).toBe(line);
  });

  it('an overnight job on the half-price tier: priced at half, all of it key spend, read as actual against its estimate', () => {
    const runs = [run(1, started('s1', 'claude-t'), usage(100_000, 10_000), done)];
    const standard = priceRuns(table, runs, null, AT);
    const night = priceRuns(table, runs, null, AT, 'batch');
    // 100k in × $3/M + 10k out × $15/M = $0.45; on the batch tier $0.225.
    expect(standard.costMicros).toBe(450_000);
    expect(night.costMicros).toBe(225_000);
    const body = nodeReceiptBody({ ...base, band: { lowUsd: 0.1, highUsd: 0.5, lowMin: 2, highMin: 40, confidence: 0.7 }, priced: night, runtimeMs: 38 * 60_000, tier: 'batch' });
    expect(body).toMatchObject({ tier: 'batch', costMicros: 225_000, keyMicros: 225_000, inBand: true });
    expect(nodeReceiptLine({ body, signature: 'sig' })).toBe('$0.23 actual at ½ price · est $0.10–$0.50 · 38 min · in band · seat dana · claude-code · claude-t · signed');
    // A daytime node's body names no tier and spends nothing on the key.
    expect(nodeReceiptBody({ ...base, priced: standard, runtimeMs: 60_000 })).not.toHaveProperty('tier');
    expect(nodeReceiptBody({ ...base, priced: standard, runtimeMs: 60_000 }).keyMicros).toBe(0);
  });

  it('no band: "no band"; an unpriced model is named beside the dollars and the band is not judged on a part', () => {
    const none = nodeReceiptBody({ ...base, band: null, priced: priced(967_500), runtimeMs: 60_000 });
    expect(none.inBand).toBeNull();
    expect(nodeReceiptLine({ body: none, signature: null })).toBe('1 min · $0.97 · no band · seat dana · claude-code · claude-t · unsigned — run sleds keys init');
    const part = nodeReceiptBody({ ...base, priced: priced(967_500, ['mystery-9']), runtimeMs: 5 * 60_000 });
    expect(nodeReceiptLine({ body: part, signature: 'sig', unpriced: ['mystery-9'] })).toBe('5 min · $0.97 + mystery-9 unpriced · band not judged · seat dana · claude-code · claude-t+mystery-9 · signed');
  });

  it('signed as task receipts are: it verifies with the seat’s key; the row’s line is read back from what the row holds', () => {
    const privateKey = generateKeyPairSync('ed25519').privateKey;
    const key = { privateKey, publicKey: rawPublicKey(privateKey) };
    const body = nodeReceiptBody({ ...base, priced: priced(967_500), runtimeMs: 5 * 60_000 });
    const row = { ...signReceipt(body, key), host: 'host-a', unpriced: [] };
    expect(verifyReceipt(JSON.parse(JSON.stringify(row)))).toEqual({ ok: true, signer: key.publicKey });
    expect(receiptLineOf(JSON.parse(JSON.stringify(row)))).toBe('5 min · $0.97 · in band · seat dana · claude-code · claude-t · signed');
    expect(receiptLineOf(null)).toBeNull();
    expect(receiptLineOf({ body: { nope: 1 } })).toBeNull();
  });
});
