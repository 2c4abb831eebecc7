import { describe, expect, it } from 'vitest';
import { eachCase } from '../support/each-case.js';
import {
  dollarsToWall,
  dollarsToWallBand,
  fitCalibration,
  pairsFromSeries,
  pctToUsdMicros,
  usdToPct,
  type CalibrationFit,
  type CalibrationPair,
  type NoCalibration,
} from '../../core/forecast/calibration.js';
import type { BarSample } from '../../core/forecast/trail.js';

const MIN = 60_000;
const HOUR = 3_600_000;
const NOW = Date.UTC(2026, 2, 5, 18, 0);

/** `n` pairs every `everyMin` minutes ending `endMinAgo` before NOW, each $usd moving the bar by k × usd. */
function pairs(n: number, k: number, usd: number, endMinAgo: number, everyMin = 10): CalibrationPair[] {
  return Array.from({ length: n }, (_, i) => ({ dPct: Math.round(k * usd * 1000) / 1000, dUsdMicros: Math.round(usd * 1e6), atMs: NOW - (endMinAgo + (n - 1 - i) * everyMin) * MIN }));
}

const fit = (c: ReturnType<typeof fitCalibration>): CalibrationFit => {
  expect(c.kind).toBe('fit');
  return c as CalibrationFit;
};

const K = (k: number, band: [number, number] = [k, k]): CalibrationFit => ({ kind: 'fit', pctPerUsd: k, band, n: 10, fittedAtMs: NOW, sinceMs: NOW - HOUR, drift: 'none' });

describe('fitCalibration: no fit, and why', () => {
  it.each<[string, CalibrationPair[], NoCalibration['reason']]>([
    ['no pairs', [], 'too-few-pairs'],
    ['the bar moved, nothing priced was spent', [{ dPct: 2, dUsdMicros: 0, atMs: NOW - MIN }], 'no-spend'],
    ['spend, and the bar never moved', [{ dPct: 0, dUsdMicros: 3_000_000, atMs: NOW - MIN }], 'no-movement'],
    ['two chunks only', pairs(2, 1.5, 1, 0), 'too-few-pairs'],
    ['pairs older than a week do not count', pairs(10, 1.5, 1, 8 * 24 * 60), 'too-few-pairs'],
    ['pairs after now do not count', pairs(10, 1.5, 1, -200), 'too-few-pairs'],
    ['movement without spend (claude.ai) makes no chunk', [...pairs(5, 1.5, 0, 30).map((p) => ({ ...p, dPct: 2 })), ...pairs(2, 1.5, 1, 0)], 'too-few-pairs'],
  ])('%s', (_name, ps, reason) => {
    const c = fitCalibration(ps, NOW);
    expect(c.kind).toBe('none');
    expect((c as NoCalibration).reason).toBe(reason);
    expect((c as NoCalibration).message.length).toBeGreaterThan(20);
  });
});

describe('fitCalibration: the fit', () => {
  it('a steady seat: 1.5 points a dollar, tight band, pairs pooled into chunks of a point or more', () => {
    const c = fit(fitCalibration(pairs(20, 1.5, 0.2, 0), NOW));
    expect(c.pctPerUsd).toBeCloseTo(1.5, 6);
    expect(c.band[0]).toBeCloseTo(1.5, 6);
    expect(c.band[1]).toBeCloseTo(1.5, 6);
    expect(c.n).toBe(5);
    expect(c.drift).toBe('none');
    expect(c.fittedAtMs).toBe(NOW);
  });

  it('0.1-point steps: pooling recovers k where per-pair ratios are 0 or 3', () => {
    // 1.5 points a dollar, 3.3¢ a turn: the bar shows a 0.1 step every other turn.
    const ps = Array.from({ length: 120 }, (_, i) => ({ dPct: i % 2 ? 0.1 : 0, dUsdMicros: 33_333, atMs: NOW - (120 - i) * MIN }));
    const c = fit(fitCalibration(ps, NOW));
    expect(c.pctPerUsd).toBeGreaterThan(1.4);
    expect(c.pctPerUsd).toBeLessThan(1.6);
  });

  it.each<[string, number, number]>([
    // name, half-life, expected k: 6 chunks at k=1 three days ago, 4 at k=2 four hours ago
    ['recent pairs weigh more (24 h half-life)', 24 * HOUR, 2],
    ['without decay, the older majority wins', 1e15, 1],
  ])('%s', (_name, halfLifeMs, k) => {
    const ps = [...pairs(6, 1, 1, 72 * 60), ...pairs(4, 2, 1, 4 * 60)];
    expect(fit(fitCalibration(ps, NOW, { halfLifeMs })).pctPerUsd).toBe(k);
  });

  it('a promotion halves the cost of a point: the recent ratio leaves the band and k is refitted', () => {
    const ps = [...pairs(60, 1, 1, 150), ...pairs(10, 2, 1, 0)];
    const c = fit(fitCalibration(ps, NOW));
    expect(c.drift).toBe('refit');
    expect(c.pctPerUsd).toBe(2);
    expect(c.n).toBe(10);
    expect(c.sinceMs).toBe(NOW - 90 * MIN);
  });

  it('one odd recent chunk: drift is suspected, k kept, the band widened to hold it', () => {
    const ps = [...pairs(60, 1, 1, 150), ...pairs(1, 3, 1, 0)];
    const c = fit(fitCalibration(ps, NOW));
    expect(c.drift).toBe('suspected');
    expect(c.pctPerUsd).toBe(1);
    expect(c.band).toEqual([1, 3]);
  });

  it('the band is the 10–90% of the chunk ratios, weighted by spend', () => {
    // Ten $10 chunks at 1, 2, … 10 points a dollar, all at the same time.
    const ps = Array.from({ length: 10 }, (_, i) => ({ dPct: 10 * (i + 1), dUsdMicros: 10_000_000, atMs: NOW - MIN }));
    const c = fit(fitCalibration(ps, NOW));
    expect(c.pctPerUsd).toBe(5);
    expect(c.band).toEqual([1, 9]);
  });

  eachCase<[string, number, [number, number]]>([
    // A weekly bar read in whole points moving 0.3 points a dollar, $1 a pair: most pairs show 0 points, some 1.
    ['$10 chunks (the default) close on whole points: k ≈ 0.3', 10_000_000, [0.25, 0.35]],
    ['$2 chunks were mostly rounding', 2_000_000, [0, 0.2]],
  ])('%s', (_name, chunkMinUsdMicros, [lo, hi]) => {
    const ps = Array.from({ length: 200 }, (_, i) => ({ dPct: Math.round(0.3 * (i + 1)) - Math.round(0.3 * i), dUsdMicros: 1_000_000, atMs: NOW - (200 - i) * MIN }));
    const k = fit(fitCalibration(ps, NOW, { chunkMinUsdMicros })).pctPerUsd;
    expect(k).toBeGreaterThanOrEqual(lo);
    expect(k).toBeLessThanOrEqual(hi);
  });

  it('no drift while the recent ratio stays inside the band', () => {
    const ps = [...pairs(60, 1, 1, 150), ...pairs(10, 1, 1, 0)];
    expect(fit(fitCalibration(ps, NOW)).drift).toBe('none');
  });
});

describe('dollars and points', () => {
  eachCase<[string, number, number]>([
    ['$4 at 1.5 points a dollar', 4_000_000, 6],
    ['$0 moves nothing', 0, 0],
    ['12¢', 120_000, 0.18],
  ])('usdToPct: %s', (_name, micros, pct) => {
    expect(usdToPct(micros, K(1.5))).toBeCloseTo(pct, 9);
  });

  it.each<[number, number, number]>([
    [6, 1.5, 4_000_000],
    [1, 3, 333_333],
    [0, 2, 0],
  ])('pctToUsdMicros(%s points at k=%s) = %s', (pct, k, micros) => {
    expect(pctToUsdMicros(pct, K(k))).toBe(micros);
    expect(usdToPct(pctToUsdMicros(pct, K(k)), K(k))).toBeCloseTo(pct, 5);
  });

  eachCase<[number, number, number]>([
    [94, 1, 6_000_000],
    [62.5, 1.5, 25_000_000],
    [100, 1, 0],
    [104, 1, 0],
  ])('dollarsToWall at %s%% with k=%s: %s micro-dollars (the card\'s "$… more until the 5-hour wall")', (used, k, micros) => {
    expect(dollarsToWall(used, K(k))).toBe(micros);
  });

  it('the band of dollars to the wall: a steep k means fewer dollars', () => {
    expect(dollarsToWallBand(94, K(1.5, [1, 2]))).toEqual([3_000_000, 6_000_000]);
  });
});

describe('pairsFromSeries', () => {
  const T0 = Date.UTC(2026, 2, 5, 9, 0);
  const R1 = T0 + 5 * HOUR;
  const R2 = R1 + 5 * HOUR;
  const bar = (m: number, usedPct: number, resetsAtMs = R1): BarSample => ({ provider: 'claude', window: 'five_hour', usedPct, resetsAtMs, observedAtMs: T0 + m * MIN, source: 'statusline' });
  const usd = (m: number, dollars: number) => ({ atMs: T0 + m * MIN, usdMicros: dollars * 1e6 });

  it.each<[string, BarSample[], Array<{ atMs: number; usdMicros: number }>, Array<[number, number, number]>]>([
    ['consecutive readings, spend taken at or before each', [bar(0, 10), bar(10, 12), bar(20, 15)], [usd(0, 1), usd(5, 2), usd(19, 3)], [[2, 1, 10], [3, 1, 20]]],
    ['no pair before the first spend point', [bar(0, 10), bar(10, 12), bar(20, 15)], [usd(5, 2), usd(19, 3)], [[3, 1, 20]]],
    ['no pair across a rollover', [bar(0, 90), bar(10, 95), bar(310, 2, R2), bar(320, 4, R2)], [usd(0, 1), usd(10, 2), usd(310, 3), usd(320, 5)], [[5, 1, 10], [2, 2, 320]]],
    ['a stale lower reading makes no pair', [bar(0, 10), bar(5, 4), bar(10, 12)], [usd(0, 1), usd(10, 2)], [[2, 1, 10]]],
    ['no spend and no movement: no pair; a spend counter that went back: no pair', [bar(0, 10), bar(10, 10), bar(20, 12)], [usd(0, 2), usd(10, 2), usd(20, 1)], []],
  ])('%s', (_name, samples, series, expected) => {
    const out = pairsFromSeries(samples, series).map((p): [number, number, number] => [p.dPct, p.dUsdMicros / 1e6, (p.atMs - T0) / MIN]);
    expect(out).toEqual(expected);
  });

  it('feeds the fit end to end', () => {
    const samples = Array.from({ length: 40 }, (_, i) => bar(i * 3, i * 1.2));
    const series = Array.from({ length: 40 }, (_, i) => usd(i * 3, i * 0.8));
    const c = fit(fitCalibration(pairsFromSeries(samples, series), T0 + 3 * HOUR));
    expect(c.pctPerUsd).toBeCloseTo(1.5, 6);
    expect(dollarsToWall(94, c)).toBe(4_000_000);
  });
});
