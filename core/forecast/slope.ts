/**
 * Slopes for the forecaster: Theil–Sen (the robust one the forecast uses) and plain least squares (the baseline).
 * Pure and deterministic: the same points always give the same answer.
 */

export interface Point {
  x: number;
  y: number;
}

export interface TheilSenOptions {
  /**
   * Above this many pairs, the points are thinned evenly by index (first and last kept) to the most that give
   * at most this many pairs, so the cost stays bounded on dense trails. Deterministic. Default 800.
   */
  maxPairs?: number;
  /**
   * Weight each pairwise slope by its x-distance (default true). Neighbouring samples a few seconds apart give
   * slopes that are mostly quantisation noise (0.1% steps); weighting by distance lets the long pairs speak.
   */
  weighted?: boolean;
  /** The quantiles of the pairwise slopes reported as the spread. Default [0.2, 0.8]. */
  spread?: readonly [number, number];
  /** Pairs closer than this in x are skipped (default 0: only identical x). */
  minDx?: number;
}

export interface TheilSen {
  slope: number;
  intercept: number;
  /** The spread quantiles of the (weighted) pairwise slopes: [lo, hi]. */
  lo: number;
  hi: number;
  /** How many pairwise slopes were used. */
  pairs: number;
}

export interface Weighted {
  v: number;
  w: number;
}

/** The weighted q-quantile (0 ≤ q ≤ 1) of values; sorts `items` in place. Lower weighted quantile, no interpolation. */
export function weightedQuantile(items: Weighted[], q: number): number {
  items.sort((a, b) => a.v - b.v);
  return sortedWeightedQuantile(items, q);
}

/** {@link weightedQuantile} of items already sorted by value. */
function sortedWeightedQuantile(items: readonly Weighted[], q: number): number {
  if (items.length === 0) return Number.NaN;
  let total = 0;
  for (const it of items) total += it.w;
  const target = Math.min(1, Math.max(0, q)) * total;
  let acc = 0;
  for (const it of items) {
    acc += it.w;
    if (acc >= target) return it.v;
  }
  return items[items.length - 1]!.v;
}

/** The q-quantile of plain numbers, with linear interpolation between order statistics. Does not modify `xs`. */
export function quantile(xs: readonly number[], q: number): number {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  const pos = Math.min(1, Math.max(0, q)) * (s.length - 1);
  const i = Math.floor(pos);
  const frac = pos - i;
  const a = s[i]!;
  const b = s[Math.min(i + 1, s.length - 1)]!;
  return a + (b - a) * frac;
}

export function median(xs: readonly number[]): number {
  return quantile(xs, 0.5);
}

/**
 * The weighted q-quantile of the first n values, the same answer as {@link weightedQuantile} (the first value, in
 * order, at which the cumulative weight reaches q × total) in linear expected time: a quickselect with a
 * three-way partition. Reorders v and w together.
 */
export function weightedSelect(v: Float64Array, w: Float64Array, n: number, q: number): number {
  if (n === 0) return Number.NaN;
  let total = 0;
  for (let i = 0; i < n; i++) total += w[i]!;
  let target = Math.min(1, Math.max(0, q)) * total;
  let lo = 0;
  let hi = n - 1;
  const swap = (a: number, b: number): void => {
    const tv = v[a]!;
    v[a] = v[b]!;
    v[b] = tv;
    const tw = w[a]!;
    w[a] = w[b]!;
    w[b] = tw;
  };
  for (;;) {
    if (lo >= hi) return v[lo]!;
    const pivot = v[(lo + hi) >> 1]!;
    let lt = lo;
    let i = lo;
    let gt = hi;
    while (i <= gt) {
      if (v[i]! < pivot) swap(lt++, i++);
      else if (v[i]! > pivot) swap(i, gt--);
      else i++;
    }
    let wl = 0;
    for (let k = lo; k < lt; k++) wl += w[k]!;
    let we = 0;
    for (let k = lt; k <= gt; k++) we += w[k]!;
    if (target <= wl && lt > lo) hi = lt - 1;
    else if (target <= wl + we || gt >= hi) return pivot;
    else {
      target -= wl + we;
      lo = gt + 1;
    }
  }
}

/** Evenly thins points by index, first and last kept, to the most m with m(m−1)/2 ≤ maxPairs. */
export function thin<T>(points: readonly T[], maxPairs: number): readonly T[] {
  const n = points.length;
  if ((n * (n - 1)) / 2 <= maxPairs) return points;
  const m = Math.max(2, Math.floor((1 + Math.sqrt(1 + 8 * maxPairs)) / 2));
  const out: T[] = [];
  for (let k = 0; k < m; k++) out.push(points[Math.round((k * (n - 1)) / (m - 1))]!);
  return out;
}

/**
 * Theil–Sen: the (weighted) median of the slopes between all pairs of points, intercept the median of
 * y − slope·x. Returns null with fewer than two distinct x.
 */
export function theilSen(points: readonly Point[], opts: TheilSenOptions = {}): TheilSen | null {
  const pts = thin(points, opts.maxPairs ?? 800);
  const n = pts.length;
  const weighted = opts.weighted ?? true;
  const [qLo, qHi] = opts.spread ?? [0.2, 0.8];
  const minDx = opts.minDx ?? 0;
  const cap = (n * (n - 1)) / 2;
  const v = new Float64Array(cap);
  const w = new Float64Array(cap);
  let m = 0;
  for (let i = 0; i < n; i++) {
    const a = pts[i]!;
    for (let j = i + 1; j < n; j++) {
      const b = pts[j]!;
      const dx = b.x - a.x;
      if (Math.abs(dx) <= minDx) continue;
      v[m] = (b.y - a.y) / dx;
      w[m++] = weighted ? Math.abs(dx) : 1;
    }
  }
  if (m === 0) return null;
  const slope = weightedSelect(v, w, m, 0.5);
  const lo = weightedSelect(v, w, m, qLo);
  const hi = weightedSelect(v, w, m, qHi);
  const intercept = median(pts.map((p) => p.y - slope * p.x));
  return { slope, intercept, lo, hi, pairs: m };
}

export interface LeastSquares {
  slope: number;
  intercept: number;
  n: number;
}

/** Ordinary least squares y = intercept + slope·x. Null with fewer than two distinct x. */
export function leastSquares(points: readonly Point[]): LeastSquares | null {
  const n = points.length;
  if (n < 2) return null;
  let mx = 0;
  let my = 0;
  for (const p of points) {
    mx += p.x;
    my += p.y;
  }
  mx /= n;
  my /= n;
  let sxx = 0;
  let sxy = 0;
  for (const p of points) {
    sxx += (p.x - mx) ** 2;
    sxy += (p.x - mx) * (p.y - my);
  }
  if (sxx === 0) return null;
  const slope = sxy / sxx;
  return { slope, intercept: my - slope * mx, n };
}
