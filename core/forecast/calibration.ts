import { weightedQuantile } from './slope.js';
import { splitTrails, type BarSample, type TrailOptions } from './trail.js';

/**
 * $→% calibration: how many points of a bar one API-equivalent dollar moves, per seat and window, fitted from
 * (Δ%, Δ$) pairs between readings (the dollars from the priced transcripts and rollouts).
 *
 * The fit:
 * 1. Consecutive pairs are pooled into chunks of at least `chunkMinPct` points or `chunkMinUsdMicros` (a 0.1%
 *    bar step over a few cents is mostly rounding); increments add, so pooling neighbours is exact.
 * 2. k = the weighted median of the chunks' ratios Δ% ÷ Δ$, weights Δ$ × a recency decay (half-life
 *    `halfLifeMs`): Theil–Sen through the origin, leaning on big and recent chunks.
 * 3. The band is the weighted `bandQuantiles` of the same ratios: how much the next dollars may move the bar.
 * 4. Drift: when the pooled ratio of the chunks of the last `recentMs` falls outside the (narrower)
 *    `driftQuantiles` of the ratios by more than `driftTolerance` (a promotion, peak hours, another model mix), k is refitted on those recent chunks alone
 *    (`drift: 'refit'`), or, with too few of them, the band is widened to hold the recent ratio
 *    (`drift: 'suspected'`).
 *
 * A chunk in which the bar moved with no priced spend at all (claude.ai or Desktop use, which shares the pool but
 * leaves no transcript) has no ratio and is left out.
 *
 * Money is integer micro-dollars; k is points per (whole) dollar.
 */

export interface CalibrationPair {
  /** Points the bar moved between two readings (≥ 0). */
  dPct: number;
  /** API-equivalent spend between the same readings, micro-dollars (≥ 0). */
  dUsdMicros: number;
  /** When the later reading was taken, epoch ms. */
  atMs: number;
}

export interface CalibrationFit {
  kind: 'fit';
  /** Points of the bar per API-equivalent dollar. */
  pctPerUsd: number;
  /** [lo, hi] points per dollar. */
  band: [number, number];
  /** Chunks the fit used. */
  n: number;
  fittedAtMs: number;
  /** The earliest pair the fit used, epoch ms. */
  sinceMs: number;
  drift: 'none' | 'refit' | 'suspected';
}

export type CalibrationReason = 'too-few-pairs' | 'no-spend' | 'no-movement';

export interface NoCalibration {
  kind: 'none';
  reason: CalibrationReason;
  message: string;
}

export type Calibration = CalibrationFit | NoCalibration;

export interface CalibrationOptions {
  /** A chunk closes once it holds this many points … (default 1). */
  chunkMinPct: number;
  /**
   * … or this much spend (default $10). A chunk's Δ% is read off rounded bars (0.1 or 1 point): on the weekly bar
   * $2 moves it well under a point, so $2 chunks had ratios mostly made of rounding (the weekly calibration fared
   * 1.5× worse than one global ratio); $10 chunks close on a whole point nearly always.
   */
  chunkMinUsdMicros: number;
  /** Fewer chunks than this: no fit (default 3). */
  minChunks: number;
  /** Recency half-life of a chunk's weight (default 24 h: "refit daily"). */
  halfLifeMs: number;
  /** Pairs older than this are ignored (default 7 days). */
  maxAgeMs: number;
  /** The drift check looks at the chunks of this last stretch (default 2 h). */
  recentMs: number;
  /**
   * Band quantiles of the chunk ratios (default 0.1, 0.9: on the simulator the band then holds the Δ% of a held-out
   * half hour of 5-hour use ~80% of the time, bench/calibration-accuracy.ts).
   */
  bandQuantiles: readonly [number, number];
  /**
   * The drift check's quantiles of the chunk ratios (default 0.2, 0.8): narrower than the band, so a promotion
   * that moves the ratio by ×2 is caught within the 2 h of `recentMs` rather than when it leaves the wide band.
   */
  driftQuantiles: readonly [number, number];
  /** The recent ratio drifts when it leaves the drift quantiles by more than this share of them (default 0.1: rounding). */
  driftTolerance: number;
}

const HOUR = 3_600_000;

export const CALIBRATION_DEFAULTS: CalibrationOptions = {
  chunkMinPct: 1,
  chunkMinUsdMicros: 10_000_000,
  minChunks: 3,
  halfLifeMs: 24 * HOUR,
  maxAgeMs: 7 * 24 * HOUR,
  recentMs: 2 * HOUR,
  bandQuantiles: [0.1, 0.9],
  driftQuantiles: [0.2, 0.8],
  driftTolerance: 0.1,
};

interface Chunk {
  dPct: number;
  dUsdMicros: number;
  fromMs: number;
  atMs: number;
}

function chunksOf(pairs: readonly CalibrationPair[], o: CalibrationOptions): Chunk[] {
  const chunks: Chunk[] = [];
  let cur: Chunk | null = null;
  for (const p of pairs) {
    if (!cur) cur = { dPct: 0, dUsdMicros: 0, fromMs: p.atMs, atMs: p.atMs };
    cur.dPct += p.dPct;
    cur.dUsdMicros += p.dUsdMicros;
    cur.atMs = p.atMs;
    if (cur.dPct >= o.chunkMinPct || cur.dUsdMicros >= o.chunkMinUsdMicros) {
      chunks.push(cur);
      cur = null;
    }
  }
  return chunks;
}

function fitChunks(chunks: readonly Chunk[], nowMs: number, o: CalibrationOptions): { k: number; lo: number; hi: number; driftLo: number; driftHi: number } | null {
  const items = chunks
    .filter((c) => c.dUsdMicros > 0)
    .map((c) => ({ v: c.dPct / (c.dUsdMicros / 1e6), w: (c.dUsdMicros / 1e6) * 0.5 ** (Math.max(0, nowMs - c.atMs) / o.halfLifeMs) }));
  if (items.length === 0) return null;
  return {
    k: weightedQuantile(items, 0.5),
    lo: weightedQuantile(items, o.bandQuantiles[0]),
    hi: weightedQuantile(items, o.bandQuantiles[1]),
    driftLo: weightedQuantile(items, o.driftQuantiles[0]),
    driftHi: weightedQuantile(items, o.driftQuantiles[1]),
  };
}

/** Fits k (points per dollar) from pairs, as of `nowMs`. */
export function fitCalibration(pairs: readonly CalibrationPair[], nowMs: number, opts?: Partial<CalibrationOptions>): Calibration {
  const o: CalibrationOptions = { ...CALIBRATION_DEFAULTS, ...opts };
  const usable = pairs
    .filter((p) => Number.isFinite(p.dPct) && Number.isFinite(p.dUsdMicros) && p.dPct >= 0 && p.dUsdMicros >= 0 && p.atMs <= nowMs && nowMs - p.atMs <= o.maxAgeMs)
    .sort((a, b) => a.atMs - b.atMs);
  const spend = usable.reduce((s, p) => s + p.dUsdMicros, 0);
  const moved = usable.reduce((s, p) => s + p.dPct, 0);
  if (usable.length > 0 && spend === 0) return { kind: 'none', reason: 'no-spend', message: 'The bar moved but no priced spend was seen between readings; nothing to calibrate on.' };
  if (usable.length > 0 && moved === 0) return { kind: 'none', reason: 'no-movement', message: 'Spend was seen but the bar has not moved; nothing to calibrate on yet.' };
  const chunks = chunksOf(usable, o).filter((c) => c.dUsdMicros > 0);
  if (chunks.length < o.minChunks) {
    return { kind: 'none', reason: 'too-few-pairs', message: `Only ${chunks.length} usable stretch${chunks.length === 1 ? '' : 'es'} of spend and bar movement; calibration needs ${o.minChunks}.` };
  }
  const all = fitChunks(chunks, nowMs, o)!;
  const recent = chunks.filter((c) => c.atMs > nowMs - o.recentMs);
  const base: CalibrationFit = { kind: 'fit', pctPerUsd: all.k, band: [all.lo, all.hi], n: chunks.length, fittedAtMs: nowMs, sinceMs: chunks[0]!.fromMs, drift: 'none' };
  if (recent.length === 0 || recent.length === chunks.length) return base;
  const rUsd = recent.reduce((s, c) => s + c.dUsdMicros, 0);
  const rRatio = rUsd > 0 ? recent.reduce((s, c) => s + c.dPct, 0) / (rUsd / 1e6) : Infinity;
  if (rRatio >= all.driftLo * (1 - o.driftTolerance) && rRatio <= all.driftHi * (1 + o.driftTolerance)) return base;
  if (recent.length >= o.minChunks) {
    const re = fitChunks(recent, nowMs, o);
    if (re) return { kind: 'fit', pctPerUsd: re.k, band: [re.lo, re.hi], n: recent.length, fittedAtMs: nowMs, sinceMs: recent[0]!.fromMs, drift: 'refit' };
  }
  if (!Number.isFinite(rRatio)) return { ...base, drift: 'suspected' };
  return { ...base, band: [Math.min(all.lo, rRatio), Math.max(all.hi, rRatio)], drift: 'suspected' };
}

/** Points of the bar a spend moves. */
export function usdToPct(micros: number, cal: CalibrationFit): number {
  return (micros / 1e6) * cal.pctPerUsd;
}

/** The spend that moves the bar by `pct` points, micro-dollars. */
export function pctToUsdMicros(pct: number, cal: CalibrationFit): number {
  return Math.round((pct / cal.pctPerUsd) * 1e6);
}

/** "$6 more until the 5-hour wall": the spend from `usedPct` to 100%, micro-dollars. */
export function dollarsToWall(usedPct: number, cal: CalibrationFit): number {
  return pctToUsdMicros(Math.max(0, 100 - usedPct), cal);
}

/** The band of {@link dollarsToWall}: [fewest, most] micro-dollars (a high k means fewer dollars). */
export function dollarsToWallBand(usedPct: number, cal: CalibrationFit): [number, number] {
  const rest = Math.max(0, 100 - usedPct);
  const [lo, hi] = cal.band;
  return [Math.round((rest / hi) * 1e6), lo > 0 ? Math.round((rest / lo) * 1e6) : Number.MAX_SAFE_INTEGER];
}

export interface UsdPoint {
  /** Epoch ms. */
  atMs: number;
  /** Cumulative API-equivalent spend up to then, micro-dollars. */
  usdMicros: number;
}

/**
 * (Δ%, Δ$) pairs between consecutive accepted readings of each trail of one bar (rollovers and stale readings
 * handled as in splitTrails). The spend at a reading is the cumulative series' last value at or before it; a pair
 * is made only when both ends have one, and never across a rollover.
 */
export function pairsFromSeries(barSamples: readonly BarSample[], cumulativeUsd: readonly UsdPoint[], trailOpts?: Partial<TrailOptions>): CalibrationPair[] {
  const usd = [...cumulativeUsd].sort((a, b) => a.atMs - b.atMs);
  const at = (t: number): number | null => {
    let lo = 0;
    let hi = usd.length - 1;
    let found: number | null = null;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (usd[mid]!.atMs <= t) {
        found = usd[mid]!.usdMicros;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return found;
  };
  const out: CalibrationPair[] = [];
  for (const trail of splitTrails(barSamples, trailOpts)) {
    for (let i = 1; i < trail.points.length; i++) {
      const a = trail.points[i - 1]!;
      const b = trail.points[i]!;
      const ua = at(a.atMs);
      const ub = at(b.atMs);
      if (ua === null || ub === null) continue;
      const dUsd = ub - ua;
      const dPct = b.usedPct - a.usedPct;
      if (dUsd < 0 || dPct < 0 || (dUsd === 0 && dPct === 0)) continue;
      out.push({ dPct, dUsdMicros: dUsd, atMs: b.atMs });
    }
  }
  return out.sort((x, y) => x.atMs - y.atMs);
}
