import { formatUsdShort } from '../format.js';
import { formatFit, formatMinutesRange, formatMoneyRange } from '../estimate/format.js';
import type { Band } from '../estimate/band.js';
import { formatWhen, shortModel } from '../exits/words.js';
import type { PickerRow } from './row.js';

/** The picker's words: bands, headroom, the wall line and the paragraph. Pure; times in the zone passed in. */

/** "$4–11 · 20–55 min", "$2–6 · 10–30 min (prior)", "no band yet": the estimate's own ranges. */
export function bandText(band: Band | null): string {
  if (!band) return 'no band yet';
  return `${formatMoneyRange(band.lowMicros, band.highMicros)} · ${formatMinutesRange(band.lowMinutes, band.highMinutes)}${band.basis === 'prior' ? ' (prior)' : ''}`;
}

/** "2 of 4 in band", "81% in band" (the estimate's fit, said in full for a row), or null when none had a band. */
export function fitText(band: Band | null): string | null {
  const fit = formatFit(band?.fit ?? null);
  return fit?.endsWith('%') ? `${fit} in band` : fit;
}

/** "62% of the bar left". */
export function headroomText(pct: number): string {
  return `${Math.max(0, Math.round(pct))}% of the bar left`;
}

/** "Claude Code · sonnet 5.5", "overnight batch · opus 5.5", "dana", "a person with the agent". */
export function rowTitle(r: Pick<PickerRow, 'kind' | 'seat' | 'harness' | 'harnessName' | 'model'>): string {
  const model = r.model ? shortModel(r.model) : null;
  if (r.kind === 'here') return [(r.harnessName ?? r.harness) || r.seat, model].filter(Boolean).join(' · ');
  if (r.kind === 'overnight') return ['overnight batch', model].filter(Boolean).join(' · ');
  return r.seat;
}

export interface WallLineInput {
  nowMs: number;
  timeZone: string;
  /** The wall's name ("5-hour"). */
  name: string;
  usedPct: number;
  resetsAtMs: number | null;
  dollarsToWallMicros: number | null;
  /** The forecast crossing, when it comes before the reset. */
  crossesAtMs: number | null;
}

/**
 * The wall line before starting: "$6 more; you will cross at 3:40 pm EST". At the wall: when it resets. Without a
 * forecast crossing: the dollars left, and that the window resets first. Null when there is nothing to say.
 */
export function wallLine(w: WallLineInput): string | null {
  const when = (ms: number): string => formatWhen(ms, w.nowMs, w.timeZone);
  if (w.usedPct >= 100) return `the ${w.name} bar is full${w.resetsAtMs !== null ? `; it resets at ${when(w.resetsAtMs)}` : ''}`;
  if (w.dollarsToWallMicros !== null && w.crossesAtMs !== null) return `${formatUsdShort(w.dollarsToWallMicros)} more; you will cross at ${when(w.crossesAtMs)}`;
  if (w.dollarsToWallMicros !== null) return `${formatUsdShort(w.dollarsToWallMicros)} more to the ${w.name} wall; at this pace it resets first`;
  if (w.crossesAtMs !== null) return `you will cross the ${w.name} wall at ${when(w.crossesAtMs)}`;
  return null;
}

/** One row in a sentence: "Claude Code · sonnet 5.5: $2–6 · 20–55 min, 62% of the bar left, lands before the wall → Dispatch". */
export function rowSentence(r: PickerRow): string {
  const parts = [r.bandText];
  if (r.fit) parts.push(r.fit);
  if (r.headroomPct !== null) parts.push(r.headroom);
  if (r.wall) parts.push(r.wall);
  const verb = r.verb === '—' ? `— ${r.reason ?? 'not offered'}` : `→ ${r.verb}${r.reason ? ` (${r.reason})` : ''}`;
  return `${rowTitle(r)}: ${parts.join(', ')} ${verb}`;
}

/**
 * The rows worth naming first: open ones, landing before the wall, measured bands before priors, the cheapest
 * measured band first. A prior says nothing of whether a cheaper model would finish the task, so prior rows keep
 * the list's order (the task's own model first), not the cheapest.
 */
export function bestRows(rows: readonly PickerRow[], n: number): PickerRow[] {
  const score = (r: PickerRow): [number, number, number] => [
    r.crosses === true ? 1 : 0,
    r.band?.basis === 'receipts' ? 0 : r.band ? 1 : 2,
    r.band?.basis === 'receipts' ? r.band.highMicros : r.index,
  ];
  return rows
    .filter((r) => r.verb !== '—')
    .slice()
    .sort((a, b) => {
      const x = score(a);
      const y = score(b);
      return x[0] - y[0] || x[1] - y[1] || x[2] - y[2] || a.index - b.index;
    })
    .slice(0, n);
}

/**
 * A short paragraph a person can read and a model can use: the task, held or not, the best rows, and the wall line.
 */
export function pickerText(p: { task: { id: string; title: string; worth: string | null }; worthValueMicros: number | null; rows: readonly PickerRow[]; held: string | null; wallLine: string | null }): string {
  const worth = p.task.worth ? `worth ${p.task.worth}${p.worthValueMicros !== null ? ` (${formatUsdShort(p.worthValueMicros)})` : ''}` : 'no worth stated';
  const out = [`Task ${p.task.id} "${p.task.title}", ${worth}.`];
  if (p.held) {
    out.push(`Held: ${p.held}.`);
    const sized = p.rows.find((r) => r.band);
    if (sized) out.push(`Sized: ${rowTitle(sized)} ${sized.bandText}.`);
  } else {
    const best = bestRows(p.rows, 3);
    if (best.length === 0) out.push(`No seat is open: ${p.rows.slice(0, 2).map((r) => `${rowTitle(r)} — ${r.reason ?? 'not offered'}`).join('; ')}.`);
    // Each named by its row, so a model (MCP) can take it: dispatch {row}.
    else out.push(`Best: ${best.map((r) => `row ${r.index}, ${rowSentence(r)}`).join('; ')}.`);
  }
  if (p.wallLine) out.push(`Wall: ${p.wallLine}.`);
  return out.join(' ');
}

/** A picker row's reason when its harness (its display name, its binary's) is not on this machine. */
export function notInstalledWords(name: string, bin: string): string {
  return `${name} is not installed here (not on PATH, nor binaries.${bin} in config.yml)`;
}

/** A picker row's reason when its harness is installed but, by its own word, not logged in; `hint`: how to log in. */
export function notLoggedInWords(name: string, hint: string | null): string {
  return hint ? `${name} is not logged in here — ${hint}` : `${name} is not logged in here`;
}
