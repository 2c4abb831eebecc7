import { activeShare, activityProfile, expectedActiveMs, presence, profileSessionShare, sessionShare, todayShares, wallTimeForActive, type ActivityModel, type ActivityProfile } from './activity.js';
import { theilSen } from './slope.js';
import { activeAt, splitTrails, trailDefaults, windowLengthMs, type BarSample, type Trail, type TrailOptions } from './trail.js';

/**
 * When does a bar hit 100%? Pure: the clock is passed in.
 *
 * The rate is a Theil–Sen slope of the bar against *active* time (see trail.ts) over the last `lookbackActiveMs`
 * of activity. An active-time rate says how fast the bar moves while someone works; the wall clock also holds the
 * breaks to come. So the ETA maps back to wall time through the trail's duty cycle d = active ÷ wall time so far
 * (shrunk toward a prior early in the window, when there is little to measure it from):
 *
 *     ETA = now + (100 − used) ÷ (activeRate × d)
 *
 * The band comes from the spread of the pairwise slopes (their 20th–80th percentiles by default) and from the
 * duty cycle: the early end assumes the fast rate and no more breaks than `dutyHi`, the late end the slow rate
 * with the breaks measured so far.
 */

export interface ForecastOptions {
  trail: Partial<TrailOptions>;
  /** The rate is fitted over this much active time before the last reading (extended back to reach the minimums). */
  lookbackActiveMs: number;
  /** Fewer readings than this in the trail: no forecast. */
  minSamples: number;
  /** Readings spanning less active time than this: no forecast. */
  minSpanMs: number;
  /** A slope at or below this (points per hour of activity) is flat. */
  minRatePctPerHour: number;
  /** The duty cycle is measured over this much wall time before now (null: the whole trail). */
  dutyLookbackMs: number | null;
  /** Early in a trail the duty cycle is shrunk toward `duty` as if `weightMs` of wall time had been seen at it. */
  dutyPrior: { duty: number; weightMs: number };
  /** The quantiles of the pairwise slopes that bound the band. */
  bandQuantiles: readonly [number, number];
  /** The band's early end assumes the duty cycle rises to this (≥ the measured one). */
  dutyHi: number;
  /** The band's late end is capped at now + this (a rate near zero would put it at infinity). */
  maxHorizonMs: number;
  /** EXPERIMENT */
  rate: 'recent' | 'adaptive' | 'blend' | 'geo' | 'adaptive-geo';
  alpha: number;
  /** A precomputed activity profile (null: none); when absent, it is learned from the history passed in. */
  activity?: ActivityProfile | null;
  useProfile: boolean;
  tzOffsetMinutes: number;
  /** The current pace (active share of the last `recentDutyMs`) gives way to the profile over this (ms). */
  persistMs: number;
  recentDutyMs: number;
  profilePriorMs: number;
  levelPriorMs: number;
  conditional: boolean;
  presence: boolean;
  sessionPriorMs: number;
  ratePriorMs: number;
}

const MINUTE = 60_000;
const HOUR = 3_600_000;

/** Defaults by window length: weekly bars move ~20× slower, so they look further back. */
export function forecastDefaults(windowMs: number | null): ForecastOptions {
  const long = windowMs !== null && windowMs > 24 * HOUR;
  return {
    trail: {},
    lookbackActiveMs: long ? 4 * HOUR : 45 * MINUTE,
    minSamples: 3,
    minSpanMs: 8 * MINUTE,
    minRatePctPerHour: 0.01,
    dutyLookbackMs: null,
    dutyPrior: { duty: 0.6, weightMs: long ? 24 * HOUR : HOUR },
    bandQuantiles: [0.2, 0.8],
    dutyHi: 1,
    maxHorizonMs: Math.max(windowMs ?? 5 * HOUR, 5 * HOUR),
    rate: 'recent',
    alpha: 0.5,
    useProfile: true,
    tzOffsetMinutes: 0,
    persistMs: 30 * MINUTE,
    recentDutyMs: HOUR,
    profilePriorMs: 2 * HOUR,
    levelPriorMs: 30 * MINUTE,
    conditional: true,
    presence: false,
    sessionPriorMs: 0,
    ratePriorMs: 0,
  };
}

export type NoForecastReason = 'too-few-samples' | 'span-too-short' | 'flat-or-falling' | 'at-wall' | 'window-over';

export interface EtaForecast {
  kind: 'eta';
  provider: string;
  window: string;
  /** When the bar is forecast to reach 100%, epoch ms (may be after the reset: see beforeReset). */
  etaMs: number;
  /** [early, late], epoch ms. */
  band: [number, number];
  /** The wall-clock rate the ETA uses (active rate × duty cycle), points per hour. */
  ratePctPerHour: number;
  /** The rate while active, points per hour of activity. */
  activeRatePctPerHour: number;
  /** The duty cycle used (active ÷ wall time, with the prior). */
  duty: number;
  /** The wall comes before the window resets (always true when the reset is unknown). */
  beforeReset: boolean;
  usedPct: number;
  resetsAtMs: number | null;
  /** When the latest reading was taken. */
  observedAtMs: number;
  /** Readings the slope was fitted on. */
  samples: number;
}

export interface NoForecast {
  kind: 'none';
  reason: NoForecastReason;
  /** A human sentence saying why. */
  message: string;
  provider: string;
  window: string;
  usedPct: number | null;
  resetsAtMs: number | null;
}

export type Forecast = EtaForecast | NoForecast;

/** "5-hour", "weekly", "weekly Opus", "Codex primary". */
export function barName(window: string): string {
  switch (window) {
    case 'five_hour':
      return '5-hour';
    case 'seven_day':
      return 'weekly';
    case 'seven_day_opus':
      return 'weekly Opus';
    case 'seven_day_sonnet':
      return 'weekly Sonnet';
    case 'codex_primary':
      return 'Codex primary';
    case 'codex_secondary':
      return 'Codex secondary';
    default:
      return window.replace(/_/g, ' ');
  }
}

/** "45m", "1h 20m", "2d 3h". */
export function formatSpan(ms: number): string {
  const m = Math.max(0, Math.round(ms / MINUTE));
  if (m < 60) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 48) return m % 60 ? `${h}h ${m % 60}m` : `${h}h`;
  const d = Math.floor(h / 24);
  return h % 24 ? `${d}d ${h % 24}h` : `${d}d`;
}

function none(reason: NoForecastReason, message: string, trail: Trail | null, bar: { provider: string; window: string }): NoForecast {
  const last = trail?.points[trail.points.length - 1];
  return { kind: 'none', reason, message, provider: bar.provider, window: bar.window, usedPct: last?.usedPct ?? null, resetsAtMs: trail?.resetsAtMs ?? null };
}

function options(windowMs: number | null, opts?: Partial<ForecastOptions>): ForecastOptions {
  const d = forecastDefaults(windowMs);
  return { ...d, ...opts, trail: { ...d.trail, ...opts?.trail } };
}

/**
 * Forecasts one bar from its readings (any order, stale ones included); only readings up to `nowMs` count. The
 * readings of earlier windows are the history the activity profile is learned from.
 */
export function forecastBar(samples: readonly BarSample[], nowMs: number, opts?: Partial<ForecastOptions>): Forecast {
  const upTo = samples.filter((s) => s.observedAtMs <= nowMs);
  const first = upTo[0] ?? samples[0];
  const bar = { provider: first?.provider ?? '', window: first?.window ?? '' };
  const windowMs = first ? (first.windowMs ?? windowLengthMs(first.window)) : null;
  const o = options(windowMs, opts);
  const trails = splitTrails(upTo, o.trail);
  const trail = trails[trails.length - 1] ?? null;
  if (!trail) return none('too-few-samples', `No readings of the ${barName(bar.window)} bar yet; a forecast needs ${o.minSamples}.`, null, bar);
  return forecastTrail(trail, nowMs, opts, trails);
}

/**
 * Forecasts from one trail (see splitTrails), as of `nowMs`. `history` holds the bar's trails up to and
 * including this one (for the activity profile and the recent pace); without it, only this trail is used.
 */
export function forecastTrail(trail: Trail, nowMs: number, opts?: Partial<ForecastOptions>, history?: readonly Trail[]): Forecast {
  const o = options(trail.windowMs, opts);
  const to: TrailOptions = { ...trailDefaults(trail.windowMs), ...o.trail };
  const bar = { provider: trail.provider, window: trail.window };
  const name = barName(trail.window);
  const pts = trail.points;
  const last = pts[pts.length - 1];
  if (!last) return none('too-few-samples', `No readings of the ${name} bar yet; a forecast needs ${o.minSamples}.`, trail, bar);
  const reset = trail.resetsAtMs;
  if (reset !== null && nowMs >= reset) {
    return none('window-over', `The ${name} window reset ${formatSpan(nowMs - reset)} ago; waiting for a fresh reading.`, trail, bar);
  }
  if (last.usedPct >= 100) {
    const when = reset === null ? '' : `; it resets in ${formatSpan(reset - nowMs)}`;
    return none('at-wall', `The ${name} bar is at 100%${when}.`, trail, bar);
  }
  if (pts.length < o.minSamples) {
    return none('too-few-samples', `Only ${pts.length} reading${pts.length === 1 ? '' : 's'} of the ${name} bar in this window; a forecast needs ${o.minSamples}.`, trail, bar);
  }
  const span = last.atMs - pts[0]!.atMs;
  if (span < o.minSpanMs) {
    return none('span-too-short', `The ${name} bar's readings span ${formatSpan(span)}; a forecast needs ${formatSpan(o.minSpanMs)}.`, trail, bar);
  }
  // The lookback: the last lookbackActiveMs of activity, extended back to hold minSamples and minSpanMs.
  let from = pts.length - 1;
  while (from > 0) {
    const p = pts[from - 1]!;
    const enough = pts.length - from >= o.minSamples && last.atMs - pts[from]!.atMs >= o.minSpanMs;
    if (enough && last.activeMs - p.activeMs > o.lookbackActiveMs) break;
    from--;
  }
  const window = pts.slice(from);
  const fit = theilSen(
    window.map((p) => ({ x: p.activeMs / HOUR, y: p.usedPct })),
    { spread: o.bandQuantiles },
  );
  const lookedBack = formatSpan(last.activeMs - window[0]!.activeMs);
  if (!fit || fit.slope <= o.minRatePctPerHour) {
    return none('flat-or-falling', `The ${name} bar has not risen over the last ${lookedBack} of activity; no wall in sight.`, trail, bar);
  }
  // The duty cycle of this trail: active ÷ wall time, shrunk toward the prior.
  const startMs = o.dutyLookbackMs === null ? pts[0]!.atMs : Math.max(pts[0]!.atMs, nowMs - o.dutyLookbackMs);
  const activeNow = activeAt(trail, nowMs, to);
  const activeStart = activeAtWall(trail, startMs);
  const wall = Math.max(0, nowMs - startMs);
  const active = Math.min(wall, Math.max(0, activeNow - activeStart));
  const duty = (active + o.dutyPrior.duty * o.dutyPrior.weightMs) / (wall + o.dutyPrior.weightMs);
  const remaining = 100 - last.usedPct;
  let longRate = (last.usedPct - pts[0]!.usedPct) / ((last.activeMs - pts[0]!.activeMs) / HOUR);
  if (o.ratePriorMs > 0 && history) {
    let du = 0;
    let da = 0;
    for (const t of history) {
      if (t === trail) continue;
      const p0 = t.points[0];
      const p1 = t.points[t.points.length - 1];
      if (!p0 || !p1 || p1.atMs < nowMs - 7 * 24 * HOUR) continue;
      du += p1.usedPct - p0.usedPct;
      da += p1.activeMs - p0.activeMs;
    }
    if (du > 0 && da > 0) longRate = (last.usedPct - pts[0]!.usedPct + (du / da) * o.ratePriorMs) / ((last.activeMs - pts[0]!.activeMs + o.ratePriorMs) / HOUR);
  }
  let activeRate = fit.slope;
  if (o.rate === 'adaptive' && longRate >= fit.lo && longRate <= fit.hi) activeRate = longRate;
  if (o.rate === 'adaptive-geo' && longRate > 0) activeRate = longRate >= fit.lo && longRate <= fit.hi ? Math.exp(o.alpha * Math.log(fit.slope) + (1 - o.alpha) * Math.log(longRate)) : fit.slope;
  if (o.rate === 'geo' && longRate > 0) activeRate = Math.exp(o.alpha * Math.log(fit.slope) + (1 - o.alpha) * Math.log(longRate));
  if (o.rate === 'blend') activeRate = longRate >= fit.lo && longRate <= fit.hi ? (fit.slope + longRate) / 2 : fit.slope;
  // Active time → wall time: the activity to come (activity.ts).
  const trails = history ?? [trail];
  const profile = o.activity !== undefined ? o.activity : o.useProfile ? activityProfile(trails, nowMs, { tzOffsetMinutes: o.tzOffsetMinutes }) : null;
  const model: ActivityModel = { profile, flat: duty, priorMs: o.profilePriorMs, level: 1, now: o.persistMs > 0 && o.recentDutyMs > 0 ? activeShare(trails, nowMs - o.recentDutyMs, nowMs) : duty, persistMs: o.persistMs };
  if (profile && o.conditional) model.today = todayShares(profile, nowMs, duty, o.profilePriorMs);
  if (profile && o.presence) {
    model.presence = presence(profile, nowMs);
    const ses = sessionShare(trails, startMs, nowMs, o.tzOffsetMinutes);
    const prior = profileSessionShare(profile);
    const pw = prior === null ? 0 : o.sessionPriorMs;
    model.flat = ses ? Math.min(1, (ses.activeMs + (prior ?? 0) * pw) / (ses.wallMs + pw)) : (prior ?? duty);
  }
  if (profile && o.levelPriorMs > 0) {
    // How much busier than the profile says this trail has been so far.
    const expectedSoFar = expectedActiveMs({ ...model, now: 0, persistMs: 0 }, startMs, nowMs);
    model.level = (active + o.levelPriorMs) / (expectedSoFar + o.levelPriorMs);
  }
  const horizon = nowMs + o.maxHorizonMs;
  const at = (ratePerHour: number, m: ActivityModel): number => (ratePerHour > 0 ? (wallTimeForActive(m, nowMs, (remaining / ratePerHour) * HOUR, o.maxHorizonMs) ?? horizon) : horizon);
  const etaMs = at(activeRate, model);
  const busy: ActivityModel = { profile: null, flat: Math.max(duty, o.dutyHi), priorMs: 0, level: 1, now: Math.max(model.now, o.dutyHi), persistMs: 0 };
  const early = at(Math.max(fit.hi, activeRate), busy);
  const late = at(Math.min(fit.lo, activeRate), model);
  const expected = etaMs > nowMs ? ((remaining / activeRate) * HOUR) / (etaMs - nowMs) : duty;
  return {
    kind: 'eta',
    provider: trail.provider,
    window: trail.window,
    etaMs: Math.round(etaMs),
    band: [Math.round(Math.min(early, etaMs)), Math.round(Math.max(late, etaMs))],
    ratePctPerHour: activeRate * expected,
    activeRatePctPerHour: activeRate,
    duty: expected,
    beforeReset: reset === null || etaMs < reset,
    usedPct: last.usedPct,
    resetsAtMs: reset,
    observedAtMs: last.atMs,
    samples: window.length,
  };
}

/** Active time at a wall time inside the trail (linear between readings). */
function activeAtWall(trail: Trail, atMs: number): number {
  const pts = trail.points;
  if (pts.length === 0 || atMs <= pts[0]!.atMs) return 0;
  for (let i = 1; i < pts.length; i++) {
    const b = pts[i]!;
    if (b.atMs >= atMs) {
      const a = pts[i - 1]!;
      const f = b.atMs === a.atMs ? 1 : (atMs - a.atMs) / (b.atMs - a.atMs);
      return a.activeMs + f * (b.activeMs - a.activeMs);
    }
  }
  return pts[pts.length - 1]!.activeMs;
}

export type BindingWall =
  /** A bar already at 100%: it binds until it resets. */
  | { kind: 'at-wall'; provider: string; window: string; resetsAtMs: number | null }
  /** The wall forecast to come first, before its own reset. */
  | { kind: 'wall'; provider: string; window: string; atMs: number; band: [number, number]; resetsAtMs: number | null; forecast: EtaForecast };

/**
 * The bar whose wall comes first. A bar at 100% binds now (the one that resets last, if several). Otherwise only
 * walls forecast before their own reset count; null when every bar resets before it fills.
 */
export function bindingWall(forecasts: readonly Forecast[]): BindingWall | null {
  const until = (r: number | null): number => r ?? Infinity;
  let atWall: (BindingWall & { kind: 'at-wall' }) | null = null;
  for (const f of forecasts) {
    if (f.kind !== 'none' || f.reason !== 'at-wall') continue;
    if (!atWall || until(f.resetsAtMs) > until(atWall.resetsAtMs)) atWall = { kind: 'at-wall', provider: f.provider, window: f.window, resetsAtMs: f.resetsAtMs };
  }
  if (atWall) return atWall;
  let best: EtaForecast | null = null;
  for (const f of forecasts) {
    if (f.kind === 'eta' && f.beforeReset && (best === null || f.etaMs < best.etaMs)) best = f;
  }
  if (!best) return null;
  return { kind: 'wall', provider: best.provider, window: best.window, atMs: best.etaMs, band: best.band, resetsAtMs: best.resetsAtMs, forecast: best };
}

export interface WallHint {
  /** What the statusline shows as `→ wall <clock>`. */
  wallAtMs: number;
  /** The wall is less than `amberWithinMs` away: amber even below 90%. */
  amber: boolean;
}

/** The statusline's `→ wall 3:40pm` and its amber rule (default: under 30 minutes away). */
export function wallHint(binding: BindingWall | null, nowMs: number, amberWithinMs = 30 * MINUTE): WallHint | null {
  if (!binding || binding.kind !== 'wall') return null;
  return { wallAtMs: binding.atMs, amber: binding.atMs - nowMs < amberWithinMs };
}
