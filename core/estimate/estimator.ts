import type { ReceiptBody } from '../receipt/receipt.js';
import { MIN_SIMILAR_RECEIPTS, type Band } from './band.js';

/**
 * The estimator: from the receipts of past tasks, the band of a new one. Pure.
 *
 * Similar = same type (when the task has one), same repository, same model family; of those, the NEIGHBOURS
 * nearest on log prompt size (and on log files touched and log turns when the query knows them). The band is the
 * 20th–80th percentile of their dollars and active minutes; its fit is how many of them landed in their own band,
 * of those that had one (on the query's seat, when it names one). Fewer than MIN_SIMILAR_RECEIPTS similar
 * receipts: no band (the caller may offer a labelled prior, core/estimate/prior.ts).
 */
export interface EstimateQuery {
  type: string | null;
  repo: string | null;
  /** The model the task will run on; null: any model. */
  model: string | null;
  promptChars: number;
  /** Known once work has started (a band asked for mid-task); null: not a feature of the distance. */
  filesTouched?: number | null;
  turns?: number | null;
  /** The seat whose fit is asked for; null: every seat's. */
  seat?: string | null;
}

/** What the estimator reads of a past receipt (a receipt body has all of it; musher keeps just this in memory). */
export type ReceiptFeatures = Pick<
  ReceiptBody,
  'type' | 'repo' | 'seat' | 'models' | 'costMicros' | 'activeMinutes' | 'promptChars' | 'filesTouched' | 'turns' | 'inBand' | 'endedAt'
>;

export interface Estimate<R extends ReceiptFeatures = ReceiptFeatures> {
  /** Null: fewer than MIN_SIMILAR_RECEIPTS similar receipts ("no band yet"). */
  band: Band | null;
  /** The similar receipts the band stands on (nearest first), or all that matched when too few. */
  similar: R[];
}

/** The most neighbours a band stands on: enough for stable percentiles, few enough to stay "similar". */
export const NEIGHBOURS = 15;
export const BAND_LOW_PERCENTILE = 0.2;
export const BAND_HIGH_PERCENTILE = 0.8;

/**
 * A model's family, stable across versions and dates: "claude-opus-5-5" → "claude-opus", "claude-3-5-haiku" →
 * "claude-haiku", "gpt-5.1-codex-mini" → "gpt-codex-mini", "gpt-5" → "gpt".
 */
export function modelFamily(id: string): string {
  const m = id.toLowerCase().replace(/^(anthropic|openai)\//, '').replace(/\[[^\]]*\]$/, '').replace(/-(?:\d{8}|\d{4}-\d{2}-\d{2})$/, '');
  const claude = /^claude-(?:[\d-]+-)?([a-z]+)/.exec(m);
  if (claude) return `claude-${claude[1]}`;
  const gpt = /^gpt-[\d.]+(-.*)?$/.exec(m);
  if (gpt) return `gpt${gpt[1] ?? ''}`;
  return m;
}

/** Same type (when the query has one), same repository, and a model of the same family (when the query names one). */
export function isSimilar(r: ReceiptFeatures, q: EstimateQuery): boolean {
  if (q.type !== null && r.type !== q.type) return false;
  if (r.repo !== q.repo) return false;
  if (q.model !== null) {
    const family = modelFamily(q.model);
    if (!r.models.some((m) => modelFamily(m) === family)) return false;
  }
  return true;
}

const logSize = (n: number): number => Math.log1p(Math.max(0, n));

/** Distance on log prompt size, plus log files and log turns when the query knows them. */
export function distance(r: ReceiptFeatures, q: EstimateQuery): number {
  let d2 = (logSize(r.promptChars) - logSize(q.promptChars)) ** 2;
  if (q.filesTouched != null) d2 += (logSize(r.filesTouched) - logSize(q.filesTouched)) ** 2;
  if (q.turns != null) d2 += (logSize(r.turns) - logSize(q.turns)) ** 2;
  return Math.sqrt(d2);
}

/** The p-th percentile (0–1) of ascending values, linearly interpolated between ranks. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) throw new Error('percentile of nothing');
  const rank = p * (sorted.length - 1);
  const lo = Math.floor(rank);
  const hi = Math.ceil(rank);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (rank - lo);
}

export function estimateBand<R extends ReceiptFeatures>(receipts: readonly R[], q: EstimateQuery): Estimate<R> {
  const matched = receipts.filter((r) => isSimilar(r, q));
  // Nearest first; the more recent of two at the same distance (a repository's habits drift).
  const near = matched
    .map((r) => ({ r, d: distance(r, q) }))
    .sort((a, b) => a.d - b.d || b.r.endedAt - a.r.endedAt)
    .slice(0, NEIGHBOURS)
    .map((x) => x.r);
  if (near.length < MIN_SIMILAR_RECEIPTS) return { band: null, similar: near };
  const dollars = near.map((r) => r.costMicros).sort((a, b) => a - b);
  const minutes = near.map((r) => r.activeMinutes).sort((a, b) => a - b);
  const judged = near.filter((r) => (q.seat == null || r.seat === q.seat) && r.inBand !== null);
  return {
    band: {
      lowMicros: Math.round(percentile(dollars, BAND_LOW_PERCENTILE)),
      highMicros: Math.round(percentile(dollars, BAND_HIGH_PERCENTILE)),
      lowMinutes: Math.round(percentile(minutes, BAND_LOW_PERCENTILE)),
      highMinutes: Math.round(percentile(minutes, BAND_HIGH_PERCENTILE)),
      fit: judged.length > 0 ? { inBand: judged.filter((r) => r.inBand === true).length, of: judged.length } : null,
      basis: 'receipts',
      n: near.length,
    },
    similar: near,
  };
}

/** Whether a task's actual dollars and minutes both landed inside the band it had; null without a measured band. */
export function landedInBand(band: Band | null, costMicros: number, activeMinutes: number): boolean | null {
  if (!band || band.basis !== 'receipts') return null;
  const minutes = Math.round(activeMinutes); // the band's minutes are whole
  return costMicros >= band.lowMicros && costMicros <= band.highMicros && minutes >= band.lowMinutes && minutes <= band.highMinutes;
}
