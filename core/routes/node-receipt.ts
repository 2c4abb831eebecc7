import { formatUsd } from '../format.js';
import type { Band } from '../estimate/band.js';
import type { PriceTable } from '../price-table.js';
import { priceUsage, SYNTHETIC_MODEL } from '../pricing.js';
import { bandWord, UNSIGNED_NOTE } from '../receipt/line.js';
import type { ReceiptBody } from '../receipt/receipt.js';
import { ZERO_TOKEN_COUNTS } from '../usage.js';
import type { RouteBand } from './band.js';
import { NodeReceipt } from './route-line.js';

/**
 * A route node's receipt (issue 14 § 12), the pure half: the tokens of every run of the node (each attempt's stream)
 * summed per model without counting any twice, priced with the project's price table (a model it has no price for
 * is named, never counted as $0), and the body of the signed receipt: actual minutes (the run's runtime, not its
 * waits) and dollars against the node's band, with its seat, harness and model. Signing and reading the streams are
 * musher's (musher/engine/compose-engine.ts). Pure.
 */

/** What a receipt reads of a run's stream (harnesses/events.ts HarnessEvent, structurally: core imports no harness). */
export interface StreamEvent {
  kind: string;
  sessionId?: string | null;
  model?: string | null;
  inputTokens?: number;
  outputTokens?: number;
  cacheReadTokens?: number;
  cacheWriteTokens?: number;
  /** The session's running total so far (Codex's turn.completed), not one reply's tokens. */
  sessionTotal?: boolean;
  /** turn_completed: false when the harness said the turn failed. */
  ok?: boolean;
}

/** One run of a node (`<runsDir>/<route>/<node>/<attempt>/`): its number and its stream's events, in order. */
export interface RunStream {
  attempt: number;
  events: readonly StreamEvent[];
}

export interface ModelTokens {
  model: string;
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
}

/** A stream that named no model, on a node that named none either: kept (and unpriced), never dropped. */
export const UNNAMED_MODEL = 'an unnamed model';

const count = (n: number | undefined): number => (typeof n === 'number' && Number.isSafeInteger(n) && n > 0 ? n : 0);
const tokensOf = (e: StreamEvent) => ({ inputTokens: count(e.inputTokens), outputTokens: count(e.outputTokens), cacheReadTokens: count(e.cacheReadTokens), cacheWriteTokens: count(e.cacheWriteTokens) });

/**
 * The tokens of every run, per model, each counted once. A run's model is the one its stream named (turn_started),
 * else the node's. Per-reply usage is added up; a session's running totals (a resumed Codex session reports its whole
 * history again) are not: the last one of each session stands for all of it, across the attempts that resumed it.
 * (Claude's adapter already reads usage from the stream's `result` only, not from the per-message records it sums.)
 */
export function usageByModel(runs: readonly RunStream[], nodeModel: string | null): ModelTokens[] {
  const sums = new Map<string, ModelTokens>();
  const add = (model: string, t: Omit<ModelTokens, 'model'>) => {
    const s = sums.get(model) ?? { model, inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
    s.inputTokens += t.inputTokens;
    s.outputTokens += t.outputTokens;
    s.cacheReadTokens += t.cacheReadTokens;
    s.cacheWriteTokens += t.cacheWriteTokens;
    sums.set(model, s);
  };
  const lastTotal = new Map<string, { model: string; tokens: Omit<ModelTokens, 'model'> }>();
  for (const run of [...runs].sort((a, b) => a.attempt - b.attempt)) {
    const named = run.events.find((e) => e.kind === 'turn_started' && typeof e.model === 'string' && e.model.length > 0)?.model ?? null;
    const model = named ?? nodeModel ?? UNNAMED_MODEL;
    let session = `run ${run.attempt}`;
    for (const e of run.events) {
      if ((e.kind === 'turn_started' || e.kind === 'turn_completed') && typeof e.sessionId === 'string' && e.sessionId.length > 0) session = e.sessionId;
      if (e.kind !== 'usage') continue;
      if (e.sessionTotal === true) lastTotal.set(session, { model, tokens: tokensOf(e) });
      else add(model, tokensOf(e));
    }
  }
  for (const { model, tokens } of lastTotal.values()) add(model, tokens);
  return [...sums.values()].sort((a, b) => a.model.localeCompare(b.model));
}

export interface PricedUsage {
  /** The priced models' API-equivalent dollars, in micro-dollars. */
  costMicros: number;
  /** Every model that used tokens (sorted). */
  models: string[];
  /** The models the price table has no price for: their tokens are not in costMicros, and the receipt says so. */
  unpriced: string[];
}

/** Each model's tokens priced as one record at `atMs` (the table is effective-dated); cache writes at the 5-minute rate. */
export function priceByModel(table: PriceTable, usage: readonly ModelTokens[], atMs: number, tier: 'standard' | 'batch' = 'standard'): PricedUsage {
  let costMicros = 0;
  const models: string[] = [];
  const unpriced: string[] = [];
  for (const u of usage) {
    if (u.inputTokens + u.outputTokens + u.cacheReadTokens + u.cacheWriteTokens === 0) continue;
    if (u.model === SYNTHETIC_MODEL) continue;
    models.push(u.model);
    const cost = priceUsage(table, {
      ...ZERO_TOKEN_COUNTS,
      inputTokens: u.inputTokens,
      outputTokens: u.outputTokens,
      cacheReadTokens: u.cacheReadTokens,
      cacheWrite5mTokens: u.cacheWriteTokens,
      // The half-price tier halves every token's price (core/pricing.ts), as the gateway meters it.
      serviceTier: tier === 'batch' ? 'batch' : null,
      inferenceGeo: null,
      source: 'engine-run',
      dedupKey: `engine:${u.model}`,
      sessionId: '',
      model: u.model,
      timestampMs: atMs,
      cwd: null,
    });
    if (cost.priced) costMicros += cost.costMicros;
    else unpriced.push(u.model);
  }
  return { costMicros, models: models.sort(), unpriced: unpriced.sort() };
}

/**
 * The models of the runs that finished their turn without reporting any usage (a harness whose stream carries no
 * tokens, as Cursor's agent's does not): their cost is not known, so the receipt names them rather than show $0.
 */
export function unreportedModels(runs: readonly RunStream[], nodeModel: string | null): string[] {
  const out = new Set<string>();
  for (const run of runs) {
    const finished = run.events.some((e) => e.kind === 'turn_completed' && e.ok !== false);
    if (!finished || run.events.some((e) => e.kind === 'usage')) continue;
    const named = run.events.find((e) => e.kind === 'turn_started' && typeof e.model === 'string' && e.model.length > 0)?.model ?? null;
    out.add(named ?? nodeModel ?? UNNAMED_MODEL);
  }
  return [...out].sort();
}

/** Every run of a node priced: its usage per model (usageByModel, priceByModel), and the models it could not price or count. */
export function priceRuns(table: PriceTable, runs: readonly RunStream[], nodeModel: string | null, atMs: number, tier: 'standard' | 'batch' = 'standard'): PricedUsage {
  const priced = priceByModel(table, usageByModel(runs, nodeModel), atMs, tier);
  const unreported = unreportedModels(runs, nodeModel);
  return {
    costMicros: priced.costMicros,
    models: [...new Set([...priced.models, ...unreported])].sort(),
    unpriced: [...new Set([...priced.unpriced, ...unreported])].sort(),
  };
}

/** A node's band (dollars) as a receipt's band (micro-dollars); a band that stands on no receipt is a prior. */
export function receiptBand(b: RouteBand | null): Band | null {
  if (!b) return null;
  return {
    lowMicros: Math.max(0, Math.round(b.lowUsd * 1e6)),
    highMicros: Math.max(0, Math.round(b.highUsd * 1e6)),
    lowMinutes: Math.max(0, b.lowMin),
    highMinutes: Math.max(0, b.highMin),
    fit: null,
    basis: b.confidence > 0 ? 'receipts' : 'prior',
    n: 0,
  };
}

/** Both dollars and (whole) minutes inside the node's band; null without one. Held as the route's line holds it: a prior counts. */
export function nodeInBand(band: Band | null, costMicros: number, activeMinutes: number): boolean | null {
  if (!band) return null;
  const minutes = Math.round(activeMinutes);
  return costMicros >= band.lowMicros && costMicros <= band.highMicros && minutes >= band.lowMinutes && minutes <= band.highMinutes;
}

export interface NodeReceiptInput {
  id: string;
  routeKey: string;
  nodeId: string;
  title: string;
  repo: string | null;
  seat: string;
  harness: string;
  priced: PricedUsage;
  /** The run's runtime (core/lifecycle/run.ts runtimeMs): waits for a limit, an answer or a merge are not in it. */
  runtimeMs: number;
  band: RouteBand | null;
  promptChars: number;
  filesTouched: number;
  /** The node's runs (each a headless turn). */
  turns: number;
  startedAt: number;
  endedAt: number;
  /**
   * An overnight job's runs went through musher's gateway on the half-price tier (the platform key): its dollars are
   * the batch prices, its band is at batch prices too (the caller halves it), and all of it is key spend.
   */
  tier?: 'standard' | 'batch';
}

/** The receipt's body, in the task receipts' schema (core/receipt/receipt.ts): its task is `<route>/<node>`. */
export function nodeReceiptBody(i: NodeReceiptInput): ReceiptBody {
  const activeMinutes = Math.round(Math.max(0, i.runtimeMs) / 600) / 100;
  const band = receiptBand(i.band);
  return {
    v: 1,
    id: i.id,
    taskId: `${i.routeKey}/${i.nodeId}`,
    title: i.title,
    type: null,
    repo: i.repo,
    seat: i.seat,
    harness: i.harness,
    models: i.priced.models,
    costMicros: i.priced.costMicros,
    // A daytime node runs on the seat's own harness login; an overnight one on the platform key through the gateway.
    keyMicros: i.tier === 'batch' ? i.priced.costMicros : 0,
    activeMinutes,
    promptChars: Math.max(0, Math.round(i.promptChars)),
    filesTouched: Math.max(0, Math.round(i.filesTouched)),
    turns: Math.max(0, Math.round(i.turns)),
    band,
    inBand: nodeInBand(band, i.priced.costMicros, activeMinutes),
    startedAt: Math.round(i.startedAt),
    endedAt: Math.round(i.endedAt),
    ...(i.tier === 'batch' ? { tier: 'batch' as const } : {}),
  };
}

/**
 * "12 min · $0.43 · in band · seat dana · claude-code · claude-sonnet-4-5 · signed"; an unpriced model is named beside
 * the dollars. An overnight job's reads the way its morning reader weighs it, what it cost against what it was
 * estimated at and on which tier: "$6.02 actual at ½ price · est $9–24 · 38 min · in band · seat dana · …".
 */
export function nodeReceiptLine(r: Pick<NodeReceipt, 'body' | 'signature'> & { unpriced?: readonly string[] }): string {
  const b = r.body;
  const unpriced = r.unpriced ?? [];
  // A band word on dollars that leave a model out would judge a part as the whole.
  const word = unpriced.length > 0 && b.band ? 'band not judged' : bandWord(b);
  const dollars = `${formatUsd(b.costMicros)}${b.tier === 'batch' ? ' actual at ½ price' : ''}${unpriced.length > 0 ? ` + ${unpriced.join(', ')} unpriced` : ''}`;
  const minutes = `${Math.round(b.activeMinutes)} min`;
  const est = b.band ? `est ${formatUsd(b.band.lowMicros)}–${formatUsd(b.band.highMicros)}` : 'no estimate';
  const head = b.tier === 'batch' ? [dollars, est, minutes] : [minutes, dollars];
  return [...head, word, `seat ${b.seat}`, b.harness, b.models.length > 0 ? b.models.join('+') : 'no model', r.signature ? 'signed' : UNSIGNED_NOTE].join(' · ');
}

/** The line of the receipt a node's row carries, or null before it has one (or when what it holds is not a receipt). */
export function receiptLineOf(raw: unknown): string | null {
  const r = NodeReceipt.safeParse(raw);
  return r.success ? nodeReceiptLine(r.data) : null;
}
