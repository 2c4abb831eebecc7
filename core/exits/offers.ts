import { price as continueNow } from './continue.js';
import { price as hold } from './hold.js';
import { price as overnight } from './overnight.js';
import { price as switchModel } from './switch.js';
import { price as handoff } from './handoff.js';
import { price as defer } from './defer.js';
import type { ExitContext, ExitKind, Offer } from './types.js';

const PRICERS: Record<ExitKind, (ctx: ExitContext) => Offer> = { continue: continueNow, hold, overnight, switch: switchModel, handoff, defer };

/** All six offers, in /sled order. */
export function priceExits(ctx: ExitContext): Offer[] {
  return [PRICERS.continue(ctx), PRICERS.hold(ctx), PRICERS.overnight(ctx), PRICERS.switch(ctx), PRICERS.handoff(ctx), PRICERS.defer(ctx)];
}
