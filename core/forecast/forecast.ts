import { activityProfile, presence, sessionShare, wallTimeForActive, type ActivityModel, type ActivityProfile } from './activity.js';
import { blendToCrossing, linearPaceToCrossingMs, modelWeight } from './blend.js';
import { normalCdf, normalQuantile } from './normal.js';
import { theilSen } from './slope.js';
import { activeAt, splitTrails, trailDefaults, windowLengthMs, type BarSample, type Trail, type TrailOptions } from './trail.js';

/**
 * When does a bar hit 100%? Pure: the clock is passed in.
 *
 * 1. **Rate while active.** A Theil–Sen slope of the bar against active time (trail.ts) over the last
 *    `lookbackActiveMs` (30 min) of activity. The current pace is taken to last about `paceMemoryActiveMs` (1 h)
 *    of work — a model or kind of work holds for a while, then changes — and then to revert to the trail's
 *    average active rate: the points used in N hours of work are average·N + (slope − average)·τ·(1 − e^(−N/τ)).
 *    A change of model shows within minutes in the next hour's forecast; a far wall leans on the average.
 * 2. **Active time → wall time.** The time of the next N active minutes comes from activity.ts: the trail's
 *    session share times the seat's presence by hour (learned from the bar's own history), or, without a day of
 *    history, the trail's duty cycle as it stands. That gives the pace's crossing, `paceEtaMs`.
 * 3. **How sure.** The crossing time T is taken as lognormal around the pace's: log T ~ N(log T_pace, σ²), σ from
 *    {@link crossingSigma}: a base for the breaks and changes of work to come, the spread of the lookback's slopes,
 *    the rounding of the readings, and a growth with the horizon (a wall days away depends on days of work nobody
 *    has done yet). Then:
 *    - `pBeforeReset` = P(T < reset). A wall is claimed before the reset only when that is at least
 *      `claimProbability` (0.6): a wall shown that never comes is the error users notice (a false alarm).
 *    - The ETA is the median of T given T < reset, and the band its `bandQuantiles` (5%, 95%), its early end no
 *      later than working flat out at the fast rate: the crossings that matter are those before the reset, and
 *      near the reset the plain median would sit past it.
 *    - Otherwise the ETA says "not before the reset" (the reset, or the pace's crossing if later).
 *
 * The numbers (τ, σ's terms, 0.6, 5–95%) are set on the simulator (bench/trace-sim.ts, seeds 1–5,
 * bench/forecast-accuracy.ts): there the forecast beats linear pace on error and false alarms, on both bars, with
 * a band holding ≥ 80% of crossings; each option says why it exists.
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
  /**
   * How long the current pace lasts, in active time, before usage reverts to the trail's average (1 h: on the
   * simulator a model and kind of work hold for a few bursts; the plain 30-minute slope made far walls swing).
   */
  paceMemoryActiveMs: number;
  /**
   * σ of log(time to the crossing) at a short horizon with a steady rate (0.5: breaks of 2–30 min between bursts
   * of ~25 min move a one-hour crossing by about that much; see {@link crossingSigma}).
   */
  sigmaBase: number;
  /**
   * How much the spread of the lookback's pairwise slopes adds to σ (√2: a half-hour's slopes understate how the
   * rate of the hours to come varies; at 1 the band held ~76% of weekly crossings on the worst seed).
   */
  slopeSpreadScale: number;
  /**
   * σ² grows by this² per day of horizon (1: a weekly wall days away depends on whole days of work not yet done;
   * without it the weekly bar's false alarms stayed at ~0.9× linear pace's).
   */
  sigmaPerDay: number;
  /**
   * A wall is placed before the reset only when it is at least this likely to come before it (0.6: a little more
   * sure than not, since a wall shown that never comes costs the user a needless stop).
   */
  claimProbability: number;
  /**
   * The band's quantiles of the crossing time, also the pairwise-slope quantiles that give the fast and slow rates
   * (5%, 95%: the errors have heavier tails than a lognormal, so the nominal 90% band holds ~85–90%).
   */
  bandQuantiles: readonly [number, number];
  /** Forecasts are capped at now + this (a rate near zero would put them at infinity). */
  maxHorizonMs: number;
  /** A precomputed activity profile (null: none); when absent, it is learned from the history passed in. */
  activity?: ActivityProfile | null;
  /** The seat's offset from UTC in minutes, for the hours of the activity profile. */
  tzOffsetMinutes: number;
  /** Presence by hour is shrunk toward its prior by this many pseudo-days (activity.ts). */
  presencePriorDays: number;
  /**
   * σ of log(time to the crossing) taken for linear pace when the model's crossing is blended with it (blend.ts):
   * the model weighs σ_pace² ÷ (σ_pace² + σ²). Infinity: no blend. 0.5, with claimProbability 0.58, set on the
   * tuning families (bench/trace-families.ts, seeds 1–3): bursts went from 1.00–1.04× pace's error to 0.94–0.97×.
   */
  paceSigma: number;
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
    paceMemoryActiveMs: HOUR,
    sigmaBase: 0.5,
    slopeSpreadScale: Math.SQRT2,
    sigmaPerDay: 1,
    claimProbability: 0.58,
    bandQuantiles: [0.05, 0.95],
    maxHorizonMs: Math.max(windowMs ?? 5 * HOUR, 5 * HOUR),
    tzOffsetMinutes: 0,
    presencePriorDays: 1,
    paceSigma: 0.5,
  };
}

export type NoForecastReason = 'too-few-samples' | 'span-too-short' | 'flat-or-falling' | 'at-wall' | 'window-over';

export interface EtaForecast {
  kind: 'eta';
  provider: string;
  window: string;
  /**
   * The wall, epoch ms: the median crossing time given that it comes before the reset, when that is at least
   * `claimProbability` likely (beforeReset); otherwise the pace's crossing or the reset, whichever is later ("not
   * before the reset").
   */
  etaMs: number;
  /** [early, late], epoch ms: the `bandQuantiles` of the crossing time (given the reset comes after it, when beforeReset). */
  band: [number, number];
  /** When the bar reaches 100% at the expected pace and breaks (capped at maxHorizonMs; may be after the reset). */
  paceEtaMs: number;
  /** The chance the bar fills before the window resets (1 with no reset known). */
  pBeforeReset: number;
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
  // The rate while active: the recent slope for about paceMemoryActiveMs of work, then the trail's average.
  const remaining = 100 - last.usedPct;
  const average = (last.usedPct - pts[0]!.usedPct) / ((last.activeMs - pts[0]!.activeMs) / HOUR);
  const activeRate = remaining / activeHoursFor(remaining, fit.slope, average > 0 ? average : fit.slope, o.paceMemoryActiveMs / HOUR);
  // Active time → wall time.
  const trails = history ?? [trail];
  const profile = o.activity !== undefined ? o.activity : activityProfile(trails, profileCutoff(nowMs), { tzOffsetMinutes: o.tzOffsetMinutes });
  const wallSoFar = nowMs - pts[0]!.atMs;
  const duty = wallSoFar > 0 ? Math.min(1, activeAt(trail, nowMs, to) / wallSoFar) : 1;
  const session = profile ? sessionShare([trail], pts[0]!.atMs, nowMs, o.tzOffsetMinutes) : null;
  const model: ActivityModel = profile
    ? { share: session && session.wallMs > 0 ? Math.min(1, session.activeMs / session.wallMs) : duty, presence: presence(profile, nowMs, o.presencePriorDays) }
    : { share: duty, presence: null };
  const horizon = nowMs + o.maxHorizonMs;
  const modelEtaMs = wallTimeForActive(model, nowMs, (remaining / activeRate) * HOUR, o.maxHorizonMs) ?? horizon;
  const toModel = Math.max(MINUTE / 60, modelEtaMs - nowMs);
  // The spread of the crossing time (see the module note).
  const step = window.every((p) => Number.isInteger(p.usedPct)) ? 1 : 0.1;
  const sigma = crossingSigma(o, { slopeLo: fit.lo, slopeHi: fit.hi, activeRate, remaining, step, toEtaMs: toModel });
  // Where the model is unsure, lean towards linear pace (blend.ts).
  const windowStart = reset !== null && trail.windowMs !== null ? reset - trail.windowMs : null;
  const toPace = windowStart === null ? null : linearPaceToCrossingMs(last.usedPct, nowMs - windowStart);
  const toEta = blendToCrossing(toModel, toPace, modelWeight(sigma, o.paceSigma));
  const paceEtaMs = modelEtaMs;
  const pBeforeReset = reset === null ? 1 : normalCdf(Math.log(Math.max(1, reset - nowMs) / toEta) / sigma);
  const quantile = (p: number): number => Math.min(horizon, nowMs + toEta * Math.exp(sigma * normalQuantile(p)));
  const [qLo, qHi] = o.bandQuantiles;
  const claimed = pBeforeReset >= o.claimProbability;
  // Working flat out at the fast rate, the wall could come no sooner than this.
  const flatOut = nowMs + (remaining / Math.max(fit.hi, activeRate)) * HOUR;
  const etaMs = claimed ? quantile(pBeforeReset / 2) : Math.max(paceEtaMs, reset!);
  const band: [number, number] = claimed ? [Math.min(flatOut, quantile(qLo * pBeforeReset)), quantile(qHi * pBeforeReset)] : [quantile(qLo), quantile(qHi)];
  const share = Math.min(1, ((remaining / activeRate) * HOUR) / toEta);
  return {
    kind: 'eta',
    provider: trail.provider,
    window: trail.window,
    etaMs: Math.round(etaMs),
    band: [Math.round(band[0]), Math.round(band[1])],
    paceEtaMs: Math.round(paceEtaMs),
    pBeforeReset,
    ratePctPerHour: activeRate * share,
    activeRatePctPerHour: activeRate,
    duty: share,
    beforeReset: claimed && (reset === null || etaMs < reset),
    usedPct: last.usedPct,
    resetsAtMs: reset,
    observedAtMs: last.atMs,
    samples: window.length,
  };
}

/**
 * σ of log(time to the crossing): σ² = sigmaBase² + (slopeSpreadScale · spread)² + rounding² + sigmaPerDay² ·
 * horizon in days, where spread = ln(fast ÷ slow rate) ÷ (2 × 0.8416) of the pairwise slopes (capped at 2) and
 * rounding = the reading step ÷ √12 ÷ the points left (a bar read in whole points at 99% may be anywhere in
 * 98.5–99.5).
 */
export function crossingSigma(
  o: Pick<ForecastOptions, 'sigmaBase' | 'slopeSpreadScale' | 'sigmaPerDay'>,
  x: { slopeLo: number; slopeHi: number; activeRate: number; remaining: number; step: number; toEtaMs: number },
): number {
  const spread = x.slopeLo > 0 ? Math.min(2, Math.log(Math.max(x.slopeHi, x.activeRate) / Math.min(x.slopeLo, x.activeRate)) / (2 * 0.8416)) : 1;
  const rounding = x.step / Math.sqrt(12) / x.remaining;
  return Math.sqrt(o.sigmaBase ** 2 + (o.slopeSpreadScale * spread) ** 2 + rounding ** 2 + (o.sigmaPerDay ** 2 * x.toEtaMs) / (24 * HOUR));
}

/**
 * Hours of activity until `points` more are used, when the current pace `recent` (points per active hour) holds
 * for about `tau` hours and then reverts to `average`: used(N) = average·N + (recent − average)·τ·(1 − e^(−N/τ)),
 * solved for N by bisection (used is increasing in N).
 */
export function activeHoursFor(points: number, recent: number, average: number, tau: number): number {
  if (points <= 0) return 0;
  const used = (n: number): number => average * n + (recent - average) * tau * (1 - Math.exp(-n / tau));
  let lo = 0;
  let hi = points / Math.min(recent, average);
  for (let i = 0; i < 50; i++) {
    const mid = (lo + hi) / 2;
    if (used(mid) < points) lo = mid;
    else hi = mid;
  }
  return (lo + hi) / 2;
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
