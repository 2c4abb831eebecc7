import type { Band as EstimateBand } from '../estimate/band.js';
/** A node's (or a route's) band: dollars and active minutes, low and high, with the estimator's confidence. */
export interface RouteBand {
  lowUsd: number;
  highUsd: number;
  lowMin: number;
  highMin: number;
  /** 0..1. */
  confidence: number;
}

/**
 * The route's band is the sum of its nodes': lows summed, highs summed. Its confidence is the MIN of theirs, not the
 * product: the product is the chance that every node lands in its own band, which falls towards zero with the node
 * count (eight nodes at 0.8 would read 0.17) although a sum is more likely to land in the summed band than any one
 * node in its own (over- and under-runs offset). The weakest node's confidence is the honest bound we can state.
 * Null when any node has no band yet: a partial sum would understate the route.
 */
export function routeBand(bands: ReadonlyArray<RouteBand | null>): RouteBand | null {
  if (bands.length === 0 || bands.some((b) => b === null)) return null;
  const all = bands as RouteBand[];
  const sum = (f: (b: RouteBand) => number): number => Math.round(all.reduce((s, b) => s + f(b), 0) * 100) / 100;
  return { lowUsd: sum((b) => b.lowUsd), highUsd: sum((b) => b.highUsd), lowMin: sum((b) => b.lowMin), highMin: sum((b) => b.highMin), confidence: Math.min(...all.map((b) => b.confidence)) };
}

/**
 * A node's band from the estimator's answer (its measured band, else its labelled prior): dollars from micros, the
 * fit as the confidence. A prior's confidence is 0: it stands on no receipt, and is never shown as if it were measured.
 */
export function nodeBand(answer: { band: EstimateBand | null; prior: EstimateBand | null }): RouteBand | null {
  const b = answer.band ?? answer.prior;
  if (!b) return null;
  const confidence = b.basis === 'receipts' && b.fit && b.fit.of > 0 ? Math.round((b.fit.inBand / b.fit.of) * 100) / 100 : 0;
  return { lowUsd: b.lowMicros / 1e6, highUsd: b.highMicros / 1e6, lowMin: b.lowMinutes, highMin: b.highMinutes, confidence };
}
