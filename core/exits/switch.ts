import { formatUsd } from '../format.js';
import { keyUnavailable } from './continue.js';
import { exitNumber, type ExitContext, type Offer } from './types.js';
import { formatBand, scaleBand, shortModel } from './words.js';

/** 4 — switch to the policy's cheaper model, on the platform key, for the rest of the session. */
export function price(ctx: ExitContext): Offer {
  const base = { exit: 'switch' as const, number: exitNumber('switch'), title: 'Switch model' };
  if (!ctx.cheaper) {
    const model = ctx.session.model ? shortModel(ctx.session.model) : 'this model';
    return { ...base, ok: false, detail: `no cheaper step for ${model} in the policy`, short: 'switch', cost: null };
  }
  const name = shortModel(ctx.cheaper.model);
  const why = keyUnavailable(ctx);
  if (why) return { ...base, ok: false, detail: `${name} · ${why}`, short: name, cost: null };
  const ratio = ctx.cheaper.priceRatio;
  const parts = [name, 'platform key'];
  let cost = null;
  if (ratio !== null && ctx.remaining.usd) {
    cost = scaleBand(ctx.remaining.usd, ratio);
    parts.push(formatBand(cost));
  } else if (ratio !== null && ctx.remaining.burnPerHourMicros) {
    parts.push(`≈ ${formatUsd(Math.round(ctx.remaining.burnPerHourMicros * ratio))}/h at this pace`);
  }
  parts.push('same time', 'rest of session');
  return { ...base, ok: true, detail: parts.join(' · '), short: name, cost };
}
