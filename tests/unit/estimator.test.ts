import { describe, expect, it } from 'vitest';
import { eachCase } from '../support/each-case.js';
import { distance, estimateBand, landedInBand, modelFamily, percentile, type EstimateQuery } from '../../core/estimate/estimator.js';
import { formatBand, formatFit, formatMinutesRange, formatMoneyRange } from '../../core/estimate/format.js';
import { describeEstimate } from '../../core/estimate/describe.js';
import { priorBand, priorCalls } from '../../core/estimate/prior.js';
import type { Band } from '../../core/estimate/band.js';
import type { ReceiptBody } from '../../core/receipt/receipt.js';

const REPO = '/home/dana/src/shop';
const DOLLAR = 1_000_000;
let seq = 0;

/** A recorded receipt: a bugfix in the shop repository on opus unless told otherwise. */
function receipt(over: Partial<ReceiptBody> & { usd: number; min: number }): ReceiptBody {
  const { usd, min, ...rest } = over;
  seq++;
  return {
    v: 1,
    id: `r${seq}`,
    taskId: `t${seq}`,
    title: `task ${seq}`,
    type: 'bugfix',
    repo: REPO,
    seat: 'dana',
    harness: 'claude-code',
    models: ['claude-opus-5-5'],
    costMicros: Math.round(usd * DOLLAR),
    keyMicros: 0,
    activeMinutes: min,
    promptChars: 400,
    filesTouched: 3,
    turns: 4,
    band: null,
    inBand: null,
    startedAt: 1_700_000_000_000 + seq * 3_600_000,
    endedAt: 1_700_000_000_000 + seq * 3_600_000 + min * 60_000,
    ...rest,
  };
}

const QUERY: EstimateQuery = { type: 'bugfix', repo: REPO, model: 'claude-opus-5-5', promptChars: 400, seat: 'dana' };

/** Ten bugfixes between $4 and $13, 20–65 minutes: the recorded "tight set". */
const TIGHT = [4, 5, 6, 7, 8, 9, 10, 11, 12, 13].map((usd, i) => receipt({ usd, min: 20 + i * 5 }));

describe('the estimator on recorded receipt sets', () => {
  it.each([
    ['no receipts at all', [], null, 0],
    ['four similar: still no band yet', TIGHT.slice(0, 4), null, 4],
    ['another repository does not count', TIGHT.map((r) => ({ ...r, repo: '/home/dana/src/blog' })), null, 0],
    ['another type does not count when the task has one', TIGHT.map((r) => ({ ...r, type: 'feature' })), null, 0],
    ['another model family does not count', TIGHT.map((r) => ({ ...r, models: ['gpt-5.1-codex'] })), null, 0],
  ] as const)('%s', (_name, receipts, band, similar) => {
    const e = estimateBand(receipts as ReceiptBody[], QUERY);
    expect(e.band).toBe(band);
    expect(e.similar).toHaveLength(similar);
  });

  it('a tight set: the 20th–80th percentiles of dollars and minutes', () => {
    const e = estimateBand(TIGHT, QUERY);
    expect(e.band).toEqual({ lowMicros: 5_800_000, highMicros: 11_200_000, lowMinutes: 29, highMinutes: 56, fit: null, basis: 'receipts', n: 10 });
    expect(formatBand(e.band!)).toBe('$6–11 · 29–56 min · no fit yet');
  });

  it('a wide spread gives a wide band, not a made-up tight one', () => {
    const wide = [0.5, 1, 2, 8, 30, 60, 90, 150].map((usd, i) => receipt({ usd, min: [5, 8, 15, 40, 90, 150, 200, 400][i]! }));
    const e = estimateBand(wide, QUERY);
    expect(e.band).toMatchObject({ lowMicros: 1_400_000, highMicros: 78_000_000, lowMinutes: 11, highMinutes: 180, n: 8 });
    expect(formatBand(e.band!)).toBe('$1–78 · 0.2–3 h · no fit yet');
  });

  it('no type on the task: every type in the repository is similar', () => {
    const mixed = TIGHT.map((r, i) => ({ ...r, type: i % 2 ? 'feature' : null }));
    expect(estimateBand(mixed, { ...QUERY, type: null }).band?.n).toBe(10);
    expect(estimateBand(mixed, QUERY).band).toBeNull();
  });

  it('the model family matches across versions and dates', () => {
    const older = TIGHT.map((r) => ({ ...r, models: ['claude-opus-4-7-20260101'] }));
    expect(estimateBand(older, QUERY).band?.n).toBe(10);
    expect(estimateBand(older, { ...QUERY, model: null }).band?.n).toBe(10);
    expect(estimateBand(older, { ...QUERY, model: 'claude-sonnet-5' }).band).toBeNull();
  });

  it('nearest neighbours on prompt size: of 25, the 15 closest in size', () => {
    const small = Array.from({ length: 10 }, (_, i) => receipt({ usd: 2 + i * 0.1, min: 10, promptChars: 100 + i }));
    const big = Array.from({ length: 15 }, (_, i) => receipt({ usd: 40 + i, min: 120, promptChars: 20_000 + i * 10 }));
    const e = estimateBand([...small, ...big], { ...QUERY, promptChars: 18_000 });
    expect(e.band?.n).toBe(15);
    expect(e.band!.lowMicros).toBeGreaterThanOrEqual(40 * DOLLAR);
    const s = estimateBand([...small, ...big], { ...QUERY, promptChars: 90 });
    expect(s.similar.slice(0, 10).every((r) => r.promptChars < 200)).toBe(true);
    expect(s.band!.lowMicros).toBeLessThan(3 * DOLLAR);
  });

  it('files touched and turns count once the query knows them', () => {
    const few = Array.from({ length: 15 }, (_, i) => receipt({ usd: 3, min: 10, filesTouched: 1, turns: 2, endedAt: 1 + i }));
    const many = Array.from({ length: 15 }, () => receipt({ usd: 30, min: 90, filesTouched: 40, turns: 30 }));
    expect(estimateBand([...few, ...many], { ...QUERY, filesTouched: 35, turns: 25 }).band!.lowMicros).toBe(30 * DOLLAR);
    expect(estimateBand([...few, ...many], { ...QUERY, filesTouched: 1, turns: 2 }).band!.highMicros).toBe(3 * DOLLAR);
    expect(distance(few[0]!, QUERY)).toBe(0);
  });

  it('the fit: how many of the similar landed in their own band, of those that had one (on the asking seat)', () => {
    const had: Band = { lowMicros: 0, highMicros: 1, lowMinutes: 0, highMinutes: 1, fit: null, basis: 'receipts', n: 5 };
    const set = TIGHT.map((r, i) => ({ ...r, band: i < 8 ? had : null, inBand: i < 6 ? true : i < 8 ? false : null }));
    expect(estimateBand(set, QUERY).band!.fit).toEqual({ inBand: 6, of: 8 });
    expect(formatBand(estimateBand(set, QUERY).band!)).toBe('$6–11 · 29–56 min · 75%');
    const fewJudged = set.map((r, i) => (i < 7 ? { ...r, band: null, inBand: null } : r));
    expect(estimateBand(fewJudged, QUERY).band!.fit).toEqual({ inBand: 0, of: 1 });
    const otherSeat = set.map((r, i) => (i < 3 ? { ...r, seat: 'lee' } : r));
    expect(estimateBand(otherSeat, QUERY).band!.fit).toEqual({ inBand: 3, of: 5 });
    expect(estimateBand(otherSeat, { ...QUERY, seat: null }).band!.fit).toEqual({ inBand: 6, of: 8 });
  });
});

describe('pieces of the estimator', () => {
  it.each([
    ['claude-opus-5-5', 'claude-opus'],
    ['claude-opus-4-7-20260101', 'claude-opus'],
    ['claude-3-5-haiku', 'claude-haiku'],
    ['anthropic/claude-sonnet-5[1m]', 'claude-sonnet'],
    ['gpt-5.1-codex-mini', 'gpt-codex-mini'],
    ['gpt-5-codex', 'gpt-codex'],
    ['gpt-5', 'gpt'],
    ['codex-mini-latest', 'codex-mini-latest'],
  ])('model family of %s is %s', (id, family) => expect(modelFamily(id)).toBe(family));

  it('percentiles interpolate between ranks', () => {
    expect(percentile([10], 0.2)).toBe(10);
    expect(percentile([0, 10], 0.2)).toBe(2);
    expect(percentile([1, 2, 3, 4, 5], 0.8)).toBeCloseTo(4.2);
  });

  it('landed in band: both dollars and whole minutes inside; a prior judges nothing', () => {
    const band: Band = { lowMicros: 4 * DOLLAR, highMicros: 11 * DOLLAR, lowMinutes: 20, highMinutes: 55, fit: null, basis: 'receipts', n: 9 };
    expect(landedInBand(band, 7 * DOLLAR, 55.4)).toBe(true);
    expect(landedInBand(band, 12 * DOLLAR, 30)).toBe(false);
    expect(landedInBand(band, 7 * DOLLAR, 61)).toBe(false);
    expect(landedInBand(band, 3 * DOLLAR, 30)).toBe(false);
    expect(landedInBand({ ...band, basis: 'prior' }, 7 * DOLLAR, 30)).toBeNull();
    expect(landedInBand(null, 7 * DOLLAR, 30)).toBeNull();
  });
});

describe('formatBand', () => {
  eachCase([
    [4 * DOLLAR, 11 * DOLLAR, '$4–11'],
    [400_000, 3_200_000, '$0.40–3.20'],
    [2_000_000, 2_004_000, '$2'],
    [12 * DOLLAR, 12_200_000, '$12'],
  ])('money %i–%i reads %s', (lo, hi, text) => expect(formatMoneyRange(lo, hi)).toBe(text));

  it.each([
    [20, 55, '20–55 min'],
    [30, 30, '30 min'],
    [90, 270, '1.5–4.5 h'],
  ])('minutes %i–%i read %s', (lo, hi, text) => expect(formatMinutesRange(lo, hi)).toBe(text));

  it.each([
    [{ inBand: 13, of: 16 }, '81%'],
    [{ inBand: 2, of: 5 }, '40%'],
    [{ inBand: 2, of: 4 }, '2 of 4 in band'],
    [null, null],
  ])('fit %o reads %s', (fit, text) => expect(formatFit(fit)).toBe(text));

  it('the issue example', () => {
    expect(formatBand({ lowMicros: 4_100_000, highMicros: 11_300_000, lowMinutes: 20, highMinutes: 55, fit: { inBand: 13, of: 16 }, basis: 'receipts', n: 16 })).toBe('$4–11 · 20–55 min · 81%');
  });
});

/** Opus-like rates in pico-dollars a token: $5 / $25 per million, cache read $0.50, 5-minute write $6.25. */
const OPUS_RATES = { input: 5_000_000, output: 25_000_000, cacheWrite5m: 6_250_000, cacheWrite1h: 10_000_000, cacheRead: 500_000 };

describe('the labelled prior', () => {
  it('grows with the log of the prompt size, between 10 and 150 calls', () => {
    expect(priorCalls(0)).toBe(12);
    expect(priorCalls(100)).toBe(14);
    expect(priorCalls(4_000)).toBe(43);
    expect(priorCalls(10_000_000)).toBe(150);
  });

  it('prices those calls on the model: half to twice the point figure, never with a fit', () => {
    const p = priorBand(100, OPUS_RATES)!;
    // 14 calls × (50,025 × (0.9 × 0.5 + 0.1 × 6.25) + 800 × 25) micro-dollars = $1.03; ½ and 2×.
    expect(p).toEqual({ lowMicros: 516_438, highMicros: 2_065_753, lowMinutes: 3, highMinutes: 11, fit: null, basis: 'prior', n: 0 });
    expect(formatBand(p)).toBe('$0.52–2.07 · 3–11 min · prior');
    expect(priorBand(100, null)).toBeNull();
  });

  it('without cache prices the context is priced as input', () => {
    const plain = priorBand(100, { ...OPUS_RATES, cacheRead: null, cacheWrite5m: null })!;
    expect(plain.lowMicros).toBeGreaterThan(priorBand(100, OPUS_RATES)!.lowMicros);
  });
});

describe('the estimate in words', () => {
  const query = { type: 'bugfix', repo: REPO, model: 'claude-opus-5-5' };
  it('a band', () => {
    const band: Band = { lowMicros: 4 * DOLLAR, highMicros: 11 * DOLLAR, lowMinutes: 20, highMinutes: 55, fit: { inBand: 9, of: 11 }, basis: 'receipts', n: 12 };
    expect(describeEstimate({ band, prior: null, similar: 12, query, priorModel: null })).toBe(
      '$4–11 · 20–55 min · 82% — from 12 similar bugfix receipts in this repository on claude-opus (20th–80th percentile of API-equivalent dollars and active minutes). 9 of 11 of them landed in the band they had.',
    );
  });
  it('no band yet, with a labelled prior', () => {
    const prior = priorBand(100, OPUS_RATES);
    expect(describeEstimate({ band: null, prior, similar: 2, query, priorModel: 'claude-opus-5-5' })).toBe(
      "no band yet: 2 similar bugfix receipts in this repository on claude-opus (5 needed); a prior from the prompt's size and claude-opus-5-5's prices says $0.52–2.07 · 3–11 min (labelled prior, not measured).",
    );
  });
  it('no band and nothing to price a prior on', () => {
    expect(describeEstimate({ band: null, prior: null, similar: 0, query: { type: null, repo: null, model: null }, priorModel: null })).toBe(
      'no band yet: 0 similar receipts outside any repository (5 needed); no prior either: no model known to price one — name one (--model).',
    );
  });
});
