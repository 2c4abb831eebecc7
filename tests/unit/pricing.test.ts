import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { eachCase } from '../support/each-case.js';
import { parseClaudeTranscriptLine } from '../../harnesses/claude-code/transcript.js';
import { buildPriceTable, PriceTableError, type PriceFile } from '../../core/price-table.js';
import { priceUsage } from '../../core/pricing.js';
import type { PricedCost, UsageRecord } from '../../core/usage.js';
import { ZERO_TOKEN_COUNTS } from '../support/usage-tokens.js';

const ROOT = join(import.meta.dirname, '..', '..');
const PRICE_DIR = join(ROOT, 'prices', 'effective');

/** What musher does: every `<YYYY-MM-DD>.json` in prices/effective. */
function loadRepoPriceFiles(): PriceFile[] {
  return readdirSync(PRICE_DIR)
    .filter((f) => /^\d{4}-\d{2}-\d{2}\.json$/.test(f))
    .map((f) => ({
      effectiveFrom: f.slice(0, 10),
      name: `prices/effective/${f}`,
      rows: JSON.parse(readFileSync(join(PRICE_DIR, f), 'utf8')) as unknown,
    }));
}

const table = buildPriceTable(loadRepoPriceFiles());

const NOV_2026 = Date.parse('2026-11-29T19:50:25.002Z');

function usage(over: Partial<UsageRecord>): UsageRecord {
  return {
    source: 'test',
    dedupKey: 'k',
    sessionId: 's',
    model: 'claude-opus-4-5',
    timestampMs: NOV_2026,
    cwd: null,
    ...ZERO_TOKEN_COUNTS,
    serviceTier: 'standard',
    inferenceGeo: null,
    ...over,
  };
}

const priced = (costMicros: number): PricedCost => ({ priced: true, costMicros });
const unpriced = (reason: string): PricedCost => ({ priced: false, reason });

describe('the repo price files', () => {
  // Double entry against shared/research/anchors-quota.md §7, in USD per MTok: input, 5m write, 1h write, cache read, output.
  const expected: Array<[model: string, day: string, prices: [number, number, number, number, number]]> = [
    ['claude-fable-5-1', '2026-11-01', [10, 12.5, 20, 0.25, 50]],
    ['claude-fable-5', '2026-11-01', [10, 12.5, 20, 1, 50]],
    ['claude-opus-5-5', '2026-11-01', [4, 5, 8, 0.2, 20]],
    ['claude-opus-5', '2026-11-01', [5, 6.25, 10, 0.5, 25]],
    ['claude-opus-4-8', '2026-11-01', [5, 6.25, 10, 0.5, 25]],
    ['claude-opus-4-7', '2026-11-01', [5, 6.25, 10, 0.5, 25]],
    ['claude-opus-4-6', '2026-11-01', [5, 6.25, 10, 0.5, 25]],
    ['claude-opus-4-5', '2026-11-01', [5, 6.25, 10, 0.5, 25]],
    ['claude-opus-4-1', '2026-11-01', [15, 18.75, 30, 1.5, 75]],
    ['claude-opus-4', '2026-11-01', [15, 18.75, 30, 1.5, 75]],
    ['claude-sonnet-5-5', '2026-10-06', [2, 2.5, 4, 0.2, 10]],
    ['claude-sonnet-5-5', '2026-10-07', [2, 2.5, 4, 0.1, 10]],
    ['claude-sonnet-5', '2026-11-01', [2, 2.5, 4, 0.2, 10]],
    ['claude-sonnet-4-6', '2026-11-01', [3, 3.75, 6, 0.3, 15]],
    ['claude-sonnet-4-5', '2026-11-01', [3, 3.75, 6, 0.3, 15]],
    ['claude-sonnet-4', '2026-11-01', [3, 3.75, 6, 0.3, 15]],
    ['claude-haiku-5-5', '2026-11-01', [0.1, 0.125, 0.2, 0.01, 0.5]],
    ['claude-haiku-4-5', '2026-11-01', [1, 1.25, 2, 0.1, 5]],
    ['claude-3-5-haiku', '2026-11-01', [0.8, 1, 1.6, 0.08, 4]],
    ['claude-3-haiku', '2026-11-01', [0.25, 0.3, 0.5, 0.03, 1.25]],
  ];
  it.each(expected)('%s on %s', (model, day, [input, w5, w1, read, output]) => {
    const row = table.lookup(model, Date.parse(`${day}T12:00:00Z`));
    expect(row?.model).toBe(model);
    // Integer pico-dollars per token = USD per MTok × 1e6.
    expect(row?.base).toEqual({
      input: input * 1e6,
      cacheWrite5m: w5 * 1e6,
      cacheWrite1h: w1 * 1e6,
      cacheRead: read * 1e6,
      output: output * 1e6,
    });
    expect(row?.webSearchPerRequest).toBe(0.01 * 1e12);
  });

  const openai: Array<[model: string, input: number, cached: number | null, output: number]> = [
    ['gpt-5', 1.25, 0.125, 10],
    ['gpt-5.4', 2.5, 0.25, 15],
    ['gpt-5.4-mini', 0.75, 0.075, 4.5],
    ['gpt-6-sol', 2, null, 10],
    ['gpt-6-luna', 0.1, null, 0.5],
  ];
  it.each(openai)('%s', (model, input, cached, output) => {
    const row = table.lookup(model, NOV_2026);
    expect(row?.provider).toBe('openai');
    expect(row?.base).toEqual({
      input: input * 1e6,
      output: output * 1e6,
      cacheRead: cached === null ? null : cached * 1e6,
      cacheWrite5m: null,
      cacheWrite1h: null,
    });
  });

  const geo: Array<[model: string, multiplier: number]> = [
    ['claude-opus-5-5', 1.1],
    ['claude-opus-4-6', 1.1],
    ['claude-sonnet-4-6', 1.1],
    ['claude-haiku-5-5', 1.1],
    ['claude-fable-5-1', 1.1],
    ['claude-opus-4-5', 1],
    ['claude-sonnet-4-5', 1],
    ['claude-haiku-4-5', 1],
    ['gpt-5', 1],
  ];
  it.each(geo)('US-geo multiplier of %s is %s', (model, multiplier) => {
    expect(table.lookup(model, NOV_2026)?.usGeoMultiplier).toBe(multiplier);
  });

  it('marks the derived Opus 5.5 cache-write prices', () => {
    expect(table.lookup('claude-opus-5-5', NOV_2026)?.entry.sleds_note).toMatch(/1\.25x.*2x/);
  });

  it('only the long-context models have prompt tiers', () => {
    const tiered = table.models().filter((m) => (table.lookup(m, NOV_2026)?.tiers.length ?? 0) > 0);
    expect(tiered).toEqual(['claude-haiku-5-5', 'claude-sonnet-4', 'claude-sonnet-4-5']);
  });
});

describe('priceUsage', () => {
  const OCT_6 = Date.parse('2026-10-06T23:59:59.999Z');
  const OCT_7 = Date.parse('2026-10-07T00:00:00.000Z');

  // [name, usage, expected]; micro-dollars = tokens × USD per MTok.
  const cases: Array<[string, Partial<UsageRecord>, PricedCost]> = [
    // each token class, Opus 4.5 ($5 / $6.25 / $10 / $0.50 / $25)
    ['input', { inputTokens: 1_000_000 }, priced(5_000_000)],
    ['output', { outputTokens: 1_000 }, priced(25_000)],
    ['5m cache write', { cacheWrite5mTokens: 1_000 }, priced(6_250)],
    ['1h cache write', { cacheWrite1hTokens: 1_000 }, priced(10_000)],
    ['cache read', { cacheReadTokens: 1_000 }, priced(500)],
    ['web search $10/1000', { webSearchRequests: 3 }, priced(30_000)],
    [
      'all classes together',
      { inputTokens: 10, cacheWrite5mTokens: 200, cacheWrite1hTokens: 500, cacheReadTokens: 50_000, outputTokens: 250, webSearchRequests: 1 },
      priced(10 * 5 + 200 * 6.25 + 500 * 10 + 50_000 * 0.5 + 250 * 25 + 10_000),
    ],
    ['0-token record', {}, priced(0)],
    ['rounds once, at the end (0.3 + 0.25 → 1, not 0 + 0)', { model: 'claude-haiku-5-5', cacheReadTokens: 30, cacheWrite5mTokens: 2 }, priced(1)],
    ['sub-micro total rounds half up', { model: 'claude-haiku-5-5', cacheReadTokens: 50 }, priced(1)],
    ['sub-micro total rounds down', { model: 'claude-haiku-5-5', cacheReadTokens: 49 }, priced(0)],

    // batch ×0.5 on tokens, not on the search fee
    ['batch', { serviceTier: 'batch', inputTokens: 1_000_000, outputTokens: 1_000_000 }, priced(15_000_000)],
    ['batch leaves web search at list', { serviceTier: 'batch', inputTokens: 1_000, webSearchRequests: 1 }, priced(2_500 + 10_000)],
    ['priority is list price', { serviceTier: 'priority', inputTokens: 1_000_000 }, priced(5_000_000)],
    ['flex (OpenAI) is half', { model: 'gpt-5', serviceTier: 'flex', inputTokens: 1_000_000 }, priced(625_000)],

    // inference_geo "us" ×1.1 only where the row has it
    ['us geo on Opus 4.6', { model: 'claude-opus-4-6', inferenceGeo: 'us', inputTokens: 1_000_000 }, priced(5_500_000)],
    ['us geo on Opus 4.6, cache classes too', { model: 'claude-opus-4-6', inferenceGeo: 'us', cacheReadTokens: 1_000_000 }, priced(550_000)],
    ['us geo ignored on Opus 4.5', { inferenceGeo: 'us', inputTokens: 1_000_000 }, priced(5_000_000)],
    ['global geo on Opus 4.6', { model: 'claude-opus-4-6', inferenceGeo: 'global', inputTokens: 1_000_000 }, priced(5_000_000)],
    [
      'us geo × batch stack',
      { model: 'claude-opus-4-6', inferenceGeo: 'us', serviceTier: 'batch', outputTokens: 1_000_000 },
      priced(13_750_000),
    ],

    // Haiku 5.5: over 100k total input the whole request moves to 0.50 / 0.625 / 1.00 / 0.05 / 2.50
    ['Haiku 5.5 at exactly 100k input', { model: 'claude-haiku-5-5', inputTokens: 100_000 }, priced(10_000)],
    ['Haiku 5.5 one token over', { model: 'claude-haiku-5-5', inputTokens: 100_001 }, priced(50_001)],
    [
      'Haiku 5.5 under the tier with cache reads',
      { model: 'claude-haiku-5-5', inputTokens: 1_000, cacheReadTokens: 98_000, outputTokens: 1_000 },
      priced(1_000 * 0.1 + 98_000 * 0.01 + 1_000 * 0.5),
    ],
    [
      'Haiku 5.5 cache reads push it over: output at the tier too',
      { model: 'claude-haiku-5-5', inputTokens: 1_000, cacheReadTokens: 99_500, outputTokens: 1_000 },
      priced(1_000 * 0.5 + 99_500 * 0.05 + 1_000 * 2.5),
    ],
    [
      'Haiku 5.5 cache writes push it over',
      { model: 'claude-haiku-5-5', cacheWrite5mTokens: 60_000, cacheWrite1hTokens: 50_000 },
      priced(60_000 * 0.625 + 50_000 * 1),
    ],
    ['Haiku 5.5 tier × batch', { model: 'claude-haiku-5-5', serviceTier: 'batch', inputTokens: 200_000 }, priced(50_000)],
    // Sonnet 4.5 >200k: 6 / 7.5 / 12 / 0.6 / 22.5; Sonnet 4.6 has no premium
    ['Sonnet 4.5 at 200k', { model: 'claude-sonnet-4-5', inputTokens: 200_000, outputTokens: 1_000 }, priced(615_000)],
    ['Sonnet 4.5 over 200k', { model: 'claude-sonnet-4-5', inputTokens: 200_001, outputTokens: 1_000 }, priced(1_222_506)],
    [
      'Sonnet 4.5 over 200k, cache classes',
      { model: 'claude-sonnet-4-5', cacheReadTokens: 150_000, cacheWrite5mTokens: 40_000, cacheWrite1hTokens: 20_000 },
      priced(150_000 * 0.6 + 40_000 * 7.5 + 20_000 * 12),
    ],
    ['Sonnet 4.6 over 200k: no premium', { model: 'claude-sonnet-4-6', inputTokens: 300_000 }, priced(900_000)],

    // effective dates: Sonnet 5.5 cache read $0.20 → $0.10 on 2026-10-07 (UTC)
    ['Sonnet 5.5 read, the ms before', { model: 'claude-sonnet-5-5', timestampMs: OCT_6, cacheReadTokens: 1_000_000 }, priced(200_000)],
    ['Sonnet 5.5 read, from midnight', { model: 'claude-sonnet-5-5', timestampMs: OCT_7, cacheReadTokens: 1_000_000 }, priced(100_000)],
    ['Sonnet 5.5 input unchanged', { model: 'claude-sonnet-5-5', timestampMs: OCT_6, inputTokens: 1_000_000 }, priced(2_000_000)],
    ['Sonnet 5 unaffected by the change', { model: 'claude-sonnet-5', timestampMs: OCT_7, cacheReadTokens: 1_000_000 }, priced(200_000)],
    ['before the first file', { timestampMs: Date.parse('2023-12-31T23:59:59Z'), inputTokens: 1 }, unpriced('no price for model claude-opus-4-5')],

    // Opus 5.5: cache writes derived from the standard multipliers
    ['Opus 5.5 5m write', { model: 'claude-opus-5-5', cacheWrite5mTokens: 1_000_000 }, priced(5_000_000)],
    ['Opus 5.5 1h write', { model: 'claude-opus-5-5', cacheWrite1hTokens: 1_000_000 }, priced(8_000_000)],

    // model-name matching
    ['date suffix', { model: 'claude-sonnet-4-5-20250929', inputTokens: 100_000 }, priced(300_000)],
    ['anthropic/ prefix', { model: 'anthropic/claude-sonnet-4-5', inputTokens: 100_000 }, priced(300_000)],
    ['[1m] suffix', { model: 'claude-opus-4-6[1m]', inputTokens: 1_000_000 }, priced(5_000_000)],
    ['prefix + date + [1m]', { model: 'anthropic/claude-sonnet-4-5-20250929[1m]', inputTokens: 100_000 }, priced(300_000)],
    ['old-style dated id', { model: 'claude-3-5-haiku-20241022', inputTokens: 1_000_000 }, priced(800_000)],
    ['OpenAI dated id', { model: 'gpt-5-2025-08-07', inputTokens: 1_000_000 }, priced(1_250_000)],
    ['openai/ prefix', { model: 'openai/gpt-5.4-mini', outputTokens: 1_000_000 }, priced(4_500_000)],
    ['openai/ prefix on a Claude id', { model: 'openai/claude-sonnet-4-5', inputTokens: 1 }, unpriced('no price for model openai/claude-sonnet-4-5')],
    ['unknown model', { model: 'claude-opus-9', inputTokens: 1 }, unpriced('no price for model claude-opus-9')],
    ['unknown model with 0 tokens is still unpriced', { model: 'claude-opus-9' }, unpriced('no price for model claude-opus-9')],
    ['no fuzzy family match', { model: 'claude-opus', inputTokens: 1 }, unpriced('no price for model claude-opus')],
    ['no fuzzy variant match', { model: 'claude-opus-4-5-fast', inputTokens: 1 }, unpriced('no price for model claude-opus-4-5-fast')],
    ['not a date suffix', { model: 'claude-sonnet-4-5-2025', inputTokens: 1 }, unpriced('no price for model claude-sonnet-4-5-2025')],
    ['case matters', { model: 'Claude-Opus-4-5', inputTokens: 1 }, unpriced('no price for model Claude-Opus-4-5')],
    ['other provider prefix', { model: 'bedrock/claude-opus-4-5', inputTokens: 1 }, unpriced('no price for model bedrock/claude-opus-4-5')],

    // synthetic and missing prices
    ['<synthetic> costs nothing', { model: '<synthetic>', inputTokens: 5 }, priced(0)],
    ['a class the row has no price for', { model: 'gpt-6-sol', cacheReadTokens: 10 }, unpriced('no cache-read price for model gpt-6-sol')],
    ['that class at 0 tokens is fine', { model: 'gpt-6-sol', inputTokens: 1_000_000 }, priced(2_000_000)],
    ['web search without a price', { model: 'gpt-5', webSearchRequests: 1 }, unpriced('no web search price for model gpt-5')],
    ['negative count', { inputTokens: -1 }, unpriced('invalid input token count -1')],
    ['fractional count', { outputTokens: 1.5 }, unpriced('invalid output token count 1.5')],
  ];

  eachCase(cases)('%s', (_name, over, expected) => {
    expect(priceUsage(table, usage(over))).toEqual(expected);
  });
});

describe('Codex models (prices/effective/2025-05-16.json)', () => {
  // [model, USD per MTok: input, cached input, output] — standard tier, LiteLLM and OpenAI's model pages.
  const rows: Array<[string, number, number, number]> = [
    ['gpt-5.1-codex', 1.25, 0.125, 10],
    ['gpt-5.1-codex-max', 1.25, 0.125, 10],
    ['gpt-5.1-codex-mini', 0.25, 0.025, 2],
    ['gpt-5-codex', 1.25, 0.125, 10],
    ['gpt-5.1', 1.25, 0.125, 10],
    ['gpt-5-mini', 0.25, 0.025, 2],
    ['codex-mini-latest', 1.5, 0.375, 6],
  ];

  it.each(rows)('%s: %s in, %s cached, %s out, USD per MTok', (model, input, cached, output) => {
    const u = usage({ model, inputTokens: 1_000_000, cacheReadTokens: 1_000_000, outputTokens: 1_000_000 });
    expect(priceUsage(table, u)).toEqual(priced(Math.round((input + cached + output) * 1_000_000)));
  });

  it("a Codex turn of the recorded runs: gpt-5.1-codex, 2400 input of which 1800 cached, 120 out", () => {
    // As the rollout parser records it: the cached part apart from the uncached input.
    expect(priceUsage(table, usage({ model: 'gpt-5.1-codex', inputTokens: 600, cacheReadTokens: 1_800, outputTokens: 120 }))).toEqual(priced(600 * 1.25 + 1_800 * 0.125 + 120 * 10));
  });

  it('from the file date on; earlier usage stays unpriced, and an unknown Codex model too', () => {
    expect(priceUsage(table, usage({ model: 'gpt-5.1-codex', timestampMs: Date.parse('2025-05-15T23:59:59Z'), inputTokens: 1 }))).toEqual(unpriced('no price for model gpt-5.1-codex'));
    expect(priceUsage(table, usage({ model: 'codex-mini-latest', timestampMs: Date.parse('2025-05-16T00:00:00Z'), outputTokens: 1_000 }))).toEqual(priced(6_000));
    expect(priceUsage(table, usage({ model: 'gpt-5.9-codex', inputTokens: 1 }))).toEqual(unpriced('no price for model gpt-5.9-codex'));
  });
});

describe('priceUsage over a parsed transcript', () => {
  it('prices each message once (dedup by key) at the Opus 5.5 row', () => {
    const file = join(ROOT, 'tests/fixtures/claude/projects/-path-to-proj/1098c3a4-5b2e-4f7a-9d61-0c3e8a7b2f45.jsonl');
    const byKey = new Map<string, UsageRecord>();
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      const parsed = parseClaudeTranscriptLine(line, { filePath: file });
      if (parsed.kind === 'usage') byKey.set(parsed.usage.dedupKey, parsed.usage);
    }
    const costs = [...byKey.values()].map((u) => priceUsage(table, u));
    // msg A: 3×4 + 1200×8 (1h) + 14500×0.2 + 87×20; msg B: 2677×4 + 100×5 (5m) + 2000×0.2 + 12×20
    expect(costs).toEqual([priced(14_252), priced(11_848)]);
  });
});

describe('buildPriceTable', () => {
  const row = (input: number, output: number, extra: Record<string, unknown> = {}) => ({
    litellm_provider: 'anthropic',
    mode: 'chat',
    input_cost_per_token: input,
    output_cost_per_token: output,
    ...extra,
  });

  it('a later file overrides only the models it names, from its date', () => {
    const t = buildPriceTable([
      { effectiveFrom: '2026-05-01', rows: { 'm-a': row(2e-6, 1e-5) } },
      { effectiveFrom: '2026-01-01', rows: { 'm-a': row(1e-6, 1e-5), 'm-b': row(3e-6, 1e-5) } },
      { effectiveFrom: '2026-09-01', rows: { 'm-b': row(4e-6, 1e-5) } },
    ]);
    const at = (d: string) => Date.parse(`${d}T00:00:00Z`);
    const table: Array<[string, string, number | null, string | null]> = [
      ['m-a', '2025-12-31', null, null],
      ['m-a', '2026-01-01', 1e6, '2026-01-01'],
      ['m-a', '2026-04-30', 1e6, '2026-01-01'],
      ['m-a', '2026-05-01', 2e6, '2026-05-01'],
      ['m-a', '2027-01-01', 2e6, '2026-05-01'],
      ['m-b', '2026-08-31', 3e6, '2026-01-01'],
      ['m-b', '2026-09-01', 4e6, '2026-09-01'],
    ];
    for (const [model, day, input, from] of table) {
      const r = t.lookup(model, at(day));
      expect([model, day, r?.base.input ?? null, r?.effectiveFrom ?? null]).toEqual([model, day, input, from]);
    }
    expect(t.models()).toEqual(['m-a', 'm-b']);
  });

  it('tolerates unknown keys and LiteLLM sample_spec, and reads tiers', () => {
    const t = buildPriceTable([
      {
        effectiveFrom: '2026-01-01',
        rows: {
          sample_spec: { max_tokens: 'LEGACY parameter', input_cost_per_token: 0 },
          m: row(1e-6, 5e-6, {
            max_input_tokens: 1_000_000,
            supports_vision: true,
            input_cost_per_token_above_128k_tokens: 2e-6,
            output_cost_per_token_above_128k_tokens: 1e-5,
            input_cost_per_token_above_32k_tokens: 1.5e-6,
            output_cost_per_token_above_32k_tokens: 7e-6,
            cache_read_input_token_cost_above_32k_tokens: 1.5e-7,
          }),
        },
      },
    ]);
    expect(t.models()).toEqual(['m']);
    const r = t.lookup('m', Date.parse('2026-02-01T00:00:00Z'));
    expect(r?.entry['supports_vision']).toBe(true);
    expect(r?.tiers.map((x) => [x.aboveTokens, x.rates.input, x.rates.cacheRead])).toEqual([
      [32_000, 1.5e6, 1.5e5],
      [128_000, 2e6, null],
    ]);
    // 130k input lands on the highest tier passed
    expect(priceUsage(t, usage({ model: 'm', timestampMs: Date.parse('2026-02-01T00:00:00Z'), inputTokens: 130_000 }))).toEqual(
      priced(260_000),
    );
  });

  const bad: Array<[string, PriceFile[], RegExp]> = [
    [
      'missing output price',
      [{ effectiveFrom: '2026-01-01', name: 'prices/effective/2026-01-01.json', rows: { 'claude-x': { litellm_provider: 'anthropic', input_cost_per_token: 1e-6 } } }],
      /prices\/effective\/2026-01-01\.json: claude-x: output_cost_per_token: /,
    ],
    [
      'a price as a string',
      [{ effectiveFrom: '2026-01-01', rows: { 'claude-y': row(1e-6, 5e-6, { cache_read_input_token_cost: '1e-7' }) } }],
      /effective\/2026-01-01\.json: claude-y: cache_read_input_token_cost: /,
    ],
    [
      'a negative price',
      [{ effectiveFrom: '2026-01-01', rows: { 'claude-z': row(-1e-6, 5e-6) } }],
      /claude-z: input_cost_per_token: /,
    ],
    ['no provider', [{ effectiveFrom: '2026-01-01', rows: { m: { input_cost_per_token: 1, output_cost_per_token: 1 } } }], /m: litellm_provider: /],
    [
      'a tier without its output price',
      [{ effectiveFrom: '2026-01-01', rows: { 'claude-t': row(1e-6, 5e-6, { input_cost_per_token_above_200k_tokens: 2e-6 }) } }],
      /claude-t: the 200000-token prompt tier needs both/,
    ],
    [
      'a tier price that is not a number',
      [{ effectiveFrom: '2026-01-01', rows: { 'claude-u': row(1e-6, 5e-6, { input_cost_per_token_above_200k_tokens: null, output_cost_per_token_above_200k_tokens: 1e-5 }) } }],
      /claude-u: input_cost_per_token_above_200k_tokens: expected a price/,
    ],
    ['rows not an object', [{ effectiveFrom: '2026-01-01', rows: [] }], /effective\/2026-01-01\.json: expected an object/],
    ['a row that is not an object', [{ effectiveFrom: '2026-01-01', rows: { m: 5 } }], /effective\/2026-01-01\.json: m: /],
    ['not a date', [{ effectiveFrom: '2026-13-01', rows: {} }], /"2026-13-01" is not a YYYY-MM-DD date/],
    ['not a date either', [{ effectiveFrom: '20260101', rows: {} }], /"20260101" is not a YYYY-MM-DD date/],
    [
      'two files, one date',
      [
        { effectiveFrom: '2026-01-01', name: 'a.json', rows: {} },
        { effectiveFrom: '2026-01-01', name: 'b.json', rows: {} },
      ],
      /b\.json: same effective date as a\.json/,
    ],
  ];
  it.each(bad)('rejects %s, naming file and model', (_name, files, message) => {
    expect(() => buildPriceTable(files)).toThrow(PriceTableError);
    expect(() => buildPriceTable(files)).toThrow(message);
  });

  it('lists every problem, not just the first', () => {
    try {
      buildPriceTable([{ effectiveFrom: '2026-01-01', rows: { a: row(1e-6, -1), b: row(-1, 1e-6) } }]);
      expect.unreachable();
    } catch (e) {
      expect((e as PriceTableError).issues).toHaveLength(2);
      expect((e as Error).message).not.toContain('\n');
    }
  });

  it('an invalid timestamp finds nothing', () => {
    expect(table.lookup('claude-opus-4-5', Number.NaN)).toBeNull();
    expect(table.lookup('claude-opus-4-5', 9e15)).toBeNull();
  });

  it('asked again and again (a backfill), it keeps answering by the day: a price change at midnight UTC holds from its first millisecond', () => {
    const t = buildPriceTable([
      { effectiveFrom: '2026-01-01', rows: { 'm-a': row(1e-6, 1e-5) } },
      { effectiveFrom: '2026-05-01', rows: { 'm-a': row(2e-6, 1e-5) } },
    ]);
    const lastMsBefore = Date.parse('2026-05-01T00:00:00Z') - 1;
    const cases: Array<[number, number | null]> = [
      [lastMsBefore, 1e6],
      [lastMsBefore + 1, 2e6],
      [lastMsBefore - 86_400_000, 1e6],
      [lastMsBefore, 1e6],
      [lastMsBefore + 1, 2e6],
      [Date.parse('2025-12-31T23:59:59.999Z'), null],
    ];
    for (let round = 0; round < 3; round++) {
      for (const [at, input] of cases) expect([new Date(at).toISOString(), t.lookup('m-a', at)?.base.input ?? null]).toEqual([new Date(at).toISOString(), input]);
    }
  });

  it('a history of thousands of made-up model names is answered right throughout (what it remembers is bounded)', () => {
    const t = buildPriceTable([{ effectiveFrom: '2026-01-01', rows: { 'm-a': row(1e-6, 1e-5) } }]);
    const at = Date.parse('2026-06-01T12:00:00Z');
    for (let i = 0; i < 10_000; i++) {
      expect(t.lookup(`made-up-${i}`, at)).toBeNull();
      if (i % 1000 === 0) expect(t.lookup('m-a', at)?.base.input).toBe(1e6);
    }
    expect(t.lookup('anthropic/m-a', at)?.base.input).toBe(1e6);
  });
});
