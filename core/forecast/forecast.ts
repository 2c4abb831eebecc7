import { activityProfile, presence, sessionShare, wallTimeForActive, type ActivityModel, type ActivityProfile } from './activity.js';
import { theilSen } from './slope.js';
import { activeAt, splitTrails, trailDefaults, windowLengthMs, type BarSample, type Trail, type TrailOptions } from './trail.js';

/**
 * When does a bar hit 100%? Pure: the clock is passed in.
 *
 * 1. **Rate while active.** A Theil–Sen slope of the bar against active time (trail.ts) over the last
 *    `lookbackActiveMs` (30 min) of activity, blended with the trail's average active rate:
 *    rate = slope^w × average^(1−w), w = `recentWeight` (0.5). The slope follows a change of model or of work
 *    within minutes; the average keeps one busy quarter of an hour from swinging the forecast.
 * 2. **Active time → wall time.** The time of the next N active minutes comes from activity.ts: the trail's
 *    session share times the seat's presence by hour (learned from the bar's own history), or, without a day of
 *    history, the trail's duty cycle as it stands.
 *
 *        ETA = the wall time by which (100 − used) ÷ rate hours of activity are expected.
 *
 * 3. **Band.** The early end assumes the fast rate (the slope spread's upper quantile) and no breaks at all; the
 *    late end the slow rate (the lower quantile) with the breaks expected. The spread of a half-hour slope says
 *    little about the breaks and changes of work to come, so the band also spans at least ÷`bandFactor` …
 *    ×`bandFactor` (2.5) of the time to the ETA: the width that holds ~80% of real crossings on the simulator
 *    (bench/forecast-accuracy.ts), where the slope spread alone held about a third.
 */

export interface ForecastOptions {
  trail: Partial<TrailOptions>;
  /** The slope is fitted over this much active time before the last reading (extended back to reach the minimums). */
  lookbackActiveMs: number;
  /** Fewer readings than this in the trail: no forecast. */
  minSamples: number;
  /** Readings spanning less wall time than this: no forecast. */
  minSpanMs: number;
  /** A slope at or below this (points per hour of activity) is flat. */
  minRatePctPerHour: number;
  /** The weight of the recent slope against the trail's average active rate (geometric blend, 0–1). */
  recentWeight: number;
  /** The quantiles of the pairwise slopes that give the band's fast and slow rates. */
  bandQuantiles: readonly [number, number];
  /** The band spans at least ETA-time ÷ this … × this. */
  bandFactor: number;
  /** Forecasts are capped at now + this (a rate near zero would put them at infinity). */
  maxHorizonMs: number;
  /** A precomputed activity profile (null: none); when absent, it is learned from the history passed in. */
  activity?: ActivityProfile | null;
  /** The seat's offset from UTC in minutes, for the hours of the activity profile. */
  tzOffsetMinutes: number;
  /** Presence by hour is shrunk toward its prior by this many pseudo-days (activity.ts). */
  presencePriorDays: number;
}

const MINUTE = 60_000;
const HOUR = 3_600_000;

/** The defaults (the trail's idle rules depend on the window's length, see trailDefaults). */
export function forecastDefaults(windowMs: number | null): ForecastOptions {
  return {
    trail: {},
    lookbackActiveMs: 30 * MINUTE,
    minSamples: 3,
    minSpanMs: 8 * MINUTE,
    minRatePctPerHour: 0.01,
    recentWeight: 0.5,
    bandQuantiles: [0.2, 0.8],
    bandFactor: 2.5,
    maxHorizonMs: Math.max(windowMs ?? 5 * HOUR, 5 * HOUR),
    tzOffsetMinutes: 0,
    presencePriorDays: 1,
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
  /** The wall-clock rate the ETA implies (active rate × expected active share), points per hour. */
  ratePctPerHour: number;
  /** The rate while active, points per hour of activity. */
  activeRatePctPerHour: number;
  /** The expected active share of the wall time until the ETA. */
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
 * The activity profile is learned from the history up to the start of the current hour: it moves slowly, and a
 * replay can then learn it once an hour and still give the same answers as {@link forecastBar}.
 */
export function profileCutoff(nowMs: number): number {
  return Math.floor(nowMs / HOUR) * HOUR;
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
  if (!trail) return none('too-few-samples', `No readings of ${bar.window ? `the ${barName(bar.window)}` : 'this'} bar yet; a forecast needs ${o.minSamples}.`, null, bar);
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
  if (!fit || fit.slope <= o.minRatePctPerHour) {
    const since = formatSpan(last.atMs - window[0]!.atMs);
    return none('flat-or-falling', `The ${name} bar has not risen over its last ${since} of readings; no wall in sight.`, trail, bar);
  }
  // The rate while active: the recent slope blended with the trail's average.
  const average = (last.usedPct - pts[0]!.usedPct) / ((last.activeMs - pts[0]!.activeMs) / HOUR);
  const w = Math.min(1, Math.max(0, o.recentWeight));
  const activeRate = average > 0 ? Math.exp(w * Math.log(fit.slope) + (1 - w) * Math.log(average)) : fit.slope;
  // Active time → wall time.
  const trails = history ?? [trail];
  const profile = o.activity !== undefined ? o.activity : activityProfile(trails, profileCutoff(nowMs), { tzOffsetMinutes: o.tzOffsetMinutes });
  const wallSoFar = nowMs - pts[0]!.atMs;
  const duty = wallSoFar > 0 ? Math.min(1, activeAt(trail, nowMs, to) / wallSoFar) : 1;
  const session = profile ? sessionShare([trail], pts[0]!.atMs, nowMs, o.tzOffsetMinutes) : null;
  const model: ActivityModel = profile
    ? { share: session && session.wallMs > 0 ? Math.min(1, session.activeMs / session.wallMs) : duty, presence: presence(profile, nowMs, o.presencePriorDays) }
    : { share: duty, presence: null };
  const remaining = 100 - last.usedPct;
  const horizon = nowMs + o.maxHorizonMs;
  const at = (ratePerHour: number, m: ActivityModel): number => (ratePerHour > 0 ? (wallTimeForActive(m, nowMs, (remaining / ratePerHour) * HOUR, o.maxHorizonMs) ?? horizon) : horizon);
  const etaMs = at(activeRate, model);
  const toEta = etaMs - nowMs;
  const fast = nowMs + (remaining / Math.max(fit.hi, activeRate)) * HOUR;
  const slow = at(Math.min(fit.lo, activeRate), model);
  const early = Math.min(fast, etaMs, nowMs + toEta / o.bandFactor);
  const late = Math.min(horizon, Math.max(slow, etaMs, nowMs + toEta * o.bandFactor));
  const share = toEta > 0 ? Math.min(1, ((remaining / activeRate) * HOUR) / toEta) : 1;
  return {
    kind: 'eta',
    provider: trail.provider,
    window: trail.window,
    etaMs: Math.round(etaMs),
    band: [Math.round(early), Math.round(late)],
    ratePctPerHour: activeRate * share,
    activeRatePctPerHour: activeRate,
    duty: share,
    beforeReset: reset === null || etaMs < reset,
    usedPct: last.usedPct,
    resetsAtMs: reset,
    observedAtMs: last.atMs,
    samples: window.length,
  };
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
