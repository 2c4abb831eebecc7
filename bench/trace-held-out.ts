import { rng, SIM_EPOCH_MS } from './trace-sim.js';
import { barTrace, exponential, HOUR, lognormal, MIN, pick, turnsIn, uniform, type FamilyTurn, type TraceFamily } from './trace-families.js';

/**
 * THE HELD-OUT FAMILY. It is kept out of all tuning: only the report (bench/forecast-families.ts) imports it, the
 * forecaster's numbers were set without its figures, and they were read once, after the tuning
 * (tests/unit/architecture.test.ts checks that nothing else imports this file).
 *
 * **taper**: windows that mostly never fill. A session starts hot (a lognormal rate for 20–120 min), then the
 * rate changes abruptly — the work stops, slows to a trickle, or speeds up (×0, ×0.15, ×0.4, ×1, ×1.6) — until
 * the session ends 1–4 h after it began; the next session starts after 40 min to 3 h away. Front-loaded windows
 * are where a pace read off the first hour calls a wall that never comes.
 */

const AFTER: ReadonlyArray<readonly [number, number]> = [
  [0, 0.25],
  [0.15, 0.2],
  [0.4, 0.2],
  [1, 0.2],
  [1.6, 0.15],
];

export const HELD_OUT_FAMILY: TraceFamily = {
  name: 'taper',
  about: 'HELD OUT: a hot start for 20–120 min, then the rate stops, trickles or speeds up (×0–×1.6) until the session ends',
  trace(seed, days) {
    const r = rng(seed);
    const base = lognormal(r, 45, 0.4);
    const gapMs = uniform(r, 20_000, 50_000);
    const turns: FamilyTurn[] = [];
    const changes: number[] = [];
    for (let d = 0; d < days; d++) {
      if (d % 7 >= 5 && r() >= 0.3) continue;
      const day0 = SIM_EPOCH_MS + d * 24 * HOUR;
      let t = day0 + uniform(r, 8, 11) * HOUR;
      const dayEnd = day0 + uniform(r, 18, 22) * HOUR;
      while (t < dayEnd) {
        const end = Math.min(dayEnd, t + uniform(r, 1, 4) * HOUR);
        const hot = base * lognormal(r, 1, 0.3);
        const turn = Math.min(end, t + uniform(r, 20, 120) * MIN);
        turnsIn(r, t, turn, hot, gapMs, turns);
        const factor = pick(r, AFTER);
        if (factor !== 1) changes.push(turn);
        if (factor > 0) turnsIn(r, turn + exponential(r, 3 * MIN), end, hot * factor, gapMs, turns);
        t = end + uniform(r, 40, 180) * MIN;
      }
    }
    return barTrace(`taper-${seed}`, seed, 'taper', turns, changes, r, days);
  },
};
