import { MIN_SIMILAR_RECEIPTS, type Band } from './band.js';
import type { EstimateQuery } from './estimator.js';
import { modelFamily } from './estimator.js';
import { formatBand, formatMinutesRange, formatMoneyRange } from './format.js';

/**
 * The estimate as one short paragraph a person can read and a model can use (`/sled estimate`, `POST /v1/estimate`,
 * the MCP `estimate` tool, the tracker's comment). Pure.
 */
export interface EstimateWords {
  band: Band | null;
  prior: Band | null;
  /** Similar receipts found (the band's n when there is a band). */
  similar: number;
  query: Pick<EstimateQuery, 'type' | 'model' | 'repo'>;
  /** The model the prior was priced on (null: none could be). */
  priorModel: string | null;
}

function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

export function describeEstimate(w: EstimateWords): string {
  const kind = w.query.type ? `${w.query.type} ` : '';
  const where = w.query.repo ? 'in this repository' : 'outside any repository';
  const on = w.query.model ? ` on ${modelFamily(w.query.model)}` : '';
  if (w.band) {
    const fit = w.band.fit
      ? ` ${w.band.fit.inBand} of ${w.band.fit.of} of them landed in the band they had.`
      : ' None of them had a band of its own yet, so how well bands hold here is not known.';
    return `${formatBand(w.band)} — from ${plural(w.band.n, `similar ${kind}receipt`)} ${where}${on} (20th–80th percentile of API-equivalent dollars and active minutes).${fit}`;
  }
  const head = `no band yet: ${plural(w.similar, `similar ${kind}receipt`)} ${where}${on} (${MIN_SIMILAR_RECEIPTS} needed)`;
  if (w.prior && w.priorModel) {
    return `${head}; a prior from the prompt's size and ${w.priorModel}'s prices says ${formatMoneyRange(w.prior.lowMicros, w.prior.highMicros)} · ${formatMinutesRange(w.prior.lowMinutes, w.prior.highMinutes)} (labelled prior, not measured).`;
  }
  return `${head}; no prior either: ${w.priorModel ? `${w.priorModel} has no price` : 'no model known to price one — name one (--model)'}.`;
}
