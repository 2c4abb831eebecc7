import { keyUnavailable } from './continue.js';
import { exitNumber, type ExitContext, type Offer } from './types.js';
import { formatBand, formatShortTime, scaleBand } from './words.js';

/** The batch tier halves every token price (shared/facts/model-apis.md §3.5). */
export const BATCH_PRICE_FACTOR = 0.5;

/** 3 — run overnight on the batch tier at half price, queued for the policy's overnight window. */
export function price(ctx: ExitContext): Offer {
  const base = { exit: 'overnight' as const, number: exitNumber('overnight'), title: 'Run overnight' };
  if (!ctx.overnight) return { ...base, ok: false, detail: 'no overnight window in the policy', short: 'overnight', cost: null };
  const why = keyUnavailable(ctx);
  if (why) return { ...base, ok: false, detail: `${why}; the batch tier runs on it`, short: 'overnight', cost: null };
  const cost = ctx.remaining.usd ? scaleBand(ctx.remaining.usd, BATCH_PRICE_FACTOR) : null;
  const window = `${formatShortTime(ctx.overnight.startMs, ctx.timeZone)}–${formatShortTime(ctx.overnight.endMs, ctx.timeZone)}`;
  const parts = ['batch tier · ½ price', `runs ${window}`];
  if (cost) parts.push(formatBand(cost));
  return { ...base, ok: true, detail: parts.join(' · '), short: 'overnight ½', cost };
}
