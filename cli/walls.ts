import { harnessOfProvider } from '../harnesses/registry.js';
import { formatClock, formatReset, formatUsd } from '../core/format.js';
import type { ForecastReply, WallForecastRow } from '../protocol/schemas.js';
import { askMusher, reportRefusal } from './musher-call.js';
import { fail } from './fail.js';

/** `sleds walls [--json] [--horizon 24h]`: when each bar is forecast to hit 100%, and how many dollars away that is. */

function parseHorizon(text: string | null): number | null {
  if (text === null) return 24 * 3_600_000;
  const m = /^(\d+(?:\.\d+)?)\s*(m|h|d)$/.exec(text.trim());
  if (!m) return null;
  return Number(m[1]) * { m: 60_000, h: 3_600_000, d: 86_400_000 }[m[2] as 'm' | 'h' | 'd'];
}

export interface WallRow {
  provider: string;
  /** Whose bar: two accounts' walls are two walls. */
  account: string;
  accountLabel: string | null;
  window: string;
  name: string;
  usedPct: number;
  resetsAt: number | null;
  /** When the bar is forecast to hit 100% within the horizon and before its reset; else null (see `why`). */
  wallAt: number | null;
  band: [number, number] | null;
  dollarsToWallMicros: number | null;
  dollarsToWallBand: [number, number] | null;
  why: string | null;
}

export function wallRows(snapshot: ForecastReply, horizonMs: number): WallRow[] {
  return snapshot.walls.map((w: WallForecastRow) => {
    const f = w.forecast;
    let wallAt: number | null = null;
    let why: string | null = null;
    if (f.kind === 'none') why = f.message;
    else if (!f.beforeReset) why = 'resets before it fills';
    else if (f.etaMs > snapshot.at + horizonMs) why = `no wall within ${Math.round(horizonMs / 3_600_000)} h`;
    else wallAt = f.etaMs;
    return {
      provider: w.provider,
      account: w.account,
      accountLabel: w.accountLabel,
      window: w.window,
      name: w.name,
      usedPct: w.usedPct,
      resetsAt: w.resetsAt,
      wallAt,
      band: wallAt !== null && f.kind === 'eta' ? f.band : null,
      dollarsToWallMicros: w.dollarsToWallMicros,
      dollarsToWallBand: w.dollarsToWallBand,
      why,
    };
  });
}

export async function runWalls(args: string[], json: boolean): Promise<number> {
  const i = args.indexOf('--horizon');
  const horizonMs = parseHorizon(i >= 0 ? (args[i + 1] ?? '') : null);
  if (horizonMs === null) {
    return fail(`--horizon takes a span like 90m, 24h or 7d`, 2);
  }
  const res = await askMusher('walls', {});
  if (!res) return 1;
  if (!res.ok) return reportRefusal(res, json);
  const snapshot = res.body;
  const rows = wallRows(snapshot, horizonMs);
  if (json) {
    process.stdout.write(`${JSON.stringify({ now: snapshot.at, horizonMs, binding: snapshot.binding, walls: rows }, null, 2)}\n`);
    return 0;
  }
  if (rows.length === 0) {
    process.stdout.write('No bars yet, so no walls to forecast: they arrive with the first reply of a plan session.\n');
    return 0;
  }
  const several = new Set(rows.map((r) => r.account)).size > 1;
  for (const r of rows) {
    const whose = several ? ` (${r.accountLabel ?? r.account})` : '';
    const who = `${harnessOfProvider(r.provider)?.binary.name ?? r.provider} ${r.name}${whose}`.padEnd(20);
    const reset = r.resetsAt !== null ? `resets ${formatReset(r.resetsAt, snapshot.at)}` : 'reset unknown';
    const more = r.dollarsToWallMicros !== null ? ` · ${formatUsd(r.dollarsToWallMicros)} more` : '';
    if (r.wallAt !== null) {
      const band = r.band ? ` (${formatClock(r.band[0])}–${formatClock(r.band[1])})` : '';
      process.stdout.write(`${who} ${`${r.usedPct}%`.padStart(6)}  wall ${formatClock(r.wallAt)}${band}${more} · ${reset}\n`);
    } else {
      process.stdout.write(`${who} ${`${r.usedPct}%`.padStart(6)}  ${r.why}${more} · ${reset}\n`);
    }
  }
  return 0;
}
