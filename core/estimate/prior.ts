import type { TokenRates } from '../price-table.js';
import type { Band } from './band.js';

/**
 * A labelled prior: what a task might cost before any similar receipt exists, from the prompt's size and the
 * model's prices alone. Never shown as measured (basis 'prior', n 0, no fit). Pure.
 *
 * How it is derived (a rough, stated model of an agent's session, not a measurement):
 * - the prompt is ~4 characters a token;
 * - the agent makes `calls` model calls, growing with the log of the prompt's size:
 *   12 × log2(2 + promptTokens / 100), between 10 and 150 (a one-line ask ≈ 14 calls, a page of 4,000 characters ≈ 43);
 *   a longer ask names more to do, but not proportionally more;
 * - each call re-reads an average context of PRIOR_CONTEXT_TOKENS (system prompt, tools, files read, history):
 *   90% from the prompt cache, 10% written to it (5-minute writes), and writes PRIOR_OUTPUT_TOKENS of output;
 *   where a model has no cache prices, the whole context is priced as input;
 * - the point figure is calls × that call's price; the band is half to twice it, and 0.2–0.8 minutes a call.
 */
export const PRIOR_CONTEXT_TOKENS = 50_000;
export const PRIOR_OUTPUT_TOKENS = 800;
const CHARS_PER_TOKEN = 4;
const CACHE_READ_SHARE = 0.9;

export function priorCalls(promptChars: number): number {
  const tokens = Math.max(0, promptChars) / CHARS_PER_TOKEN;
  return Math.min(150, Math.max(10, Math.round(12 * Math.log2(2 + tokens / 100))));
}

/** Integer pico-dollars of one average call at these rates. */
function callPico(rates: TokenRates, promptTokens: number): number {
  const context = PRIOR_CONTEXT_TOKENS + promptTokens;
  const read = rates.cacheRead ?? rates.input;
  const write = rates.cacheWrite5m ?? rates.input;
  return context * CACHE_READ_SHARE * read + context * (1 - CACHE_READ_SHARE) * write + PRIOR_OUTPUT_TOKENS * rates.output;
}

/** The prior band for a prompt of this size on a model with these rates (pico-dollars a token); null without rates. */
export function priorBand(promptChars: number, rates: TokenRates | null): Band | null {
  if (!rates) return null;
  const calls = priorCalls(promptChars);
  const pointMicros = (calls * callPico(rates, Math.max(0, promptChars) / CHARS_PER_TOKEN)) / 1_000_000;
  return {
    lowMicros: Math.round(pointMicros / 2),
    highMicros: Math.round(pointMicros * 2),
    lowMinutes: Math.max(1, Math.round(calls * 0.2)),
    highMinutes: Math.max(1, Math.round(calls * 0.8)),
    fit: null,
    basis: 'prior',
    n: 0,
  };
}
