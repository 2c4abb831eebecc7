import { rng, SIM_EPOCH_MS, type SimSample, type SimWindow } from './trace-sim.js';

/**
 * More trace families for the forecast benchmark, each differing from bench/trace-sim.ts (drifting rates: a
 * regime holds for a burst or more, and the bar's points come from dollars) in how the rate changes. They share
 * one bar engine ({@link barTrace}): a 5-hour bar moved by turns, read as the statusline would read it.
 *
 * Families here are the ones the forecaster may be tuned on:
 * - **switch**: steady work with short breaks; the rate while active is piecewise constant and jumps abruptly
 *   (×0.25 … ×3, a switch of model or of kind of work) at random moments, about once every 70 min, mid-window
 *   as often as not.
 * - **bursts**: short intense bursts (4–25 min) separated by idle gaps of 3 min to 2 h; each burst's rate is
 *   its own (lognormal around the seat's).
 *
 * The held-out family lives in bench/trace-held-out.ts and only the report (bench/forecast-families.ts) imports
 * it: no tuning run sees it (tests/unit/architecture.test.ts checks the imports).
 *
 * Deterministic for a given seed. Points are points of the 5-hour bar per hour of activity.
 */

export type Rand = () => number;
export const MIN = 60_000;
export const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const FIVE_HOURS = 5 * HOUR;

export const uniform = (r: Rand, a: number, b: number): number => a + (b - a) * r();
const normal = (r: Rand): number => Math.sqrt(-2 * Math.log(1 - r())) * Math.cos(2 * Math.PI * r());
export const lognormal = (r: Rand, median: number, sigma: number): number => median * Math.exp(sigma * normal(r));
export const exponential = (r: Rand, mean: number): number => -mean * Math.log(1 - r());
export function pick<T>(r: Rand, items: ReadonlyArray<readonly [T, number]>): T {
  let x = r() * items.reduce((s, [, w]) => s + w, 0);
  for (const [v, w] of items) {
    x -= w;
    if (x <= 0) return v;
  }
  return items[items.length - 1]![0];
}

/** One turn: when, and how many points of the 5-hour bar it moves. */
export interface FamilyTurn {
  t: number;
  pts: number;
  /** A prompt was submitted just before it (the statusline renders then too). */
  prompt: boolean;
}

export interface FamilyTrace {
  id: string;
  seed: number;
  family: string;
  samples: SimSample[];
  windows: SimWindow[];
  /** When the rate changed abruptly, epoch ms. */
  changes: number[];
}

export interface TraceFamily {
  name: string;
  /** One line on how its rates change, for the bench's output. */
  about: string;
  trace(seed: number, days: number): FamilyTrace;
}

/** Points a turn moves: the rate × the turn's share of an hour × noise (lognormal σ 0.6, mean 1). */
export function turnPoints(r: Rand, ratePerHour: number, gapMs: number): number {
  return ratePerHour * (gapMs / HOUR) * lognormal(r, Math.exp(-0.18), 0.6);
}

/** Turns at a rate over [start, end): exponential gaps (≥ 5 s) of mean `gapMs`; the first is a prompt. */
export function turnsIn(r: Rand, start: number, end: number, ratePerHour: number, gapMs: number, out: FamilyTurn[]): void {
  let first = true;
  for (let t = start; t < end; t += Math.max(5_000, exponential(r, gapMs))) {
    out.push({ t, pts: turnPoints(r, ratePerHour, gapMs), prompt: first || r() < 0.3 });
    first = false;
  }
}

/**
 * The bar engine: windows open at the first turn while none is open and reset 5 h later; at 100% the seat is
 * blocked (turns lost, prompts still render at 100%). The statusline renders at a prompt (the last reading) and
 * after each turn (the bar after it, or one turn behind 30% of the time), rounded to `quantum`; 2% of renders come
 * from a stale session showing the bar of 5–60 min ago. A window whose reset has passed is left out of a render.
 */
export function barTrace(id: string, seed: number, family: string, turns: FamilyTurn[], changes: number[], r: Rand, days: number): FamilyTrace {
  const endMs = SIM_EPOCH_MS + days * DAY;
  const quantum = r() < 0.2 ? 1 : 0.1;
  const windows: SimWindow[] = [];
  const samples: SimSample[] = [];
  const history: Array<{ t: number; used: number; resetsAtMs: number }> = [];
  let bar: { used: number; resetsAtMs: number; truth: SimWindow } | null = null;
  const quant = (v: number): number => Number(Math.min(100, Math.round(v / quantum) * quantum).toFixed(1));
  const emit = (at: number, used: number, resetsAtMs: number, source: SimSample['source']): void => {
    if (resetsAtMs <= at) return;
    samples.push({ t: Math.round(at), window: 'five_hour', used_percentage: quant(used), resets_at: Math.floor(resetsAtMs / 1000), usd: 0, source });
  };
  const render = (at: number, used: number, resetsAtMs: number): void => {
    emit(at, used, resetsAtMs, 'statusline');
    if (r() < 0.02 && history.length > 0) {
      const back = at - uniform(r, 5, 60) * MIN;
      let i = history.length - 1;
      while (i > 0 && history[i]!.t > back) i--;
      emit(at + 500, history[i]!.used, history[i]!.resetsAtMs, 'stale-session');
    }
  };
  for (const turn of [...turns].sort((a, b) => a.t - b.t)) {
    if (turn.t >= endMs) break;
    if (bar && turn.t >= bar.resetsAtMs) bar = null;
    if (bar && turn.prompt) render(turn.t, bar.used, bar.resetsAtMs);
    if (bar && bar.used >= 100) continue;
    if (!bar) {
      const truth: SimWindow = { window: 'five_hour', startMs: turn.t, resetsAtMs: turn.t + FIVE_HOURS, crossMs: null, incomplete: turn.t + FIVE_HOURS > endMs };
      windows.push(truth);
      bar = { used: 0, resetsAtMs: truth.resetsAtMs, truth };
    }
    const before = bar.used;
    bar.used = Math.min(100, bar.used + turn.pts);
    if (bar.used >= 100 && bar.truth.crossMs === null) bar.truth.crossMs = turn.t;
    history.push({ t: turn.t, used: bar.used, resetsAtMs: bar.resetsAtMs });
    render(turn.t + uniform(r, 2_000, 20_000), r() < 0.3 ? before : bar.used, bar.resetsAtMs);
  }
  samples.sort((a, b) => a.t - b.t);
  return { id: `${family}-${seed}`, seed, family, samples, windows, changes: changes.filter((c) => c < endMs).sort((a, b) => a - b) };
}

/** Workdays (Mon–Fri, 95%) from 08:00–10:00 to 17:00–19:30, with a lunch of 30–80 min around 12:00–13:30. */
export function workSpans(r: Rand, days: number): Array<{ start: number; end: number }> {
  const spans: Array<{ start: number; end: number }> = [];
  for (let d = 0; d < days; d++) {
    if (d % 7 >= 5 || r() >= 0.95) continue;
    const day0 = SIM_EPOCH_MS + d * DAY;
    const start = day0 + uniform(r, 8, 10) * HOUR;
    const end = day0 + uniform(r, 17, 19.5) * HOUR;
    const lunch = day0 + uniform(r, 12, 13.5) * HOUR;
    spans.push({ start, end: lunch }, { start: lunch + uniform(r, 30, 80) * MIN, end });
  }
  return spans;
}

const SWITCH_FACTORS: ReadonlyArray<readonly [number, number]> = [
  [0.25, 0.2],
  [0.5, 0.25],
  [1, 0.25],
  [1.8, 0.2],
  [3, 0.1],
];

/** Abrupt switches of rate (see the module note). */
export const switchFamily: TraceFamily = {
  name: 'switch',
  about: 'steady work, the rate jumps ×0.25–×3 at random moments (a switch of model or kind of work), ~every 70 min',
  trace(seed, days) {
    const r = rng(seed);
    const base = lognormal(r, 24, 0.35);
    const gapMs = uniform(r, 25_000, 60_000);
    const turns: FamilyTurn[] = [];
    const changes: number[] = [];
    let factor = pick(r, SWITCH_FACTORS);
    let nextSwitch = SIM_EPOCH_MS + exponential(r, 70 * MIN);
    for (const span of workSpans(r, days)) {
      let t = span.start;
      while (t < span.end) {
        // Work for 10–40 min, then a short break of 1–6 min; a switch may land anywhere inside.
        const end = Math.min(span.end, t + uniform(r, 10, 40) * MIN);
        while (nextSwitch < end) {
          if (nextSwitch > t) {
            turnsIn(r, t, nextSwitch, base * factor, gapMs, turns);
            t = nextSwitch;
          }
          const before = factor;
          factor = pick(r, SWITCH_FACTORS);
          if (factor !== before && nextSwitch >= span.start) changes.push(nextSwitch);
          nextSwitch += exponential(r, 70 * MIN);
        }
        turnsIn(r, t, end, base * factor, gapMs, turns);
        t = end + uniform(r, 1, 6) * MIN;
      }
    }
    return barTrace(`switch-${seed}`, seed, 'switch', turns, changes, r, days);
  },
};

/** Bursts with idle gaps (see the module note). */
export const burstsFamily: TraceFamily = {
  name: 'bursts',
  about: 'intense bursts of 4–25 min, each at its own rate, between idle gaps of 3 min to 2 h',
  trace(seed, days) {
    const r = rng(seed);
    const base = lognormal(r, 55, 0.35);
    const turns: FamilyTurn[] = [];
    const changes: number[] = [];
    for (let d = 0; d < days; d++) {
      if (d % 7 >= 5 && r() >= 0.3) continue;
      const day0 = SIM_EPOCH_MS + d * DAY;
      let t = day0 + uniform(r, 8, 11) * HOUR;
      const end = day0 + uniform(r, 17, 21) * HOUR;
      while (t < end) {
        const len = uniform(r, 4, 25) * MIN;
        changes.push(t);
        turnsIn(r, t, Math.min(end, t + len), base * lognormal(r, 1, 0.5), uniform(r, 12_000, 30_000), turns);
        const x = r();
        t += len + (x < 0.5 ? uniform(r, 3, 10) : x < 0.85 ? uniform(r, 15, 45) : uniform(r, 50, 110)) * MIN;
      }
    }
    return barTrace(`bursts-${seed}`, seed, 'bursts', turns, changes, r, days);
  },
};

/** The families the forecaster may be tuned on (the original simulator is bench/trace-sim.ts). */
export const TUNING_FAMILIES: readonly TraceFamily[] = [switchFamily, burstsFamily];

/** `traces` seats of a family for one seed (each seat its own seed drawn from it). */
export function familyTraces(family: TraceFamily, seed: number, traces: number, days: number): FamilyTrace[] {
  let h = seed * 7919;
  for (const c of family.name) h = (Math.imul(h, 31) + c.charCodeAt(0)) >>> 0;
  const r = rng(h);
  return Array.from({ length: traces }, () => family.trace(Math.floor(r() * 2 ** 31), days));
}
