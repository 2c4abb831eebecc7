import type { Band } from '../estimate/band.js';
import { BATCH_PRICE_FACTOR } from '../exits/overnight.js';
import { formatShortTime } from '../exits/words.js';
import type { TaskState } from '../task/task.js';
import type { PickerHarness, PickerRow, PickerVerb, SeatKind } from './row.js';
import { formatUsdShort } from '../format.js';
import { bandText, fitText, headroomText, pickerText, wallLine, type WallLineInput } from './words.js';

/**
 * The picker's rows for one task, from what musher knows now: the bands the estimator gives, the live bars, the
 * forecast's dollars to each wall, the policy's worth values and overnight window, the roster. Pure: time and every
 * figure come in; the same input gives the same rows.
 */

export interface PickerBar {
  provider: string;
  window: string;
  /** "5-hour", "weekly Opus". */
  name: string;
  usedPct: number;
  resetsAtMs: number | null;
  /** API-equivalent dollars until this bar's wall (the forecast's calibration); null without a fit. */
  dollarsToWallMicros: number | null;
  /** The forecast crossing, when it comes before the reset; null otherwise. */
  crossesAtMs: number | null;
}

export interface PickerInput {
  nowMs: number;
  timeZone: string;
  task: { id: string; title: string; worth: string | null; state: TaskState };
  /** The policy's value of the task's worth level (`worth_values`); null when it names none. */
  worthValueMicros: number | null;
  /** The harness and model the task runs on now (its live session), if any. */
  running: { harness: PickerHarness; model: string | null; sessionId: string } | null;
  /** A session of the task at a wall: a teammate can take it over by a hand-off. */
  atWall: { sessionId: string; wallId: string } | null;
  /** Per harness (its id, display name and plan provider, from its adapter), the models offered (start model first, then cheaper steps). */
  ladders: Array<{ harness: PickerHarness; name: string; provider: string; models: string[] }>;
  /** The estimator's band for the task on a harness and model. */
  bandOf(harness: PickerHarness, model: string): Band | null;
  /** Live bars (still in their window). */
  bars: PickerBar[];
  /** The policy's next overnight window; null when it has none. */
  overnight: { startMs: number; endMs: number } | null;
  /** A platform key per provider: the batch tier runs on it. */
  keyFor: Readonly<Record<string, boolean>>;
  /** The roster's teammates other than this seat. */
  teammates: Array<{ handle: string; name: string }>;
  /** Whether this machine can seal and send a hand-off. */
  handoffReady: boolean;
  /** Why a harness cannot run on this machine (not installed…); absent: it can. Its rows are shown with no verb. */
  cannotRun?: Partial<Record<PickerHarness, string>>;
}

export interface PickerView {
  rows: PickerRow[];
  held: string | null;
  wallLine: string | null;
  text: string;
}

export const HELD = 'not worth doing until someone states a worth';

/** A model-specific weekly bar (seven_day_opus) binds only that family's models; the others bind every model of the provider. */
export function barApplies(bar: Pick<PickerBar, 'provider' | 'window'>, provider: string, model: string | null): boolean {
  if (bar.provider !== provider) return false;
  const family = /^seven_day_(.+)$/.exec(bar.window)?.[1];
  if (!family) return true;
  return model !== null && model.toLowerCase().includes(family.toLowerCase());
}

/** The bar that binds a row: the fullest of those that apply. */
function bindingBar(bars: readonly PickerBar[], provider: string, model: string | null): PickerBar | null {
  let best: PickerBar | null = null;
  for (const b of bars) if (barApplies(b, provider, model) && (best === null || b.usedPct > best.usedPct)) best = b;
  return best;
}

/** The fewest dollars to any wall that applies: the one the work would meet first. */
function nearestWall(bars: readonly PickerBar[], provider: string, model: string | null): PickerBar | null {
  let best: PickerBar | null = null;
  for (const b of bars) {
    if (!barApplies(b, provider, model) || b.dollarsToWallMicros === null) continue;
    if (best === null || b.dollarsToWallMicros < best.dollarsToWallMicros!) best = b;
  }
  return best;
}

/** worth ÷ the band's high end, to two places; null without both. */
export function worthRatio(worthMicros: number | null, band: Band | null): number | null {
  if (worthMicros === null || !band) return null;
  if (band.highMicros === 0) return Infinity;
  return Math.round((worthMicros / band.highMicros) * 100) / 100;
}

/** The policy's gate: a row whose band may cost more than the task is worth is not offered. Null: it passes. */
export function gateReason(worth: string | null, worthMicros: number | null, band: Band | null): string | null {
  const ratio = worthRatio(worthMicros, band);
  if (ratio === null || ratio >= 1) return null;
  return `may cost up to ${formatUsdShort(band!.highMicros)}, more than ${worth ?? 'its'} worth of ${formatUsdShort(worthMicros!)}`;
}

export function scaleBandMoney(band: Band | null, factor: number): Band | null {
  return band ? { ...band, lowMicros: Math.round(band.lowMicros * factor), highMicros: Math.round(band.highMicros * factor) } : null;
}

interface Draft {
  kind: SeatKind;
  seat: string;
  harness: PickerHarness | null;
  harnessName?: string;
  model: string | null;
  band: Band | null;
  bar: PickerBar | null | 'none';
  wallBar: PickerBar | null;
  verb: PickerVerb;
  reason: string | null;
}

export function buildPicker(input: PickerInput): PickerView {
  const { task, nowMs, timeZone } = input;
  const held = task.worth === null && task.state !== 'done' ? HELD : null;
  const when = (ms: number): string => formatShortTime(ms, timeZone);
  const drafts: Draft[] = [];
  /** Reasons that close every row, in order: the task's state, then the worth. */
  const closed = task.state === 'done' ? 'the task is done' : held ? `held: ${HELD}` : null;
  const gate = (band: Band | null): string | null => gateReason(task.worth, input.worthValueMicros, band);

  for (const { harness, name: harnessName, provider, models } of input.ladders) {
    for (const model of models) {
      const band = input.bandOf(harness, model);
      const bar = bindingBar(input.bars, provider, model);
      const wallBar = nearestWall(input.bars, provider, model);
      let verb: PickerVerb = input.running ? 'Switch' : 'Dispatch';
      let reason: string | null = null;
      const same = input.running && input.running.harness === harness && input.running.model === model;
      const why =
        closed ??
        input.cannotRun?.[harness] ??
        (bar && bar.usedPct >= 100 ? `the ${bar.name} bar is full${bar.resetsAtMs !== null ? ` until ${when(bar.resetsAtMs)}` : ''}` : null) ??
        gate(band) ??
        (same ? `it runs here now (session ${input.running!.sessionId.slice(0, 8)})` : null);
      if (why) {
        verb = '—';
        reason = why;
      }
      drafts.push({ kind: 'here', seat: 'you', harness, harnessName, model, band, bar: bar ?? null, wallBar, verb, reason });
    }
  }

  // A harness's plan provider, as its ladder says ('' for one without a ladder: no bars, no key are its).
  const providerOf = (harness: string): string => input.ladders.find((l) => l.harness === harness)?.provider ?? '';

  // The overnight batch tier runs the task's first model on the platform key, at half price, in the policy's window.
  const first = input.running ?? (input.ladders[0] ? { harness: input.ladders[0].harness, model: input.ladders[0].models[0] ?? null } : null);
  const baseBand = first?.model ? input.bandOf(first.harness, first.model) : null;
  if (first) {
    const band = scaleBandMoney(baseBand, BATCH_PRICE_FACTOR);
    const provider = providerOf(first.harness);
    const o = input.overnight;
    const why =
      closed ??
      (o === null ? 'no overnight window in the policy' : null) ??
      (!input.keyFor[provider] ? `no platform key for ${provider}: the batch tier runs on it ('sleds key set ${provider}')` : null) ??
      gate(band);
    drafts.push({
      kind: 'overnight',
      seat: 'overnight batch',
      harness: first.harness,
      model: first.model,
      band,
      bar: 'none',
      wallBar: null,
      verb: why ? '—' : 'Queue',
      reason: why ?? (o ? `½ price · runs ${when(o.startMs)}–${when(o.endMs)} · lands by ${when(o.endMs)}` : null),
    });
  }

  for (const t of input.teammates) {
    const why = closed ?? gate(baseBand) ?? (input.atWall && !input.handoffReady ? "hand-offs are not set up on this machine — 'sleds keys init'" : null);
    const verb: PickerVerb = why ? '—' : input.atWall ? 'Hand off' : 'Offer';
    drafts.push({
      kind: 'teammate',
      seat: t.handle,
      harness: first?.harness ?? null,
      model: first?.model ?? null,
      band: baseBand,
      bar: 'none',
      wallBar: null,
      verb,
      reason: why ?? (verb === 'Offer' ? 'not at a wall: ask them' : `${t.name} picks it up with /sled pickup`),
    });
  }

  const personWhy = closed ?? gate(baseBand);
  drafts.push({
    kind: 'person',
    seat: 'a person with the agent',
    harness: first?.harness ?? null,
    model: first?.model ?? null,
    band: baseBand,
    bar: 'none',
    wallBar: null,
    verb: personWhy ? '—' : 'Offer',
    reason: personWhy ?? 'a person drives the agent: post it to the team',
  });

  const rows: PickerRow[] = drafts.map((d, index) => {
    const headroomPct = d.bar === 'none' || d.bar === null ? null : Math.max(0, 100 - d.bar.usedPct);
    const headroom =
      d.kind === 'overnight' ? 'off the bar (platform key)' : d.kind === 'teammate' ? 'their own bars' : d.kind === 'person' ? 'a person’s time' : headroomPct !== null ? headroomText(headroomPct) : 'no bar seen yet';
    const dollarsToWall = d.wallBar?.dollarsToWallMicros ?? null;
    const crosses = d.band && dollarsToWall !== null ? dollarsToWall < d.band.highMicros : null;
    return {
      index: index + 1, // numbered from 1, as people count rows
      kind: d.kind,
      seat: d.seat,
      harness: d.harness,
      ...(d.harnessName ? { harnessName: d.harnessName } : {}),
      model: d.model,
      band: d.band,
      bandText: bandText(d.band),
      fit: fitText(d.band),
      headroomPct,
      headroom,
      crosses,
      wall: crosses === null ? null : crosses ? 'crosses before it lands' : 'lands before the wall',
      worthRatio: worthRatio(input.worthValueMicros, d.band),
      verb: d.verb,
      reason: d.reason,
    };
  });

  // The wall line speaks for where the task would start: its running harness, else the first row's.
  const startProvider = first ? providerOf(first.harness) : null;
  const fullest = startProvider ? bindingBar(input.bars, startProvider, first?.model ?? null) : null;
  const lineBar = fullest && fullest.usedPct >= 100 ? fullest : startProvider ? (nearestWall(input.bars, startProvider, first?.model ?? null) ?? fullest) : null;
  const line = lineBar ? wallLine(lineInput(lineBar, nowMs, timeZone)) : null;
  return { rows, held, wallLine: line, text: pickerText({ task, worthValueMicros: input.worthValueMicros, rows, held, wallLine: line }) };
}

function lineInput(b: PickerBar, nowMs: number, timeZone: string): WallLineInput {
  return { nowMs, timeZone, name: b.name, usedPct: b.usedPct, resetsAtMs: b.resetsAtMs, dollarsToWallMicros: b.dollarsToWallMicros, crossesAtMs: b.crossesAtMs };
}
