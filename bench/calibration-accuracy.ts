import { fitCalibration, pairsFromSeries, type CalibrationPair, type UsdPoint } from '../core/forecast/calibration.js';
import { traceToBarSample } from '../core/forecast/replay.js';
import { splitTrails, type BarSample } from '../core/forecast/trail.js';
import { SIM_EPOCH_MS, simulateTraces, type SimDrift, type SimTrace } from './trace-sim.js';

/**
 * How well does the $→% calibration (core/forecast/calibration.ts) turn dollars into bar points? On the
 * simulator's traces (bench/trace-sim.ts: their readings carry the cumulative API-equivalent dollars, `usd`), for
 * each bar:
 *
 * - **Held-out intervals**: from a reading, to the first reading of the same window instance at least
 *   `INTERVAL_MS` (30 min) later, when dollars were spent in between. The real Δ% is the bar's move between the
 *   two readings; the prediction is k × Δ$ with k as fitted from the pairs up to the first reading only.
 * - **sleds**: `fitCalibration` as musher runs it (chunks, recency-weighted Theil–Sen through the origin, its
 *   band, the drift refit). **naive**: one global ratio, Σ Δ% ÷ Σ Δ$ over every pair of the trace so far.
 * - Printed: the mean absolute error in points, the share of intervals whose real Δ% falls in the band
 *   [lo × Δ$, hi × Δ$] give or take one step of the readings (0.1 point, or 1 when both readings are whole
 *   numbers: a bar read in whole points cannot show a move of 0.4) (sleds only), and the intervals where either
 *   method had no fit yet (not scored).
 * - **Drift**: the same traces again with the plan's budgets doubled from day 3, 12:00 UTC (a promotion: each
 *   dollar moves the bar half as far), scored by the wall time since the change, to show the refit recovering.
 *
 * The dollars only count CLI turns: the simulator's claude.ai chats move the bar with no dollars (as they do for
 * real), so no method can be exact.
 */

const MIN = 60_000;
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const INTERVAL_MS = 30 * MIN;
/** The drift case: budgets ×2 from Thursday 12:00 UTC of the first week. */
export const DRIFT: SimDrift = { atMs: SIM_EPOCH_MS + 3 * DAY + 12 * HOUR, budgetFactor: 2 };
/** Hours since the drift, for the recovery table: [from, to). */
const SINCE: ReadonlyArray<readonly [string, number, number]> = [
  ['before', -Infinity, 0],
  ['0–2 h', 0, 2 * HOUR],
  ['2–6 h', 2 * HOUR, 6 * HOUR],
  ['6–24 h', 6 * HOUR, 24 * HOUR],
  ['24 h +', 24 * HOUR, Infinity],
];

interface Interval {
  atMs: number;
  dPct: number;
  /** The readings' resolution: 1 point when both ends are whole numbers (Codex, the usage endpoint), else 0.1. */
  stepPct: number;
  dUsdMicros: number;
  /** sleds: predicted points and band. */
  ours: { pct: number; lo: number; hi: number };
  naive: number;
}

export interface CalibrationScore {
  intervals: number;
  /** Intervals where one method had no fit yet (not scored). */
  noFit: number;
  /** Mean absolute error in points, sleds and the naive ratio. */
  maePct: number;
  naiveMaePct: number;
  /** Share of intervals whose real Δ% is inside sleds' band. */
  bandCoverage: number;
  /** Mean real Δ% per interval, for scale. */
  meanMovePct: number;
}

export interface CalibrationAccuracyReport {
  seed: number;
  traces: number;
  days: number;
  /** Per window, on the plain traces. */
  plain: Record<string, CalibrationScore>;
  /** Per window, on the drift traces, by time since the drift. */
  drift: Record<string, Record<string, CalibrationScore>>;
}

/** The cumulative spend series of a trace: the running maximum of its readings' `usd` (stale readings carry less). */
function usdSeries(trace: SimTrace): UsdPoint[] {
  let max = 0;
  return trace.samples.map((s) => ({ atMs: s.t, usdMicros: (max = Math.max(max, Math.round(s.usd * 1e6))) }));
}

function intervalsOf(samples: readonly BarSample[], usd: readonly UsdPoint[]): Interval[] {
  const pairs: CalibrationPair[] = pairsFromSeries(samples, usd);
  const spendAt = (t: number): number => {
    let lo = 0;
    let hi = usd.length - 1;
    let v = 0;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (usd[mid]!.atMs <= t) {
        v = usd[mid]!.usdMicros;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return v;
  };
  const out: Interval[] = [];
  let upTo = 0;
  let sumPct = 0;
  let sumUsd = 0;
  for (const trail of splitTrails(samples)) {
    const pts = trail.points;
    let j = 0;
    for (let i = 0; i < pts.length; i = j) {
      const a = pts[i]!;
      j = i + 1;
      while (j < pts.length && pts[j]!.atMs < a.atMs + INTERVAL_MS) j++;
      if (j >= pts.length) break;
      const b = pts[j]!;
      const dUsdMicros = spendAt(b.atMs) - spendAt(a.atMs);
      if (dUsdMicros <= 0) continue;
      for (; upTo < pairs.length && pairs[upTo]!.atMs <= a.atMs; upTo++) {
        sumPct += pairs[upTo]!.dPct;
        sumUsd += pairs[upTo]!.dUsdMicros;
      }
      const cal = fitCalibration(pairs.slice(0, upTo), a.atMs);
      const usd = dUsdMicros / 1e6;
      out.push({
        atMs: a.atMs,
        dPct: b.usedPct - a.usedPct,
        stepPct: Number.isInteger(a.usedPct) && Number.isInteger(b.usedPct) ? 1 : 0.1,
        dUsdMicros,
        ours: cal.kind === 'fit' ? { pct: cal.pctPerUsd * usd, lo: cal.band[0] * usd, hi: cal.band[1] * usd } : { pct: NaN, lo: NaN, hi: NaN },
        naive: sumUsd > 0 && sumPct > 0 ? (sumPct / (sumUsd / 1e6)) * usd : NaN,
      });
    }
  }
  return out;
}

function score(xs: readonly Interval[]): CalibrationScore {
  const ok = xs.filter((x) => Number.isFinite(x.ours.pct) && Number.isFinite(x.naive));
  const mean = (f: (x: Interval) => number): number => (ok.length ? ok.reduce((s, x) => s + f(x), 0) / ok.length : NaN);
  return {
    intervals: ok.length,
    noFit: xs.length - ok.length,
    maePct: mean((x) => Math.abs(x.ours.pct - x.dPct)),
    naiveMaePct: mean((x) => Math.abs(x.naive - x.dPct)),
    bandCoverage: mean((x) => (x.dPct >= x.ours.lo - x.stepPct && x.dPct <= x.ours.hi + x.stepPct ? 1 : 0)),
    meanMovePct: mean((x) => x.dPct),
  };
}

function intervalsByWindow(traces: readonly SimTrace[]): Map<string, Interval[]> {
  const out = new Map<string, Interval[]>();
  for (const trace of traces) {
    const usd = usdSeries(trace);
    for (const window of ['five_hour', 'seven_day'] as const) {
      const samples = trace.samples.filter((s) => s.window === window).map((s) => traceToBarSample({ ...s }));
      const list = out.get(window) ?? [];
      list.push(...intervalsOf(samples, usd));
      out.set(window, list);
    }
  }
  return out;
}

export function runCalibrationAccuracy(opts: { seed?: number; traces?: number; days?: number } = {}): CalibrationAccuracyReport {
  const seed = opts.seed ?? 1;
  const traces = opts.traces ?? 60;
  const days = opts.days ?? 8;
  const plain: CalibrationAccuracyReport['plain'] = {};
  for (const [w, xs] of intervalsByWindow(simulateTraces({ seed, traces, days }))) plain[w] = score(xs);
  const drift: CalibrationAccuracyReport['drift'] = {};
  for (const [w, xs] of intervalsByWindow(simulateTraces({ seed, traces, days, drift: DRIFT }))) {
    drift[w] = {};
    for (const [label, from, to] of SINCE) drift[w]![label] = score(xs.filter((x) => x.atMs - DRIFT.atMs >= from && x.atMs - DRIFT.atMs < to));
  }
  return { seed, traces, days, plain, drift };
}

const num = (x: number, d = 2): string => (Number.isFinite(x) ? x.toFixed(d) : '–');
const pct = (x: number): string => (Number.isFinite(x) ? `${(100 * x).toFixed(0)}%` : '–');

/** The report as the lines `npm run bench` prints. */
export function formatCalibrationAccuracy(r: CalibrationAccuracyReport): string[] {
  const lines: string[] = [];
  lines.push(`$→% calibration: ${r.traces} simulated seats × ${r.days} days (seed ${r.seed}); Δ% predicted from Δ$ over held-out 30-minute intervals, k fitted on the pairs before each`);
  const row = (label: string, s: CalibrationScore): string =>
    `  ${label.padEnd(18)} ${String(s.intervals).padStart(6)}  sleds ${num(s.maePct).padStart(5)} pt  naive ${num(s.naiveMaePct).padStart(5)} pt  (${num(s.maePct / s.naiveMaePct)}×)  band holds ${pct(s.bandCoverage).padStart(4)}  mean move ${num(s.meanMovePct)} pt`;
  lines.push(`  ${''.padEnd(18)} intervals  MAE`);
  for (const [w, s] of Object.entries(r.plain)) lines.push(row(w, s));
  lines.push(`  drift: budgets ×2 from ${new Date(DRIFT.atMs).toISOString().slice(0, 16)}Z (a promotion: a dollar moves the bar half as far), by time since`);
  for (const [w, bySince] of Object.entries(r.drift)) for (const [label, s] of Object.entries(bySince)) lines.push(row(`${w} ${label}`, s));
  lines.push('  naive: one %-per-$ ratio over the whole trace so far; sleds: the recency-weighted fit with its band and drift refit');
  return lines;
}
