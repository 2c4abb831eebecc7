import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import type { ForecastOptions } from '../core/forecast/forecast.js';
import { replayTrace, traceToBarSample, TraceSample, type ReplayOut } from '../core/forecast/replay.js';
import { leastSquares } from '../core/forecast/slope.js';
import { barKey, splitTrails, TrailBuilder, windowLengthMs, type Trail } from '../core/forecast/trail.js';
import { simulateTraces } from './trace-sim.js';

/**
 * How well does the forecaster call the wall? Replays usage traces (the simulator's, plus any recorded ones)
 * through it at each sample, and through two baselines computed in the same run:
 *
 * - **linear pace**: projected = used × window ÷ elapsed since the window started; the wall at
 *   start + 100 × elapsed ÷ used.
 * - **least squares, last hour**: an ordinary least-squares line through the last hour (wall clock) of the
 *   trail; the wall where it reaches 100. Same minimums as ours (3 readings, 8 minutes, a rising line).
 *
 * All three see the same trail (rollovers split, high-water mark applied), so the comparison is of the
 * forecasting, not of the bookkeeping. Definitions:
 *
 * - **Error** (scored samples: those in the last 2 h before a real crossing): |predicted − real crossing|, the
 *   prediction clipped to [now, reset] — a forecast past the reset, or none at all, says "not before the reset",
 *   so it scores as the reset. MAE and the median, in minutes; and the MAE over scored samples within 60 min
 *   after a change of model or kind of work (simulated traces only).
 * - **False alarm** (counted per sample): in a window that never reaches 100%, a sample at which the method
 *   forecasts the wall before the reset — one statusline render that would show a wall that never comes. Also
 *   reported: the windows with at least one.
 * - **Band holds** (ours only; the baselines have none): the share of scored samples whose band [early, late]
 *   contains the real crossing (no forecast counts as a miss), with the band's median width.
 *
 * Windows still open at the end of a trace are not scored.
 */

export type MethodName = 'sleds' | 'linearPace' | 'leastSquaresHour';
export const METHODS: readonly MethodName[] = ['sleds', 'linearPace', 'leastSquaresHour'];
const LABEL: Record<MethodName, string> = { sleds: 'sleds', linearPace: 'linear pace', leastSquaresHour: 'least squares 1h' };

export interface MethodScore {
  /** Samples in the last 2 h before a real crossing. */
  scored: number;
  maeMin: number;
  medianErrMin: number;
  /** Mean signed error, minutes: negative = the wall called too early. */
  biasMin: number;
  /** Over the scored samples at which all three methods give a forecast. */
  common: { n: number; maeMin: number; biasMin: number; afterChangeN: number; afterChangeMaeMin: number; falseAlarms: number };
  /** Scored samples within 60 min after a change of model or kind of work. */
  afterChange: { n: number; maeMin: number };
  /** Samples in never-crossing windows with a wall forecast before the reset. */
  falseAlarms: number;
  /** falseAlarms ÷ samples in never-crossing windows. */
  falseAlarmRate: number;
  /** Never-crossing windows with at least one false alarm. */
  falseAlarmWindows: number;
  /** Scored samples with no forecast at all. */
  noForecast: number;
  bandCoverage: number | null;
  bandMedianWidthMin: number | null;
  /** Misses of the band: the crossing came before its early end / after its late end (shares of scored). */
  bandMisses: { early: number; late: number } | null;
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
}

export interface ForecastAccuracyReport {
  seed: number;
  traces: number;
  days: number;
  recorded: number;
  windows: Record<string, { crossing: number; neverCrossing: number; incomplete: number }>;
  /** 'all', then per window name. */
  scores: Record<string, Record<MethodName, MethodScore>>;
  targets: {
    errorRatio: number;
    afterChangeRatio: number;
    falseAlarmRatio: number;
    bandCoverage: number;
    errorOk: boolean;
    afterChangeOk: boolean;
    falseAlarmsOk: boolean;
    bandOk: boolean;
  };
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
  for (const l of lines) {
    const s = traceToBarSample(l);
    const k = barKey(s);
    byBar.set(k, [...(byBar.get(k) ?? []), s]);
  }
  const lastT = Math.max(...lines.map((l) => l.t));
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
  signed: number[];
  commonErrs: number[];
  commonSigned: number[];
  commonChangeErrs: number[];
  commonAlarms: number;
  changeErrs: number[];
  alarms: number;
  quietSamples: number;
  alarmWindows: Set<WindowTruth>;
  none: number;
  covered: number;
  early: number;
  late: number;
  widths: number[];
}

const newAcc = (): Acc => ({ errs: [], signed: [], commonErrs: [], commonSigned: [], commonChangeErrs: [], commonAlarms: 0, changeErrs: [], alarms: 0, quietSamples: 0, alarmWindows: new Set(), none: 0, covered: 0, early: 0, late: 0, widths: [] });

function medianOf(xs: readonly number[]): number {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

const mean = (xs: readonly number[]): number => (xs.length === 0 ? Number.NaN : xs.reduce((a, b) => a + b, 0) / xs.length);

function scoreTrace(trace: AccuracyTrace, accs: Map<string, Record<MethodName, Acc>>, forecast?: Partial<ForecastOptions>): void {
  const ours: ReplayOut[] = replayTrace(trace.lines, forecast);
  const base = baselines(trace.lines);
  const changes = [...trace.changes].sort((a, b) => a - b);
  trace.lines.forEach((line, i) => {
    const w = trace.windows.find((x) => x.window === line.window && x.startMs <= line.t && line.t < x.resetsAtMs);
    if (!w || w.incomplete) return;
    const preds: Record<MethodName, Pred> = { sleds: { eta: ours[i]!.eta, band: ours[i]!.band }, ...base[i]! };
    for (const group of ['all', line.window]) {
      let acc = accs.get(group);
      if (!acc) accs.set(group, (acc = { sleds: newAcc(), linearPace: newAcc(), leastSquaresHour: newAcc() }));
      for (const m of METHODS) {
        const p = preds[m];
        const a = acc[m];
        if (w.crossMs === null) {
          a.quietSamples++;
          if (p.eta !== null && p.eta < w.resetsAtMs) {
            a.alarms++;
            if (METHODS.every((x) => preds[x].eta !== null)) a.commonAlarms++;
            a.alarmWindows.add(w);
          }
          continue;
        }
        if (line.t >= w.crossMs || line.t < w.crossMs - SCORED_BEFORE_MS) continue;
        const predicted = p.eta === null ? w.resetsAtMs : Math.min(w.resetsAtMs, Math.max(line.t, p.eta));
        const err = Math.abs(predicted - w.crossMs) / MIN;
        a.errs.push(err);
        a.signed.push((predicted - w.crossMs) / MIN);
        const afterChange = changes.some((c) => c <= line.t && line.t - c < AFTER_CHANGE_MS);
        if (afterChange) a.changeErrs.push(err);
        if (METHODS.every((x) => preds[x].eta !== null)) {
          a.commonErrs.push(err);
          a.commonSigned.push((predicted - w.crossMs) / MIN);
          if (afterChange) a.commonChangeErrs.push(err);
        }
        if (p.eta === null) a.none++;
        if (p.band) {
          if (p.band[0] <= w.crossMs && w.crossMs <= p.band[1]) a.covered++;
          else if (w.crossMs < p.band[0]) a.early++;
          else a.late++;
          a.widths.push((p.band[1] - p.band[0]) / MIN);
        }
      }
    }
  });
}

function finish(a: Acc, withBand: boolean): MethodScore {
  return {
    scored: a.errs.length,
    maeMin: mean(a.errs),
    medianErrMin: medianOf(a.errs),
    biasMin: mean(a.signed),
    common: { n: a.commonErrs.length, maeMin: mean(a.commonErrs), biasMin: mean(a.commonSigned), afterChangeN: a.commonChangeErrs.length, afterChangeMaeMin: mean(a.commonChangeErrs), falseAlarms: a.commonAlarms },
    afterChange: { n: a.changeErrs.length, maeMin: mean(a.changeErrs) },
    falseAlarms: a.alarms,
    falseAlarmRate: a.quietSamples ? a.alarms / a.quietSamples : 0,
    falseAlarmWindows: a.alarmWindows.size,
    noForecast: a.none,
    bandCoverage: withBand && a.errs.length ? a.covered / a.errs.length : null,
    bandMedianWidthMin: withBand && a.widths.length ? medianOf(a.widths) : null,
    bandMisses: withBand && a.errs.length ? { early: a.early / a.errs.length, late: a.late / a.errs.length } : null,
  };
}

export function runForecastAccuracy(opts: ForecastAccuracyOptions = {}): ForecastAccuracyReport {
  const seed = opts.seed ?? 1;
  const traces = opts.traces ?? 60;
  const days = opts.days ?? 8;
  const all: AccuracyTrace[] = simulateTraces({ seed, traces, days }).map((t) => ({ id: t.id, lines: t.samples.map((s): TraceSample => ({ ...s })), windows: t.windows, changes: t.changes }));
  for (const rec of opts.recorded ?? []) all.push({ id: rec.id, lines: rec.lines, windows: truthFromLines(rec.lines), changes: [] });
  const accs = new Map<string, Record<MethodName, Acc>>();
  const windows: ForecastAccuracyReport['windows'] = {};
  for (const trace of all) {
    scoreTrace(trace, accs, opts.forecast);
    for (const w of trace.windows) {
      const c = (windows[w.window] ??= { crossing: 0, neverCrossing: 0, incomplete: 0 });
      if (w.incomplete) c.incomplete++;
      else if (w.crossMs === null) c.neverCrossing++;
      else c.crossing++;
    }
  }
  const scores: ForecastAccuracyReport['scores'] = {};
  for (const [group, acc] of accs) scores[group] = { sleds: finish(acc.sleds, true), linearPace: finish(acc.linearPace, false), leastSquaresHour: finish(acc.leastSquaresHour, false) };
  const s = scores.all!;
  const errorRatio = s.sleds.maeMin / s.linearPace.maeMin;
  const afterChangeRatio = s.sleds.afterChange.maeMin / s.linearPace.afterChange.maeMin;
  const falseAlarmRatio = s.linearPace.falseAlarms ? s.sleds.falseAlarms / s.linearPace.falseAlarms : s.sleds.falseAlarms ? Infinity : 0;
  const bandCoverage = s.sleds.bandCoverage ?? 0;
  return {
    seed,
    traces,
    days,
    recorded: opts.recorded?.length ?? 0,
    windows,
    scores,
    targets: { errorRatio, afterChangeRatio, falseAlarmRatio, bandCoverage, errorOk: errorRatio <= 1, afterChangeOk: afterChangeRatio < 1, falseAlarmsOk: falseAlarmRatio <= 0.8, bandOk: bandCoverage >= 0.8 },
  };
}

const pad = (s: string, n: number): string => s.padEnd(n);
const num = (x: number, d = 1): string => (Number.isFinite(x) ? x.toFixed(d) : '–');

/** The report as the lines `npm run bench` prints. */
export function formatForecastAccuracy(r: ForecastAccuracyReport): string[] {
  const lines: string[] = [];
  const w = Object.entries(r.windows)
    .map(([name, c]) => `${name}: ${c.crossing} cross, ${c.neverCrossing} never do${c.incomplete ? `, ${c.incomplete} open at the end` : ''}`)
    .join('; ');
  lines.push(`forecast accuracy: ${r.traces} simulated seats × ${r.days} days (seed ${r.seed})${r.recorded ? ` + ${r.recorded} recorded traces` : ''}`);
  lines.push(`  windows — ${w}`);
  lines.push(`  ${pad('', 10)} ${pad('method', 17)} ${pad('MAE', 9)} ${pad('median', 9)} ${pad('MAE after a change', 20)} ${pad('false alarms', 22)} band holds`);
  for (const [group, byMethod] of Object.entries(r.scores)) {
    for (const m of METHODS) {
      const s = byMethod[m];
      const band = s.bandCoverage === null ? '' : `${num(100 * s.bandCoverage, 0)}% (median width ${num(s.bandMedianWidthMin ?? Number.NaN, 0)} min)`;
      lines.push(
        `  ${pad(m === 'sleds' ? group : '', 10)} ${pad(LABEL[m], 17)} ${pad(`${num(s.maeMin)} min`, 9)} ${pad(`${num(s.medianErrMin)} min`, 9)} ${pad(`${num(s.afterChange.maeMin)} min (n=${s.afterChange.n})`, 20)} ${pad(`${s.falseAlarms} (${num(100 * s.falseAlarmRate)}%), ${s.falseAlarmWindows} win`, 22)} ${band}`,
      );
    }
  }
  const t = r.targets;
  const ok = (b: boolean): string => (b ? 'met' : 'NOT met');
  lines.push(
    `  targets: MAE ≤ linear pace: ${num(t.errorRatio, 2)}× ${ok(t.errorOk)}; after a change < linear pace: ${num(t.afterChangeRatio, 2)}× ${ok(t.afterChangeOk)}; ` +
      `false alarms ≤ 0.8× linear pace: ${num(t.falseAlarmRatio, 2)}× ${ok(t.falseAlarmsOk)}; band holds ≥ 80%: ${num(100 * t.bandCoverage, 0)}% ${ok(t.bandOk)}`,
  );
  lines.push(`  (scored: samples in the last 2 h before a real crossing; false alarm: a sample in a window that never crosses forecasting a wall before its reset)`);
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

/** `node dist/bench/forecast-accuracy.js [--seed N] [--traces N] [--days N] [--trace file.jsonl …] [--json]` */
function main(argv: string[]): void {
  const opt = (name: string): string | undefined => {
    const i = argv.indexOf(name);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const recorded = argv.flatMap((a, i) => (a === '--trace' && argv[i + 1] ? [{ id: argv[i + 1]!, lines: readTrace(argv[i + 1]!) }] : []));
  const report = runForecastAccuracy({
    seed: Number(opt('--seed') ?? 1),
    traces: Number(opt('--traces') ?? 60),
    days: Number(opt('--days') ?? 8),
    recorded,
  });
  if (argv.includes('--json')) process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  else printForecastAccuracy(report);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) main(process.argv.slice(2));
