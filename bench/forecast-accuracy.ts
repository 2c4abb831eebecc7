import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import type { ForecastOptions } from '../core/forecast/forecast.js';
import { replayTrace, traceToBarSample, TraceSample, type ReplayOut } from '../core/forecast/replay.js';
import { leastSquares } from '../core/forecast/slope.js';
import { barKey, splitTrails, TrailBuilder, windowLengthMs, type Trail } from '../core/forecast/trail.js';
import { formatCalibrationAccuracy, runCalibrationAccuracy } from './calibration-accuracy.js';
import { simulateTraces } from './trace-sim.js';

/**
 * How well does the forecaster call the wall? Replays usage traces (the simulator's, bench/trace-sim.ts, plus any
 * recorded ones) through it at each sample — the same `replayTrace` that `sleds forecast replay` runs — and
 * through two baselines computed in the same run:
 *
 * - **linear pace**: projected = used × window ÷ elapsed since the window started; the wall at
 *   start + 100 × elapsed ÷ used.
 * - **least squares, last hour**: an ordinary least-squares line through the last hour (wall clock) of the
 *   trail; the wall where it reaches 100. Same minimums as ours (3 readings over 8 minutes, a rising line).
 *
 * All three see the same trails (rollovers split, high-water mark applied), so what is compared is the
 * forecasting, not the bookkeeping. Each window kind (5-hour, weekly) is scored on its own. Definitions:
 *
 * - **Scored samples**: those in the last 2 h before a real crossing. A prediction is clipped to [now, reset]: a
 *   forecast past the reset says "not before the reset" and scores as the reset.
 * - **MAE**: mean |predicted − real crossing|, minutes, over the scored samples at which all three methods give a
 *   forecast (ours gives none with < 3 readings or < 8 minutes of them, by design; comparing on the common
 *   samples keeps that rule from deciding the comparison). Also shown: the MAE over all scored samples with
 *   "no forecast" scored as the reset, and the MAE over common samples within 60 min after a change of model or
 *   kind of work (simulated traces only).
 * - **False alarm**: in a window that never reaches 100%, a sample at which the method forecasts the wall before
 *   the reset — one statusline render showing a wall that never comes. Counted per sample (the target) and per
 *   window (windows with at least one).
 * - **Band holds** (ours only; the baselines have none): the share of scored samples whose band [early, late]
 *   holds the real crossing (no forecast counts as a miss), with the band's median width.
 *
 * Windows still open at the end of a trace are not scored. The reset a forecast is compared with is the one the
 * readings state (whole seconds), so a forecast "at the reset" is not a wall before it. Only the scored lines
 * are forecast (the others still feed the trails), which leaves every figure as it would be otherwise.
 *
 * `--seeds 1-5` scores five independent sets of seats and prints the targets per seed, their mean and the worst
 * seed: a target met on one seed only is not met. The $→% calibration's own benchmark follows
 * (bench/calibration-accuracy.ts).
 */

export type MethodName = 'sleds' | 'linearPace' | 'leastSquaresHour';
export const METHODS: readonly MethodName[] = ['sleds', 'linearPace', 'leastSquaresHour'];
const LABEL: Record<MethodName, string> = { sleds: 'sleds', linearPace: 'linear pace', leastSquaresHour: 'least squares 1h' };

export interface MethodScore {
  /** Samples in the last 2 h before a real crossing. */
  scored: number;
  /** Of those, the ones where every method had a forecast (the MAE's samples). */
  common: number;
  /** Of the scored samples, the ones where this method had no forecast. */
  noForecast: number;
  /** Minutes, over the common samples. */
  maeMin: number;
  medianErrMin: number;
  /** Mean signed error, minutes, common samples: negative = the wall called too early. */
  biasMin: number;
  /** Minutes, over all scored samples, no forecast scored as the reset. */
  maeAllMin: number;
  /** Common samples within 60 min after a change of model or kind of work. */
  afterChange: { n: number; maeMin: number };
  falseAlarms: {
    /** Samples in never-crossing windows with a wall forecast before the reset … */
    samples: number;
    /** … as a share of all samples in never-crossing windows. */
    rate: number;
    /** Never-crossing windows with at least one. */
    windows: number;
  };
  band: { coverage: number; medianWidthMin: number; missedEarly: number; missedLate: number } | null;
}

export interface WindowTruth {
  window: string;
  startMs: number;
  resetsAtMs: number;
  crossMs: number | null;
  incomplete: boolean;
}

export interface AccuracyTrace {
  id: string;
  lines: TraceSample[];
  windows: WindowTruth[];
  changes: number[];
}

export interface ForecastAccuracyOptions {
  seed?: number;
  /** How many simulated seats (default 60). */
  traces?: number;
  /** Days per simulated seat (default 8). */
  days?: number;
  /** Recorded traces, scored against the crossings they contain. */
  recorded?: Array<{ id: string; lines: TraceSample[] }>;
  forecast?: Partial<ForecastOptions>;
  /** Score every n-th scored line only (default 1: all); for quick experiments, not for the figures. */
  stride?: number;
}

export interface WindowTargets {
  /** Our MAE ÷ linear pace's (target ≤ 1). */
  errorRatio: number;
  /** The same over the hour after a change (target < 1). */
  afterChangeRatio: number;
  /** Our false-alarm samples ÷ linear pace's (target ≤ 0.8). */
  falseAlarmRatio: number;
  /** The same counted in windows. */
  falseAlarmWindowRatio: number;
  /** Target ≥ 0.8. */
  bandCoverage: number;
}

export interface ForecastAccuracyReport {
  seed: number;
  traces: number;
  days: number;
  recorded: number;
  windows: Record<string, { crossing: number; neverCrossing: number; incomplete: number; samples: number }>;
  /** Per window kind. */
  scores: Record<string, Record<MethodName, MethodScore>>;
  targets: Record<string, WindowTargets>;
}

const MIN = 60_000;
const HOUR = 3_600_000;
const SCORED_BEFORE_MS = 2 * HOUR;
const AFTER_CHANGE_MS = HOUR;

interface Pred {
  eta: number | null;
  band: [number, number] | null;
}

/** The baselines at each line, from the same trails as ours. */
function baselines(lines: readonly TraceSample[]): Array<Record<'linearPace' | 'leastSquaresHour', Pred>> {
  const builders = new Map<string, TrailBuilder>();
  return lines.map((line) => {
    const s = traceToBarSample(line);
    const key = barKey(s);
    let b = builders.get(key);
    if (!b) builders.set(key, (b = new TrailBuilder()));
    b.push(s);
    const trail = b.current()!;
    return { linearPace: linearPace(trail, line.t), leastSquaresHour: leastSquaresHour(trail, line.t) };
  });
}

function linearPace(trail: Trail, nowMs: number): Pred {
  const last = trail.points[trail.points.length - 1]!;
  const W = trail.windowMs ?? windowLengthMs(trail.window);
  if (trail.resetsAtMs === null || W === null || last.usedPct <= 0 || last.usedPct >= 100) return { eta: null, band: null };
  const start = trail.resetsAtMs - W;
  const elapsed = Math.max(MIN, nowMs - start);
  return { eta: start + (100 * elapsed) / last.usedPct, band: null };
}

function leastSquaresHour(trail: Trail, nowMs: number): Pred {
  let from = trail.points.length;
  while (from > 0 && trail.points[from - 1]!.atMs >= nowMs - HOUR) from--;
  const pts = trail.points.slice(from);
  const last = pts[pts.length - 1];
  if (!last || pts.length < 3 || last.atMs - pts[0]!.atMs < 8 * MIN || last.usedPct >= 100) return { eta: null, band: null };
  const fit = leastSquares(pts.map((p) => ({ x: (p.atMs - nowMs) / HOUR, y: p.usedPct })));
  if (!fit || fit.slope <= 0) return { eta: null, band: null };
  return { eta: nowMs + ((100 - last.usedPct) / fit.slope) * HOUR, band: null };
}

/** Ground truth from a recorded trace: each trail's reset, and the first reading at 100% if any. */
export function truthFromLines(lines: readonly TraceSample[]): WindowTruth[] {
  const byBar = new Map<string, ReturnType<typeof traceToBarSample>[]>();
  let lastT = -Infinity;
  for (const l of lines) {
    const s = traceToBarSample(l);
    const k = barKey(s);
    const list = byBar.get(k);
    if (list) list.push(s);
    else byBar.set(k, [s]);
    lastT = Math.max(lastT, l.t);
  }
  const out: WindowTruth[] = [];
  for (const samples of byBar.values()) {
    for (const trail of splitTrails(samples)) {
      const W = trail.windowMs ?? windowLengthMs(trail.window);
      if (trail.resetsAtMs === null || W === null) continue;
      const cross = trail.points.find((p) => p.usedPct >= 100);
      out.push({ window: trail.window, startMs: trail.resetsAtMs - W, resetsAtMs: trail.resetsAtMs, crossMs: cross?.atMs ?? null, incomplete: !cross && lastT < trail.resetsAtMs });
    }
  }
  return out;
}

interface Acc {
  errs: number[];
  noForecast: number;
  commonErrs: number[];
  commonSigned: number[];
  changeErrs: number[];
  quietSamples: number;
  alarms: number;
  alarmWindows: Set<WindowTruth>;
  covered: number;
  early: number;
  late: number;
  widths: number[];
}

const newAcc = (): Acc => ({ errs: [], noForecast: 0, commonErrs: [], commonSigned: [], changeErrs: [], quietSamples: 0, alarms: 0, alarmWindows: new Set(), covered: 0, early: 0, late: 0, widths: [] });

function medianOf(xs: readonly number[]): number {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

const mean = (xs: readonly number[]): number => (xs.length === 0 ? Number.NaN : xs.reduce((a, b) => a + b, 0) / xs.length);

/** The window instance each line falls in, when it is scored: complete, and never crossing or in its last 2 h. */
function scoredWindows(trace: AccuracyTrace): Array<WindowTruth | null> {
  return trace.lines.map((line) => {
    const w = trace.windows.find((x) => x.window === line.window && x.startMs <= line.t && line.t < x.resetsAtMs);
    if (!w || w.incomplete) return null;
    if (w.crossMs !== null && !(line.t < w.crossMs && line.t >= w.crossMs - SCORED_BEFORE_MS)) return null;
    return w;
  });
}

function scoreTrace(trace: AccuracyTrace, accs: Map<string, Record<MethodName, Acc>>, forecast?: Partial<ForecastOptions>, stride = 1): void {
  const windows = scoredWindows(trace);
  // Only the scored lines are forecast (every `stride`-th of them, for quick experiments); the rest are history.
  let k = 0;
  const pick = windows.map((w) => w !== null && k++ % stride === 0);
  const ours: ReplayOut[] = replayTrace(trace.lines, forecast, (i) => pick[i]!);
  const base = baselines(trace.lines);
  const changes = [...trace.changes].sort((a, b) => a - b);
  trace.lines.forEach((line, i) => {
    const w = windows[i];
    if (!w || !pick[i]) return;
    const preds: Record<MethodName, Pred> = { sleds: { eta: ours[i]!.eta, band: ours[i]!.band }, ...base[i]! };
    let acc = accs.get(line.window);
    if (!acc) accs.set(line.window, (acc = { sleds: newAcc(), linearPace: newAcc(), leastSquaresHour: newAcc() }));
    const common = METHODS.every((m) => preds[m].eta !== null);
    const scored = w.crossMs !== null && line.t < w.crossMs && line.t >= w.crossMs - SCORED_BEFORE_MS;
    const afterChange = changes.some((c) => c <= line.t && line.t - c < AFTER_CHANGE_MS);
    // The reset as the readings state it (whole seconds): a forecast "at the reset" is not a wall before it.
    const reset = Math.floor(w.resetsAtMs / 1000) * 1000;
    for (const m of METHODS) {
      const p = preds[m];
      const a = acc[m];
      if (w.crossMs === null) {
        a.quietSamples++;
        if (p.eta !== null && p.eta < reset) {
          a.alarms++;
          a.alarmWindows.add(w);
        }
        continue;
      }
      if (!scored) continue;
      const predicted = p.eta === null ? reset : Math.min(reset, Math.max(line.t, p.eta));
      const err = Math.abs(predicted - w.crossMs) / MIN;
      a.errs.push(err);
      if (p.eta === null) a.noForecast++;
      if (common) {
        a.commonErrs.push(err);
        a.commonSigned.push((predicted - w.crossMs) / MIN);
        if (afterChange) a.changeErrs.push(err);
      }
      if (p.band) {
        if (w.crossMs < p.band[0]) a.early++;
        else if (w.crossMs > p.band[1]) a.late++;
        else a.covered++;
        a.widths.push((p.band[1] - p.band[0]) / MIN);
      }
    }
  });
}

function finish(a: Acc, withBand: boolean): MethodScore {
  const n = a.errs.length;
  return {
    scored: n,
    common: a.commonErrs.length,
    noForecast: a.noForecast,
    maeMin: mean(a.commonErrs),
    medianErrMin: medianOf(a.commonErrs),
    biasMin: mean(a.commonSigned),
    maeAllMin: mean(a.errs),
    afterChange: { n: a.changeErrs.length, maeMin: mean(a.changeErrs) },
    falseAlarms: { samples: a.alarms, rate: a.quietSamples ? a.alarms / a.quietSamples : 0, windows: a.alarmWindows.size },
    band: withBand && n ? { coverage: a.covered / n, medianWidthMin: medianOf(a.widths), missedEarly: a.early / n, missedLate: (a.late + a.noForecast) / n } : null,
  };
}

const ratio = (a: number, b: number): number => (b > 0 ? a / b : a > 0 ? Infinity : 0);

export function runForecastAccuracy(opts: ForecastAccuracyOptions = {}): ForecastAccuracyReport {
  const seed = opts.seed ?? 1;
  const traces = opts.traces ?? 60;
  const days = opts.days ?? 8;
  const all: AccuracyTrace[] = simulateTraces({ seed, traces, days }).map((t) => ({ id: t.id, lines: t.samples.map((s): TraceSample => ({ ...s })), windows: t.windows, changes: t.changes }));
  for (const rec of opts.recorded ?? []) all.push({ id: rec.id, lines: rec.lines, windows: truthFromLines(rec.lines), changes: [] });
  return scoreAccuracy(all, { seed, traces, days, recorded: opts.recorded?.length ?? 0, forecast: opts.forecast, stride: opts.stride });
}

/** Scores the given traces (any family's) through the forecaster and the baselines. */
export function scoreAccuracy(
  all: readonly AccuracyTrace[],
  meta: { seed: number; traces: number; days: number; recorded?: number; forecast?: Partial<ForecastOptions>; stride?: number },
): ForecastAccuracyReport {
  const { seed, traces, days } = meta;
  const opts = { forecast: meta.forecast, stride: meta.stride };
  const accs = new Map<string, Record<MethodName, Acc>>();
  const windows: ForecastAccuracyReport['windows'] = {};
  for (const trace of all) {
    scoreTrace(trace, accs, opts.forecast, opts.stride);
    for (const w of trace.windows) {
      const c = (windows[w.window] ??= { crossing: 0, neverCrossing: 0, incomplete: 0, samples: 0 });
      if (w.incomplete) c.incomplete++;
      else if (w.crossMs === null) c.neverCrossing++;
      else c.crossing++;
    }
    for (const l of trace.lines) if (windows[l.window]) windows[l.window]!.samples++;
  }
  const scores: ForecastAccuracyReport['scores'] = {};
  const targets: ForecastAccuracyReport['targets'] = {};
  for (const [group, acc] of [...accs].sort(([a], [b]) => a.localeCompare(b))) {
    const s = { sleds: finish(acc.sleds, true), linearPace: finish(acc.linearPace, false), leastSquaresHour: finish(acc.leastSquaresHour, false) };
    scores[group] = s;
    targets[group] = {
      errorRatio: s.sleds.maeMin / s.linearPace.maeMin,
      afterChangeRatio: s.sleds.afterChange.maeMin / s.linearPace.afterChange.maeMin,
      falseAlarmRatio: ratio(s.sleds.falseAlarms.samples, s.linearPace.falseAlarms.samples),
      falseAlarmWindowRatio: ratio(s.sleds.falseAlarms.windows, s.linearPace.falseAlarms.windows),
      bandCoverage: s.sleds.band?.coverage ?? 0,
    };
  }
  return { seed, traces, days, recorded: meta.recorded ?? 0, windows, scores, targets };
}

const num = (x: number, d = 1): string => (Number.isFinite(x) ? x.toFixed(d) : '–');
const pct = (x: number): string => `${num(100 * x, 0)}%`;

/** The report as the lines `npm run bench` prints. */
export function formatForecastAccuracy(r: ForecastAccuracyReport): string[] {
  const lines: string[] = [];
  lines.push(`forecast accuracy: ${r.traces} simulated seats × ${r.days} days (seed ${r.seed})${r.recorded ? ` + ${r.recorded} recorded traces` : ''}; minutes of error on the samples of the last 2 h before a wall`);
  const head = ['', 'MAE', 'median', 'bias', 'MAE all', 'after change', 'false alarms', 'band holds'];
  const widths = [18, 7, 7, 7, 8, 13, 25, 0];
  const row = (cells: string[]): string => `  ${cells.map((c, i) => (widths[i] ? c.padEnd(widths[i]!) : c)).join(' ')}`.trimEnd();
  for (const [group, byMethod] of Object.entries(r.scores)) {
    const w = r.windows[group]!;
    const s0 = byMethod.sleds;
    lines.push(`  ${group}: ${w.crossing} windows cross, ${w.neverCrossing} never do${w.incomplete ? ` (${w.incomplete} still open, not scored)` : ''}; ${s0.scored} scored samples, ${s0.common} where all three forecast; ${byMethod.linearPace.afterChange.n} after a change`);
    lines.push(row(head));
    for (const m of METHODS) {
      const s = byMethod[m];
      const band = s.band ? `${pct(s.band.coverage)} (median width ${num(s.band.medianWidthMin, 0)} min)` : '';
      lines.push(row([LABEL[m], num(s.maeMin), num(s.medianErrMin), num(s.biasMin), num(s.maeAllMin), num(s.afterChange.maeMin), `${s.falseAlarms.samples} (${pct(s.falseAlarms.rate)}) in ${s.falseAlarms.windows} win`, band]));
    }
    const t = r.targets[group]!;
    const ok = (b: boolean): string => (b ? 'met' : 'NOT met');
    lines.push(
      `  ${group} vs linear pace: MAE ${num(t.errorRatio, 2)}× (≤ 1: ${ok(t.errorRatio <= 1)}), after a change ${num(t.afterChangeRatio, 2)}× (< 1: ${ok(t.afterChangeRatio < 1)}), ` +
        `false alarms ${num(t.falseAlarmRatio, 2)}× (≤ 0.8: ${ok(t.falseAlarmRatio <= 0.8)}; ${num(t.falseAlarmWindowRatio, 2)}× in windows), band holds ${pct(t.bandCoverage)} (≥ 80%: ${ok(t.bandCoverage >= 0.8)})`,
    );
  }
  lines.push('  MAE: samples where all three forecast; MAE all: every scored sample, no forecast = the reset; false alarm: a sample of a window that never crosses with a wall forecast before its reset');
  return lines;
}

/** The targets of several seeds side by side, with their mean and the worst seed (the README's table). */
export function formatSeedSummary(reports: readonly ForecastAccuracyReport[]): string[] {
  const lines: string[] = [];
  const seeds = reports.map((r) => r.seed);
  lines.push(`forecast accuracy over seeds ${seeds.join(', ')} (${reports[0]?.traces ?? 0} seats × ${reports[0]?.days ?? 0} days each): sleds ÷ linear pace, and band coverage`);
  const groups = [...new Set(reports.flatMap((r) => Object.keys(r.targets)))].sort();
  const cols: Array<[string, keyof WindowTargets, 'max' | 'min', (x: number) => string, (x: number) => boolean]> = [
    ['MAE', 'errorRatio', 'max', (x) => `${num(x, 2)}×`, (x) => x <= 1],
    ['after a change', 'afterChangeRatio', 'max', (x) => `${num(x, 2)}×`, (x) => x < 1],
    ['false alarms', 'falseAlarmRatio', 'max', (x) => `${num(x, 2)}×`, (x) => x <= 0.8],
    ['band holds', 'bandCoverage', 'min', pct, (x) => x >= 0.8],
  ];
  for (const g of groups) {
    lines.push(`  ${g.padEnd(10)} ${'seed'.padEnd(6)} ${cols.map(([h]) => h.padEnd(15)).join('')}`.trimEnd());
    const rows = reports.map((r) => r.targets[g]!).filter(Boolean);
    reports.forEach((r) => {
      const t = r.targets[g];
      if (t) lines.push(`  ${''.padEnd(10)} ${String(r.seed).padEnd(6)} ${cols.map(([, k, , f]) => f(t[k]).padEnd(15)).join('')}`.trimEnd());
    });
    const agg = (k: keyof WindowTargets, how: 'mean' | 'max' | 'min'): number => {
      const xs = rows.map((t) => t[k]);
      return how === 'mean' ? xs.reduce((a, b) => a + b, 0) / xs.length : how === 'max' ? Math.max(...xs) : Math.min(...xs);
    };
    lines.push(`  ${''.padEnd(10)} ${'mean'.padEnd(6)} ${cols.map(([, k, , f]) => f(agg(k, 'mean')).padEnd(15)).join('')}`.trimEnd());
    lines.push(`  ${''.padEnd(10)} ${'worst'.padEnd(6)} ${cols.map(([, k, w, f, ok]) => `${f(agg(k, w))} ${ok(agg(k, w)) ? 'met' : 'NOT met'}`.padEnd(15)).join('')}`.trimEnd());
  }
  lines.push('  targets: MAE ≤ 1×, after a change < 1×, false alarms ≤ 0.8×, band holds ≥ 80% (worst seed)');
  return lines;
}

export function printForecastAccuracy(r: ForecastAccuracyReport, write: (s: string) => void = (s) => process.stdout.write(s)): void {
  for (const line of formatForecastAccuracy(r)) write(`${line}\n`);
}

function readTrace(path: string): TraceSample[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l, i) => {
      const parsed = TraceSample.safeParse(JSON.parse(l));
      if (!parsed.success) throw new Error(`${path}:${i + 1}: not a trace sample (${parsed.error.issues[0]?.message ?? 'invalid'})`);
      return parsed.data;
    });
}

/**
 * `node dist/bench/forecast-accuracy.js [--seeds 1-5 | --seed N] [--traces N] [--days N] [--trace file.jsonl …] [--json]`:
 * the forecast accuracy of each seed, the targets over the seeds, and the $→% calibration (first seed).
 */
function main(argv: string[]): void {
  const opt = (name: string): string | undefined => {
    const i = argv.indexOf(name);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const recorded = argv.flatMap((a, i) => (a === '--trace' && argv[i + 1] ? [{ id: argv[i + 1]!, lines: readTrace(argv[i + 1]!) }] : []));
  const range = (opt('--seeds') ?? opt('--seed') ?? '1').split('-').map(Number);
  const seeds = Array.from({ length: (range[1] ?? range[0]!) - range[0]! + 1 }, (_, i) => range[0]! + i);
  const traces = Number(opt('--traces') ?? 60);
  const days = Number(opt('--days') ?? 8);
  const reports = seeds.map((seed) => runForecastAccuracy({ seed, traces, days, recorded }));
  const calibration = runCalibrationAccuracy({ seed: seeds[0]!, traces, days });
  if (argv.includes('--json')) {
    process.stdout.write(`${JSON.stringify({ forecast: reports, calibration }, null, 2)}\n`);
    return;
  }
  for (const r of reports) printForecastAccuracy(r);
  if (reports.length > 1) for (const l of formatSeedSummary(reports)) process.stdout.write(`${l}\n`);
  for (const l of formatCalibrationAccuracy(calibration)) process.stdout.write(`${l}\n`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) main(process.argv.slice(2));
