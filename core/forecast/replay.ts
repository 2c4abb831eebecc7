import { z } from 'zod';
import { activityProfile, type ActivityProfile } from './activity.js';
import { forecastBar, forecastTrail, profileCutoff, type Forecast, type ForecastOptions } from './forecast.js';
import { barKey, TrailBuilder, type BarSample } from './trail.js';

/**
 * `sleds forecast replay <trace.jsonl>`: the forecaster run over a recorded trace, at each sample, with only the
 * samples up to it, so anyone can score it against the trace's real crossings.
 */

/** One line of a trace. Unknown fields are tolerated. */
export const TraceSample = z.looseObject({
  /** When the reading was taken, epoch ms. */
  t: z.number(),
  /** "five_hour", "seven_day", … */
  window: z.string().min(1),
  used_percentage: z.number(),
  /** Epoch seconds, as the harnesses report it. */
  resets_at: z.number().nullable().optional(),
  /** Cumulative API-equivalent dollars (optional; the forecaster does not need it). */
  usd: z.number().nullable().optional(),
  /** Defaults: "codex" for windows named codex_*, else "claude". */
  provider: z.string().optional(),
  /** Default "trace". */
  source: z.string().optional(),
  /** The window's length in minutes, when the source says it (Codex). */
  window_minutes: z.number().nullable().optional(),
});
export type TraceSample = z.infer<typeof TraceSample>;

interface Bar {
  hist: BarSample[];
  builder: TrailBuilder | null;
  profile?: ActivityProfile | null;
  profileAtMs: number;
}

/** One line out per sample. */
export interface ReplayOut {
  t: number;
  window: string;
  /** The forecast crossing of 100%, epoch ms (it may fall after the reset), or null when there is no forecast. */
  eta: number | null;
  /** [early, late], epoch ms, or null with no forecast. */
  band: [number, number] | null;
}

export function traceToBarSample(line: TraceSample): BarSample {
  return {
    provider: line.provider ?? (line.window.startsWith('codex') ? 'codex' : 'claude'),
    window: line.window,
    usedPct: line.used_percentage,
    resetsAtMs: line.resets_at === null || line.resets_at === undefined ? null : line.resets_at * 1000,
    observedAtMs: line.t,
    source: line.source ?? 'trace',
    windowMs: line.window_minutes === null || line.window_minutes === undefined ? null : line.window_minutes * 60_000,
  };
}

/**
 * Each line with the forecast of its bar as of that line, from the lines of that bar up to its time. Lines in
 * time order are handled incrementally (linear in the trace); a bar whose lines go back in time falls back to
 * refitting from all its lines at each step (same answers, quadratic).
 */
export function replayForecasts(lines: readonly TraceSample[], opts?: Partial<ForecastOptions>): Array<{ line: TraceSample; forecast: Forecast }> {
  return replay(lines, opts, () => true) as Array<{ line: TraceSample; forecast: Forecast }>;
}

/** The replay; lines for which `only` says no still build the trails but get no forecast (null). */
function replay(lines: readonly TraceSample[], opts: Partial<ForecastOptions> | undefined, only: (index: number) => boolean): Array<{ line: TraceSample; forecast: Forecast | null }> {
  const bars = new Map<string, Bar>();
  // The activity profile is learned from the history up to the start of the hour (see profileCutoff): once an
  // hour of trace time, not at every line, so the replay stays linear.
  const profileAt = (bar: Bar, t: number): ActivityProfile | null => {
    if (opts?.activity !== undefined) return opts.activity;
    const cutoff = profileCutoff(t);
    if (bar.profile === undefined || bar.profileAtMs !== cutoff) {
      bar.profile = activityProfile(bar.builder!.trails, cutoff, { tzOffsetMinutes: opts?.tzOffsetMinutes ?? 0 });
      bar.profileAtMs = cutoff;
    }
    return bar.profile;
  };
  const out: Array<{ line: TraceSample; forecast: Forecast | null }> = [];
  for (const [i, line] of lines.entries()) {
    const sample = traceToBarSample(line);
    const key = barKey(sample);
    let bar = bars.get(key);
    if (!bar) bars.set(key, (bar = { hist: [], builder: new TrailBuilder(opts?.trail), profileAtMs: -Infinity }));
    bar.hist.push(sample);
    if (bar.builder && sample.observedAtMs < bar.builder.lastObservedAtMs) bar.builder = null;
    if (bar.builder) bar.builder.push(sample);
    if (!only(i)) out.push({ line, forecast: null });
    else if (bar.builder) out.push({ line, forecast: forecastTrail(bar.builder.current()!, line.t, { ...opts, activity: profileAt(bar, line.t) }, bar.builder.trails) });
    else out.push({ line, forecast: forecastBar(bar.hist, line.t, opts) });
  }
  return out;
}

/**
 * The replay's lines out: `{t, window, eta, band}` per sample. `only` (default: every line) picks the lines to
 * forecast; the others still count as history but come out with no forecast (the benchmark forecasts only the
 * lines it scores).
 */
export function replayTrace(lines: readonly TraceSample[], opts?: Partial<ForecastOptions>, only: (index: number) => boolean = () => true): ReplayOut[] {
  return replay(lines, opts, only).map(({ line, forecast }) => ({
    t: line.t,
    window: line.window,
    eta: forecast?.kind === 'eta' ? forecast.etaMs : null,
    band: forecast?.kind === 'eta' ? forecast.band : null,
  }));
}
