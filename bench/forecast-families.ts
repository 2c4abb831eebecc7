import { pathToFileURL } from 'node:url';
import type { ForecastOptions } from '../core/forecast/forecast.js';
import type { TraceSample } from '../core/forecast/replay.js';
import { runForecastAccuracy, scoreAccuracy, type ForecastAccuracyReport, type WindowTargets } from './forecast-accuracy.js';
import { familyTraces, TUNING_FAMILIES, type TraceFamily } from './trace-families.js';
import { HELD_OUT_FAMILY } from './trace-held-out.js';

/**
 * The forecast against linear pace on every trace family and seed: the original simulator (bench/trace-sim.ts,
 * drifting rates, what the forecaster was first tuned on), the tuning families (bench/trace-families.ts) and the
 * held-out family (bench/trace-held-out.ts, never used for tuning: this is the only file that imports it).
 *
 * The goal, per family, bar and seed: crossing-time error ≤ 1.0× linear pace's, false alarms ≤ 0.8× pace's, the
 * band holding the crossing ≥ 80% of the time (bench/forecast-accuracy.ts defines each figure).
 *
 * Alone: `npx tsx bench/forecast-families.ts [--seeds 1-5] [--traces 24] [--days 5] [--families drift,switch,bursts]
 * [--held-out] [--json]` (without --held-out the held-out family is not run: that is the tuning loop).
 */

export type FamilyRole = 'original' | 'tuning' | 'held-out';

export interface FamilySeed {
  seed: number;
  report: ForecastAccuracyReport;
}

export interface FamilyRun {
  family: string;
  role: FamilyRole;
  about: string;
  seeds: FamilySeed[];
}

export interface FamiliesOptions {
  seeds: readonly number[];
  /** Seats per seed (default 24; the original simulator 60, as in its own bench). */
  traces?: number;
  /** Days per seat (default 5; the original simulator 8). */
  days?: number;
  /** Which families (default: all but the held-out one). */
  families?: readonly string[];
  /** Run the held-out family too. */
  heldOut?: boolean;
  forecast?: Partial<ForecastOptions>;
  stride?: number;
}

const ORIGINAL = { name: 'drift', about: 'the original simulator: regimes that hold for bursts, drifting rates (tuned on)' };

function runFamily(family: TraceFamily, seed: number, o: FamiliesOptions): ForecastAccuracyReport {
  const traces = o.traces ?? 24;
  const days = o.days ?? 5;
  const all = familyTraces(family, seed, traces, days).map((t) => ({ id: t.id, lines: t.samples.map((s): TraceSample => ({ ...s })), windows: t.windows, changes: t.changes }));
  return scoreAccuracy(all, { seed, traces, days, forecast: o.forecast, stride: o.stride });
}

export function runFamilies(o: FamiliesOptions): FamilyRun[] {
  const wanted = (name: string): boolean => !o.families || o.families.includes(name);
  const runs: FamilyRun[] = [];
  if (wanted(ORIGINAL.name)) {
    const seeds = o.seeds.map((seed) => ({ seed, report: runForecastAccuracy({ seed, traces: o.traces === undefined ? 60 : o.traces, days: o.days === undefined ? 8 : o.days, forecast: o.forecast, stride: o.stride }) }));
    runs.push({ family: ORIGINAL.name, role: 'original', about: ORIGINAL.about, seeds });
  }
  for (const f of TUNING_FAMILIES) if (wanted(f.name)) runs.push({ family: f.name, role: 'tuning', about: f.about, seeds: o.seeds.map((seed) => ({ seed, report: runFamily(f, seed, o) })) });
  if (o.heldOut) runs.push({ family: HELD_OUT_FAMILY.name, role: 'held-out', about: HELD_OUT_FAMILY.about, seeds: o.seeds.map((seed) => ({ seed, report: runFamily(HELD_OUT_FAMILY, seed, o) })) });
  return runs;
}

/** The goal for one bar of one seed. */
export function goalMet(t: WindowTargets): boolean {
  return t.errorRatio <= 1 && t.falseAlarmRatio <= 0.8 && t.bandCoverage >= 0.8;
}

const num = (x: number, d = 1): string => (Number.isFinite(x) ? x.toFixed(d) : '–');

const ROLE: Record<FamilyRole, string> = { original: 'tuned on', tuning: 'tuned on', 'held-out': 'HELD OUT' };

/** Every family, bar and seed: the three figures, their ratio to pace, and whether the goal is met. */
export function formatFamilies(runs: readonly FamilyRun[]): string[] {
  const lines: string[] = [];
  lines.push('forecast by trace family (sleds vs linear pace; scored over the last 2 h before each wall): MAE min, false-alarm renders, band holds');
  const cols = [8, 9, 10, 5, 22, 24, 11, 0];
  const row = (cells: string[]): string => `  ${cells.map((c, i) => (cols[i] ? c.padEnd(cols[i]!) : c)).join(' ')}`.trimEnd();
  lines.push(row(['family', 'role', 'bar', 'seed', 'MAE sleds/pace', 'false alarms sleds/pace', 'band holds', 'goal']));
  const verdicts: string[] = [];
  for (const run of runs) {
    let all = true;
    for (const { seed, report } of run.seeds) {
      for (const [bar, t] of Object.entries(report.targets)) {
        const s = report.scores[bar]!;
        const ok = goalMet(t);
        all &&= ok;
        lines.push(
          row([
            run.family,
            ROLE[run.role],
            bar,
            String(seed),
            `${num(s.sleds.maeMin)}/${num(s.linearPace.maeMin)} = ${num(t.errorRatio, 2)}×`,
            `${s.sleds.falseAlarms.samples}/${s.linearPace.falseAlarms.samples} = ${num(t.falseAlarmRatio, 2)}×`,
            `${num(100 * t.bandCoverage, 0)}%`,
            ok ? 'met' : 'NOT met',
          ]),
        );
      }
    }
    verdicts.push(`${run.family} (${ROLE[run.role]}): ${all ? 'met on every seed' : 'NOT met on every seed'}`);
  }
  for (const run of runs) lines.push(`  ${run.family}: ${run.about}`);
  lines.push(`  goal (every bar, every seed): MAE ≤ 1.0×, false alarms ≤ 0.8×, band ≥ 80% — ${verdicts.join('; ')}`);
  return lines;
}

function main(argv: string[]): void {
  const opt = (name: string): string | undefined => {
    const i = argv.indexOf(name);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const range = (opt('--seeds') ?? '1-5').split('-').map(Number);
  const seeds = Array.from({ length: (range[1] ?? range[0]!) - range[0]! + 1 }, (_, i) => range[0]! + i);
  const traces = opt('--traces');
  const days = opt('--days');
  const families = opt('--families')?.split(',');
  const stride = opt('--stride');
  const runs = runFamilies({
    seeds,
    traces: traces === undefined ? undefined : Number(traces),
    days: days === undefined ? undefined : Number(days),
    families,
    heldOut: argv.includes('--held-out'),
    stride: stride === undefined ? undefined : Number(stride),
  });
  if (argv.includes('--json')) {
    const out = runs.map((r) => ({ family: r.family, role: r.role, seeds: r.seeds.map((s) => ({ seed: s.seed, targets: s.report.targets, goalMet: Object.values(s.report.targets).every(goalMet) })) }));
    process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
    return;
  }
  for (const l of formatFamilies(runs)) process.stdout.write(`${l}\n`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) main(process.argv.slice(2));
