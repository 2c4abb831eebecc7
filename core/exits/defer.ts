import { exitNumber, type ExitContext, type Offer } from './types.js';
import { formatBand, formatWhen } from './words.js';

/** 6 — defer to the reset: the session runs itself headless then, on the same model. */
export function price(ctx: ExitContext): Offer {
  const base = { exit: 'defer' as const, number: exitNumber('defer'), title: 'Defer to reset' };
  const reset = ctx.wall.resetAtMs;
  if (reset === null) return { ...base, ok: false, detail: 'the reset time is not known', short: 'defer', cost: null };
  const parts = [`runs itself ${formatWhen(reset, ctx.nowMs, ctx.timeZone)}`, 'same model', 'full price'];
  if (ctx.remaining.usd) parts.push(formatBand(ctx.remaining.usd));
  return { ...base, ok: true, detail: parts.join(' · '), short: 'defer', cost: ctx.remaining.usd };
}
