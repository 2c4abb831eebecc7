/**
 * A seeded simulator of plan-bar usage traces, for the forecast-accuracy benchmark.
 *
 * One trace is one seat over `days` days (default 8, from a Monday 00:00 UTC), with its 5-hour and weekly bars.
 * What it models, and the numbers it draws (per trace unless said otherwise):
 *
 * - **Plan.** A 5-hour budget B5 ~ lognormal(median $35, σ 0.45) of API-equivalent dollars, and a weekly budget
 *   B7 = B5 × U(6, 12). A turn moves the 5-hour bar by cost × weight(model) × peak(t) × 100 ÷ B5 points (the
 *   weekly bar the same with B7). weight: Opus 1.0, Sonnet 1.1, Haiku 1.0 (plans do not weigh exactly by price).
 * - **Peak hours.** Half the traces have a peak factor of U(1.15, 1.5) on weekdays 13:00–19:00 UTC (the bar
 *   moves faster for the same dollars); the rest have none.
 * - **Windows.** A window starts at the first turn while none is open and resets W later (5 h, 7 d): the bar
 *   drops to 0 and `resets_at` jumps (a rollover). At 100% the seat is blocked until the reset: turns are lost (the prompts
 *   still render the statusline, at 100%).
 * - **Days.** Workdays (Mon–Fri, 95%) run from 08:00–10:00 to 17:00–19:30 with a lunch of 30–80 min around
 *   12:00–13:30 and, one day in four, an evening session; weekends have one light session 30% of the time.
 *   Work comes in bursts of lognormal(median 25 min, σ 0.6) activity, 5–120 min, between breaks: 60% short
 *   (2–9 min), 40% long (10–30 min).
 * - **Regimes.** A burst runs one model (Opus 1.0×, Sonnet 0.6×, Haiku 0.2× cost per turn) and one kind of work
 *   (agentic: 1.4× cost, a turn every ~25 s; pairing: 1.0×, ~45 s; chat: 0.5×, ~90 s; exponential gaps ≥ 5 s).
 *   A burst switches model or kind with probability 0.2 at its start, and 0.15 somewhere inside it; every
 *   switch that changes the regime is recorded as a change (the benchmark scores the hour after one apart).
 * - **Turns.** cost = base × model × kind × lognormal(σ 0.8), base ~ lognormal(median $0.12, σ 0.5) per trace.
 * - **Other surfaces.** 30% of seats also chat on claude.ai in 25% of their breaks (a turn every 60–120 s costing
 *   0.4× a Sonnet turn): the bars move, but no statusline renders and no transcript dollars come with it.
 * - **Sampling, as musher would see it.** The statusline renders when a prompt is submitted (the first turn of
 *   a burst, 30% of later turns) showing the last reading, and after each turn showing the bar after it (70%)
 *   or one turn behind (30%, the harness' lag), rounded to 0.1 points (integers for 20% of seats, like Codex).
 *   A window whose `resets_at` has passed is left out of a render, as Claude Code does. 3% of renders come from
 *   a stale session showing the bars of 5–120 min ago (a lower value, or an older window's). 50% of seats run
 *   the daemon's usage poller, every 180–300 s from 07:30 to 21:00 on days with work, in whole points.
 * - **Dollars.** Each sample carries the cumulative API-equivalent dollars of the CLI turns so far (`usd`).
 * - **Drift (off unless asked for, for the calibration benchmark).** `drift: {atMs, budgetFactor}` multiplies
 *   both budgets by `budgetFactor` from `atMs` on (a promotion that doubles the limits: 2; a stricter peak
 *   policy: < 1), so the points a dollar moves change mid-trace. Without it the traces are exactly as before (no
 *   extra random draws).
 *
 * Ground truth per window instance: its start, reset, and the time of the turn that took it to 100% (or null).
 * Windows still open at the end of the trace are marked incomplete. Deterministic for a given seed.
 */

export interface SimSample {
  t: number;
  window: 'five_hour' | 'seven_day';
  used_percentage: number;
  /** Epoch seconds. */
  resets_at: number;
  usd: number;
  source: 'statusline' | 'stale-session' | 'poller';
}

export interface SimWindow {
  window: 'five_hour' | 'seven_day';
  startMs: number;
  resetsAtMs: number;
  /** The turn that took the bar to 100%, or null if it never got there. */
  crossMs: number | null;
  /** The trace ended before the window reset. */
  incomplete: boolean;
}

export interface SimProfile {
  budget5hUsd: number;
  budgetWeekUsd: number;
  baseTurnUsd: number;
  peakFactor: number;
  otherSurface: boolean;
  poller: boolean;
  quantum: number;
}

export interface SimTrace {
  id: string;
  seed: number;
  profile: SimProfile;
  /** Both bars' readings, in time order. */
  samples: SimSample[];
  windows: SimWindow[];
  /** When the model or kind of work changed, epoch ms. */
  changes: number[];
}

export interface SimOptions {
  seed: number;
  traces: number;
  days?: number;
  drift?: SimDrift;
}

/** The plan's budgets change by `budgetFactor` from `atMs` on (see the module note). */
export interface SimDrift {
  atMs: number;
  budgetFactor: number;
}

const MIN = 60_000;
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** Monday 2 March 2026, 00:00 UTC. */
export const SIM_EPOCH_MS = Date.UTC(2026, 2, 2);
const WINDOW_MS = { five_hour: 5 * HOUR, seven_day: 7 * DAY } as const;

export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Rand = () => number;
const uniform = (r: Rand, a: number, b: number): number => a + (b - a) * r();
const normal = (r: Rand): number => Math.sqrt(-2 * Math.log(1 - r())) * Math.cos(2 * Math.PI * r());
const lognormal = (r: Rand, median: number, sigma: number): number => median * Math.exp(sigma * normal(r));
const exponential = (r: Rand, mean: number): number => -mean * Math.log(1 - r());
function pick<T>(r: Rand, items: ReadonlyArray<readonly [T, number]>): T {
  let x = r() * items.reduce((s, [, w]) => s + w, 0);
  for (const [v, w] of items) {
    x -= w;
    if (x <= 0) return v;
  }
  return items[items.length - 1]![0];
}

type Model = 'opus' | 'sonnet' | 'haiku';
type Kind = 'agentic' | 'pairing' | 'chat';
const MODEL_COST: Record<Model, number> = { opus: 1, sonnet: 0.6, haiku: 0.2 };
const MODEL_WEIGHT: Record<Model, number> = { opus: 1, sonnet: 1.1, haiku: 1 };
const KIND_COST: Record<Kind, number> = { agentic: 1.4, pairing: 1, chat: 0.5 };
const KIND_GAP_MS: Record<Kind, number> = { agentic: 25_000, pairing: 45_000, chat: 90_000 };

interface Turn {
  t: number;
  usd: number;
  model: Model;
  cli: boolean;
  /** Render at prompt submission before the turn. */
  prompt: boolean;
}

interface Burst {
  start: number;
  end: number;
}

/** The days' bursts of CLI work, and the breaks between them. */
function schedule(r: Rand, days: number): { bursts: Burst[]; breaks: Burst[]; machineOn: Burst[] } {
  const bursts: Burst[] = [];
  const breaks: Burst[] = [];
  const machineOn: Burst[] = [];
  for (let d = 0; d < days; d++) {
    const day0 = SIM_EPOCH_MS + d * DAY;
    const weekend = d % 7 >= 5;
    const spans: Burst[] = [];
    if (weekend) {
      if (r() < 0.3) {
        const s = day0 + uniform(r, 10, 16) * HOUR;
        spans.push({ start: s, end: s + uniform(r, 30, 120) * MIN });
      }
    } else if (r() < 0.95) {
      const start = day0 + uniform(r, 8, 10) * HOUR;
      const end = day0 + uniform(r, 17, 19.5) * HOUR;
      const lunch = day0 + uniform(r, 12, 13.5) * HOUR;
      spans.push({ start, end: lunch }, { start: lunch + uniform(r, 30, 80) * MIN, end });
      if (r() < 0.25) {
        const s = day0 + uniform(r, 20.5, 21.5) * HOUR;
        spans.push({ start: s, end: s + uniform(r, 30, 120) * MIN });
      }
    }
    if (spans.length > 0) machineOn.push({ start: day0 + 7.5 * HOUR, end: Math.max(day0 + 21 * HOUR, spans[spans.length - 1]!.end) });
    for (const span of spans) {
      let t = span.start;
      while (t < span.end) {
        const len = Math.min(120, Math.max(5, lognormal(r, 25, 0.6))) * MIN;
        const end = Math.min(span.end, t + len);
        if (end - t >= 2 * MIN) bursts.push({ start: t, end });
        const pause = (r() < 0.6 ? uniform(r, 2, 9) : uniform(r, 10, 30)) * MIN;
        if (end + pause < span.end) breaks.push({ start: end, end: end + pause });
        t = end + pause;
      }
    }
  }
  return { bursts, breaks, machineOn };
}

interface BarState {
  startMs: number;
  resetsAtMs: number;
  used: number;
  truth: SimWindow;
}

interface Snapshot {
  t: number;
  five: { used: number; resetsAtMs: number } | null;
  week: { used: number; resetsAtMs: number } | null;
  usd: number;
}

export function simulateTrace(seed: number, days = 8, drift?: SimDrift): SimTrace {
  const r = rng(seed);
  const budget5hUsd = lognormal(r, 35, 0.45);
  const profile: SimProfile = {
    budget5hUsd,
    budgetWeekUsd: budget5hUsd * uniform(r, 6, 12),
    baseTurnUsd: lognormal(r, 0.12, 0.5),
    peakFactor: r() < 0.5 ? 1 : uniform(r, 1.15, 1.5),
    otherSurface: r() < 0.3,
    poller: r() < 0.5,
    quantum: r() < 0.2 ? 1 : 0.1,
  };
  const models: ReadonlyArray<readonly [Model, number]> = pick(r, [
    [[['opus', 0.7], ['sonnet', 0.25], ['haiku', 0.05]], 0.5],
    [[['opus', 0.25], ['sonnet', 0.65], ['haiku', 0.1]], 0.4],
    [[['opus', 0.1], ['sonnet', 0.4], ['haiku', 0.5]], 0.1],
  ] as const);
  const kinds: ReadonlyArray<readonly [Kind, number]> = [['agentic', 0.35], ['pairing', 0.45], ['chat', 0.2]];
  const { bursts, breaks, machineOn } = schedule(r, days);

  // 1. Turns: CLI bursts with their regimes, and other-surface chats in breaks.
  const turns: Turn[] = [];
  const changes: number[] = [];
  let model = pick(r, models);
  let kind = pick(r, kinds);
  const switchRegime = (at: number): void => {
    const before = `${model}/${kind}`;
    if (r() < 0.5) model = pick(r, models);
    else kind = pick(r, kinds);
    if (`${model}/${kind}` !== before) changes.push(at);
  };
  for (const b of bursts) {
    if (r() < 0.2) switchRegime(b.start);
    const midSwitch = r() < 0.15 ? uniform(r, b.start, b.end) : Infinity;
    let t = b.start;
    let first = true;
    let switched = false;
    while (t < b.end) {
      if (!switched && t >= midSwitch) {
        switchRegime(t);
        switched = true;
        first = true;
      }
      const usd = profile.baseTurnUsd * MODEL_COST[model] * KIND_COST[kind] * lognormal(r, 1, 0.8);
      turns.push({ t, usd, model, cli: true, prompt: first || r() < 0.3 });
      first = false;
      t += Math.max(5_000, exponential(r, KIND_GAP_MS[kind]));
    }
  }
  if (profile.otherSurface) {
    for (const br of breaks) {
      if (r() >= 0.25) continue;
      for (let t = br.start + uniform(r, 0.5, 2) * MIN; t < br.end; t += uniform(r, 60, 120) * 1000) {
        turns.push({ t, usd: profile.baseTurnUsd * 0.4 * MODEL_COST.sonnet * lognormal(r, 1, 0.8), model: 'sonnet', cli: false, prompt: false });
      }
    }
  }
  turns.sort((a, b) => a.t - b.t);

  // 2. Poller ticks.
  const polls: number[] = [];
  if (profile.poller) {
    for (const on of machineOn) for (let t = on.start + uniform(r, 0, 180_000); t < on.end; t += uniform(r, 180_000, 300_000)) polls.push(t);
  }

  // 3. Walk time: windows, walls, readings.
  const endMs = SIM_EPOCH_MS + days * DAY;
  const windows: SimWindow[] = [];
  const samples: SimSample[] = [];
  const history: Snapshot[] = [];
  let five: BarState | null = null;
  let week: BarState | null = null;
  let usdMicros = 0;
  const open = (w: 'five_hour' | 'seven_day', t: number): BarState => {
    const truth: SimWindow = { window: w, startMs: t, resetsAtMs: t + WINDOW_MS[w], crossMs: null, incomplete: t + WINDOW_MS[w] > endMs };
    windows.push(truth);
    return { startMs: t, resetsAtMs: truth.resetsAtMs, used: 0, truth };
  };
  const expire = (t: number): void => {
    if (five && t >= five.resetsAtMs) five = null;
    if (week && t >= week.resetsAtMs) week = null;
  };
  const quant = (v: number, q: number): number => Math.min(100, Math.round(v / q) * q);
  const snap = (t: number): Snapshot => ({
    t,
    five: five ? { used: five.used, resetsAtMs: five.resetsAtMs } : null,
    week: week ? { used: week.used, resetsAtMs: week.resetsAtMs } : null,
    usd: usdMicros / 1e6,
  });
  const emit = (s: Snapshot, at: number, source: SimSample['source'], q: number): void => {
    for (const [w, bar] of [['five_hour', s.five], ['seven_day', s.week]] as const) {
      if (!bar || bar.resetsAtMs <= at) continue;
      samples.push({ t: Math.round(at), window: w, used_percentage: Number(quant(bar.used, q).toFixed(1)), resets_at: Math.floor(bar.resetsAtMs / 1000), usd: Number(s.usd.toFixed(6)), source });
    }
  };
  const render = (at: number, lagged: Snapshot | null): void => {
    emit(lagged ?? snap(at), at, 'statusline', profile.quantum);
    if (r() < 0.03 && history.length > 0) {
      const back = at - uniform(r, 5, 120) * MIN;
      let i = history.length - 1;
      while (i > 0 && history[i]!.t > back) i--;
      emit(history[i]!, at + 500, 'stale-session', profile.quantum);
    }
  };
  const peak = (t: number): number => {
    const d = Math.floor((t - SIM_EPOCH_MS) / DAY);
    const h = ((t - SIM_EPOCH_MS) % DAY) / HOUR;
    return d % 7 < 5 && h >= 13 && h < 19 ? profile.peakFactor : 1;
  };
  let pi = 0;
  const pollUntil = (t: number): void => {
    for (; pi < polls.length && polls[pi]! < t; pi++) {
      expire(polls[pi]!);
      emit(snap(polls[pi]!), polls[pi]!, 'poller', 1);
    }
  };
  for (const turn of turns) {
    if (turn.t >= endMs) break;
    pollUntil(turn.t);
    expire(turn.t);
    const before = snap(turn.t);
    if (turn.cli && turn.prompt) render(turn.t, null);
    const blocked = (five !== null && five.used >= 100) || (week !== null && week.used >= 100);
    if (blocked) continue;
    five ??= open('five_hour', turn.t);
    week ??= open('seven_day', turn.t);
    const units = (turn.usd * MODEL_WEIGHT[turn.model] * peak(turn.t) * 100) / (drift && turn.t >= drift.atMs ? drift.budgetFactor : 1);
    for (const [bar, budget] of [[five, profile.budget5hUsd], [week, profile.budgetWeekUsd]] as const) {
      bar.used = Math.min(100, bar.used + units / budget);
      if (bar.used >= 100 && bar.truth.crossMs === null) bar.truth.crossMs = turn.t;
    }
    if (turn.cli) usdMicros += Math.round(turn.usd * 1e6);
    const after = snap(turn.t);
    history.push(after);
    if (turn.cli) render(turn.t + uniform(r, 2_000, 20_000), r() < 0.3 ? before : null);
  }
  pollUntil(endMs);
  samples.sort((a, b) => a.t - b.t);
  return { id: `sim-${seed}`, seed, profile, samples, windows, changes };
}

export function simulateTraces(opts: SimOptions): SimTrace[] {
  const out: SimTrace[] = [];
  const r = rng(opts.seed);
  for (let i = 0; i < opts.traces; i++) out.push(simulateTrace(Math.floor(r() * 2 ** 31), opts.days, opts.drift));
  return out;
}
