import { formatUsd } from '../format.js';
import { exitNumber, type ExitContext, type Offer } from './types.js';
import { formatShortTime, formatWhen } from './words.js';

/** 2 — hold until the reset: free; Claude Code continues by itself then, or sleds does at a moved time. */
export function price(ctx: ExitContext): Offer {
  const base = { exit: 'hold' as const, number: exitNumber('hold'), title: 'Hold until reset' };
  const reset = ctx.wall.resetAtMs;
  if (reset === null) return { ...base, ok: false, detail: 'the reset time is not known', short: 'hold', cost: null };
  const parts = ['free', `resumes ${formatWhen(reset, ctx.nowMs, ctx.timeZone)}`];
  const usd = ctx.remaining.usd;
  if (usd) parts.push(`saves ≈ ${formatUsd(Math.round((usd.loMicros + usd.hiMicros) / 2))} vs continuing now`);
  if (ctx.coldCache) {
    parts.push(
      ctx.coldCache.writeCostMicros !== null
        ? `prompt cache cold by then (≈ ${formatUsd(ctx.coldCache.writeCostMicros)} to rewrite)`
        : 'prompt cache cold by then',
    );
  }
  return { ...base, ok: true, detail: parts.join(' · '), short: `hold → ${formatShortTime(reset, ctx.timeZone)}`, cost: { loMicros: 0, hiMicros: 0 } };
}
