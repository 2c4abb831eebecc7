import type { ExitTakers } from '../walls/ports.js';
import { continueNowExit } from './continue-now.js';
import type { ExitDeps } from './deps.js';
import { deferExit } from './defer.js';
import { handoffExit } from './handoff.js';
import { holdExit } from './hold.js';
import { overnightExit } from './overnight.js';
import { switchModelExit } from './switch-model.js';

export function makeExits(d: ExitDeps): ExitTakers {
  return {
    continue: continueNowExit(d),
    hold: holdExit(d),
    overnight: overnightExit(d),
    switch: switchModelExit(d),
    handoff: handoffExit(d),
    defer: deferExit(d),
  };
}
