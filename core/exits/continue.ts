import { formatUsd } from '../format.js';
import { exitNumber, type ExitContext, type Offer } from './types.js';

/** The smaller of the day and week allowance left; null when neither is capped. */
export function allowanceLeftMicros(left: { dayMicros: number | null; weekMicros: number | null }): number | null {
  const caps = [left.dayMicros, left.weekMicros].filter((v): v is number => v !== null);
  return caps.length === 0 ? null : Math.max(0, Math.min(...caps));
}

/** Why the platform key cannot be used now, or null when it can. Shared by continue, switch and overnight. */
export function keyUnavailable(ctx: ExitContext): string | null {
  if (!ctx.key) return `no platform key configured (sleds key set ${ctx.session.provider})`;
  const left = allowanceLeftMicros(ctx.key.allowanceLeft);
  if (left !== null && left <= 0) {
    return ctx.key.allowanceLeft.dayMicros !== null && ctx.key.allowanceLeft.dayMicros <= 0 ? 'allowance spent for today' : 'allowance spent for this week';
  }
  return null;
}

/** 1 — continue now on the platform key, through the gateway, within the seat's allowance. */
export function price(ctx: ExitContext): Offer {
  const base = { exit: 'continue' as const, number: exitNumber('continue'), title: 'Continue now' };
  const why = keyUnavailable(ctx);
  if (why) return { ...base, ok: false, detail: why, short: 'no key', cost: null };
  const left = allowanceLeftMicros(ctx.key!.allowanceLeft);
  return {
    ...base,
    ok: true,
    detail: left === null ? 'platform key · no allowance cap' : `platform key · allowance left ${formatUsd(left)}`,
    short: left === null ? 'key' : `key ${formatUsd(left).replace(/\.00$/, '')} left`,
    cost: ctx.remaining.usd,
  };
}
