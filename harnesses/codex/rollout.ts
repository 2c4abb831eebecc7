/**
 * Parses one line of a Codex CLI rollout (`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<localtime>-<thread uuid>.jsonl`).
 * Pure; never throws. Record shapes: shared/facts/codex-cli.md §4 (token_count, rate limits, the 429) and §5 (rollout lines,
 * session_meta, turn_context, forks).
 *
 * A rollout line says less than a Claude transcript record: the model is on the turn's `turn_context`, the thread on
 * the file's first line (`session_meta`). So lines are read with the state the earlier lines of the same file left
 * (`CodexRolloutState`, advanced by `nextCodexRolloutState`, or both at once by `CodexRolloutReader`).
 *
 * Usage. OpenAI counts cached input inside `input_tokens` (shared/facts/model-apis.md §5.2; the facts' own token_count has
 * total_tokens = input + output with reasoning inside output), so a `last_token_usage` becomes
 * inputTokens = input − cached − cache writes, cacheReadTokens = cached, cacheWrite5mTokens = cache writes,
 * outputTokens = output (reasoning is inside it; added only if total_tokens shows a rollout counted it apart).
 *
 * Dedup. Codex writes a token_count after every response, and again with unchanged totals when only the rate limits
 * moved (Codex 0.169 does it on a 429: the last response's info repeated, primary at 100). `total_token_usage` is the
 * thread's running total (a fork's goes on from its parent's): it moves with every response and stays put in a
 * re-emit, so the key is that running total, scoped to a thread — a re-read or a re-emit gets the original's key.
 *
 * Forks come in two kinds:
 * - paginated (Codex 0.169; seen with the real binary): the fork's rollout starts with its own session_meta, whose
 *   `forked_from_ordinal_exclusive` (also `history_base.end_ordinal_exclusive`) is where it left its parent; its
 *   lines go on from that ordinal, and the parent's history is NOT copied (the parent's rollout is read for it).
 *   Keys are scoped to the fork's own thread. A line with an ordinal below the fork point would be a copy: ignored.
 * - legacy (older Codex, `history_mode` legacy or none, no ordinals): the fork's rollout copies its parent's history,
 *   token_counts and the parent's session_meta included, re-stamped at fork time. Keys are scoped to the fork
 *   family's root thread (`lineageId`, which the adapter resolves), so a copied record gets its original's key; the
 *   copy's limits and walls (old news with a new time) are flagged `replayed`.
 */
import { z } from 'zod';
import { parseTimestamp, zodProblem } from '../../core/record-parse.js';
import type { UsageRecord, WallRecord } from '../../core/usage.js';

export const CODEX_ROLLOUT_SOURCE = 'codex-rollout';
/** The provider Codex plan bars are recorded under. */
export const CODEX_PROVIDER = 'openai';
/** The model of usage seen before any turn_context said which (never priced). */
export const UNKNOWN_CODEX_MODEL = 'codex-unknown-model';
/**
 * A legacy fork's copy of its parent's history is written in one burst: lines stamped no more than this after the
 * line before them, from the fork's own session_meta on, are taken as copies (their rate limits are old news).
 */
export const FORK_REPLAY_GAP_MS = 1000;

const UUID_SOURCE = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';
const ROLLOUT_NAME_RE = new RegExp(`^rollout-.*?(${UUID_SOURCE})\\.jsonl$`, 'i');

/** Is this a rollout file name (`rollout-…-<uuid>.jsonl`, or any `rollout-*.jsonl`)? */
export function isRolloutFileName(name: string): boolean {
  return /^rollout-.*\.jsonl$/i.test(name);
}

/** The thread id a rollout path names (the uuid at the end of `rollout-<localtime>-<uuid>.jsonl`), else null. */
export function threadIdFromRolloutPath(path: string): string | null {
  const base = path.split(/[\\/]/).pop() ?? '';
  const m = ROLLOUT_NAME_RE.exec(base);
  return m?.[1] ?? null;
}

/** `$CODEX_HOME/sessions`; CODEX_HOME defaults to ~/.codex. */
export function codexSessionsDir(env: Record<string, string | undefined>, homeDir: string): string {
  const home = env.CODEX_HOME || `${homeDir.replace(/\/+$/, '')}/.codex`;
  return `${home.replace(/\/+$/, '')}/sessions`;
}

export type CodexSlot = 'primary' | 'secondary';

export interface CodexBar {
  /** `codex_primary` / `codex_secondary` (see `codexWindowName`). */
  window: string;
  slot: CodexSlot;
  /** `rate_limits.limit_id` ("codex" unless a model family has its own limits). */
  limitId: string;
  usedPct: number;
  /** Epoch ms. */
  resetsAtMs: number | null;
  windowMinutes: number | null;
}

export interface CodexCredits {
  hasCredits: boolean | null;
  unlimited: boolean | null;
  /** As Codex writes it ("12.34"): the unit is Codex's credits, not a currency the rollout names. */
  balance: string | null;
}

/** One `rate_limits` snapshot, at the time of the line that carried it. */
export interface CodexLimits {
  sessionId: string;
  observedAtMs: number;
  limitId: string;
  limitName: string | null;
  bars: CodexBar[];
  credits: CodexCredits | null;
  planType: string | null;
  /** `rate_limit_reached_type` (rate_limit_reached, workspace_member_usage_limit_reached, …), null while allowed. */
  limitReached: string | null;
}

export type ParsedRolloutLine =
  /** A response's usage; `limits` when the same token_count carried rate limits (a problem with them: limitsProblem). */
  | { kind: 'usage'; usage: UsageRecord; limits: CodexLimits | null; limitsProblem: string | null; replayed: boolean }
  /** Rate limits without usage (a 429's token_count has `info: null`). */
  | ({ kind: 'bars'; replayed: boolean } & CodexLimits)
  | { kind: 'wall'; wall: WallRecord; replayed: boolean }
  /** From the file's own session_meta (`from: 'session_meta'`, forkedFrom when a fork) or a turn_context (model, turnId). */
  | {
      kind: 'session';
      from: 'session_meta' | 'turn_context';
      sessionId: string;
      cwd: string | null;
      timestampMs: number;
      forkedFrom?: string;
      /** A paginated fork's `forked_from_ordinal_exclusive`. */
      forkOrdinal?: number;
      model?: string;
      turnId?: string;
      replayed: boolean;
    }
  | { kind: 'ignored' }
  | { kind: 'error'; message: string };

/** What the earlier lines of one rollout said. Start with `initialCodexRolloutState`. */
export interface CodexRolloutState {
  filePath: string;
  /** The file's thread: its own session_meta `id`, else the uuid in the file name. */
  sessionId: string | null;
  /** The file's own session_meta has been read (a later one is a copied parent's). */
  metaSeen: boolean;
  cwd: string | null;
  model: string | null;
  turnId: string | null;
  /** The thread this one was forked or spawned from. */
  forkedFrom: string | null;
  /** A paginated fork's fork point (`forked_from_ordinal_exclusive`): lines below it would be copies. Null: legacy or no fork. */
  forkOrdinal: number | null;
  /** A legacy fork's family root, which its usage keys are scoped to. Null: forkedFrom (the caller resolves it further). */
  lineageId: string | null;
  /** Still inside a legacy fork's opening burst (copied history). */
  replayOpen: boolean;
  /** The latest line time seen, epoch ms. */
  lastAtMs: number | null;
  /** The window the latest snapshot showed full, for the wall that follows it. */
  binding: { window: string; resetsAtMs: number | null } | null;
}

export function initialCodexRolloutState(filePath: string): CodexRolloutState {
  return {
    filePath,
    sessionId: threadIdFromRolloutPath(filePath),
    metaSeen: false,
    cwd: null,
    model: null,
    turnId: null,
    forkedFrom: null,
    forkOrdinal: null,
    lineageId: null,
    replayOpen: false,
    lastAtMs: null,
    binding: null,
  };
}

// ---- record shapes (unknown fields tolerated: z.object strips them) ----

const optString = z.string().nullish();
const count = z.number().int().nonnegative().nullish();
const finite = z.number().finite().nullish();

const LineSchema = z.object({
  timestamp: optString,
  ordinal: z.number().int().nullish(),
  type: z.string(),
  payload: z.unknown().optional(),
});
type RolloutLine = z.infer<typeof LineSchema>;

const SessionMetaSchema = z.object({
  id: optString,
  session_id: optString,
  timestamp: optString,
  cwd: optString,
  forked_from_id: optString,
  forked_from_ordinal_exclusive: z.number().int().nullish(),
  history_base: z.object({ thread_id: optString, end_ordinal_exclusive: z.number().int().nullish() }).nullish(),
  parent_thread_id: optString,
  source: z.unknown().optional(),
});

const TurnContextSchema = z.object({
  turn_id: optString,
  cwd: optString,
  model: optString,
});

const TokenUsageSchema = z.object({
  input_tokens: count,
  cached_input_tokens: count,
  cache_write_input_tokens: count,
  output_tokens: count,
  reasoning_output_tokens: count,
  total_tokens: count,
});
type TokenUsage = z.infer<typeof TokenUsageSchema>;

const InfoSchema = z.object({
  total_token_usage: TokenUsageSchema.nullish(),
  last_token_usage: TokenUsageSchema.nullish(),
});

const WindowSchema = z.object({
  used_percent: finite,
  window_minutes: finite,
  /** Epoch seconds. */
  resets_at: finite,
  /** Older rollouts: seconds from the line's time. */
  resets_in_seconds: finite,
});

const RateLimitsSchema = z.object({
  limit_id: optString,
  limit_name: optString,
  primary: WindowSchema.nullish(),
  secondary: WindowSchema.nullish(),
  credits: z
    .object({
      has_credits: z.boolean().nullish(),
      unlimited: z.boolean().nullish(),
      balance: z.union([z.string(), z.number()]).nullish(),
    })
    .nullish(),
  plan_type: optString,
  rate_limit_reached_type: optString,
});

const TokenCountSchema = z.object({
  info: z.unknown().optional(),
  rate_limits: z.unknown().optional(),
});

const ErrorSchema = z.object({
  turn_id: optString,
  message: optString,
  codex_error_info: z.unknown().optional(),
});

const TaskCompleteSchema = z.object({
  turn_id: optString,
  error: ErrorSchema.nullish(),
});

// ---- helpers ----

function fail(filePath: string, what: string): ParsedRolloutLine {
  return { kind: 'error', message: `codex rollout ${filePath}: ${what}` };
}



/** Epoch seconds (a value already in milliseconds is passed through). */
function epochMs(v: number): number {
  return v >= 1e11 ? Math.round(v) : Math.round(v * 1000);
}

function nonEmpty(s: string | null | undefined): string | null {
  return typeof s === 'string' && s.length > 0 ? s : null;
}

/**
 * A Codex bar's window name: `<limit_id>_<slot>` — `codex_primary`, `codex_secondary` (another limit family:
 * `codex_bengalfox_primary`, …). By slot, as the rest of sleds names them; each bar carries its `windowMinutes`. Mind that
 * the slot is positional: the 5-hour window is primary and the weekly secondary on the plans seen, but a plan with a
 * single weekly window puts it in primary.
 */
export function codexWindowName(limitId: string, slot: CodexSlot): string {
  return `${limitId.replace(/[^A-Za-z0-9_]+/g, '_')}_${slot}`;
}

/** Does a `codex_error_info` (a snake_case string for unit variants, `{variant: {…}}` otherwise) mean the plan is used up? */
function isUsageLimit(info: unknown, message: string | null | undefined): boolean {
  if (info === 'usage_limit_exceeded' || info === 'usageLimitExceeded') return true;
  if (typeof info === 'object' && info !== null && !Array.isArray(info)) {
    const keys = Object.keys(info);
    if (keys.includes('usage_limit_exceeded') || keys.includes('usageLimitExceeded')) return true;
  }
  // Rollouts from before codex_error_info: the user-facing sentence (facts §4), either apostrophe.
  return info == null && typeof message === 'string' && /^You[’']ve hit your usage limit/.test(message);
}

/** Is the line a copy from a legacy fork's opening burst (see FORK_REPLAY_GAP_MS)? */
function replayed(state: CodexRolloutState, atMs: number): boolean {
  return state.forkedFrom !== null && state.replayOpen && state.lastAtMs !== null && atMs - state.lastAtMs <= FORK_REPLAY_GAP_MS;
}

/** Is the line a copy of the parent's in a paginated fork (an ordinal below the fork point)? Codex 0.169 writes none. */
function belowForkPoint(state: CodexRolloutState | undefined, line: RolloutLine): boolean {
  return state?.forkOrdinal != null && line.ordinal != null && line.ordinal < state.forkOrdinal;
}

function fingerprint(u: TokenUsage): string {
  return [
    u.input_tokens ?? 0,
    u.cached_input_tokens ?? 0,
    u.cache_write_input_tokens ?? 0,
    u.output_tokens ?? 0,
    u.reasoning_output_tokens ?? 0,
    u.total_tokens ?? 0,
  ].join('/');
}

function parseLimits(raw: unknown, sessionId: string, atMs: number): { limits: CodexLimits | null; problem: string | null } {
  if (raw === null || raw === undefined) return { limits: null, problem: null };
  const parsed = RateLimitsSchema.safeParse(raw);
  if (!parsed.success) return { limits: null, problem: `rate_limits: ${zodProblem(parsed.error)}` };
  const r = parsed.data;
  const limitId = nonEmpty(r.limit_id) ?? 'codex';
  const bars: CodexBar[] = [];
  for (const slot of ['primary', 'secondary'] as const) {
    const w = r[slot];
    if (w === null || w === undefined) continue;
    const used = w.used_percent ?? null;
    const minutes = w.window_minutes ?? null;
    let resetsAtMs: number | null = null;
    if (w.resets_at !== null && w.resets_at !== undefined) resetsAtMs = epochMs(w.resets_at);
    else if (w.resets_in_seconds !== null && w.resets_in_seconds !== undefined) resetsAtMs = atMs + Math.round(w.resets_in_seconds * 1000);
    if (used === null) continue;
    // Codex itself: a window with used_percent 0 and nothing else is absent (facts §4).
    if (used === 0 && minutes === null && resetsAtMs === null) continue;
    // A window that had already reset when the line was written says nothing about its bar.
    if (resetsAtMs !== null && resetsAtMs <= atMs) continue;
    bars.push({ window: codexWindowName(limitId, slot), slot, limitId, usedPct: used, resetsAtMs, windowMinutes: minutes });
  }
  const c = r.credits ?? null;
  const credits: CodexCredits | null =
    c === null
      ? null
      : {
          hasCredits: c.has_credits ?? null,
          unlimited: c.unlimited ?? null,
          balance: c.balance === null || c.balance === undefined ? null : String(c.balance),
        };
  const planType = nonEmpty(r.plan_type);
  const limitReached = nonEmpty(r.rate_limit_reached_type);
  if (bars.length === 0 && credits === null && planType === null && limitReached === null) return { limits: null, problem: null };
  return {
    limits: { sessionId, observedAtMs: atMs, limitId, limitName: nonEmpty(r.limit_name), bars, credits, planType, limitReached },
    problem: null,
  };
}

// ---- record kinds ----

function parseSessionMeta(line: RolloutLine, state: CodexRolloutState | undefined, filePath: string): ParsedRolloutLine {
  const parsed = SessionMetaSchema.safeParse(line.payload);
  if (!parsed.success) return fail(filePath, `session_meta: ${zodProblem(parsed.error)}`);
  const meta = parsed.data;
  const id = nonEmpty(meta.id) ?? nonEmpty(meta.session_id);
  // A second session_meta is the parent's, copied with its history into a fork: not this file's thread.
  if (state?.metaSeen && id !== state.sessionId) return { kind: 'ignored' };
  const sessionId = id ?? state?.sessionId ?? threadIdFromRolloutPath(filePath);
  if (sessionId === null) return fail(filePath, 'session_meta has no id and the file name names no thread');
  const timestampMs = parseTimestamp(line.timestamp) ?? parseTimestamp(meta.timestamp);
  if (timestampMs === null) return fail(filePath, 'session_meta has no valid timestamp');
  const out: ParsedRolloutLine & { kind: 'session' } = {
    kind: 'session',
    from: 'session_meta',
    sessionId,
    cwd: nonEmpty(meta.cwd),
    timestampMs,
    replayed: false,
  };
  const forkedFrom = nonEmpty(meta.forked_from_id) ?? nonEmpty(meta.history_base?.thread_id) ?? nonEmpty(meta.parent_thread_id) ?? spawnParent(meta.source);
  if (forkedFrom !== null && forkedFrom !== sessionId) {
    out.forkedFrom = forkedFrom;
    const forkOrdinal = meta.forked_from_ordinal_exclusive ?? meta.history_base?.end_ordinal_exclusive ?? null;
    if (forkOrdinal !== null) out.forkOrdinal = forkOrdinal;
  }
  return out;
}

/** `source: {subagent: {thread_spawn: {parent_thread_id}}}` (sub-agents spawned by a thread). */
function spawnParent(source: unknown): string | null {
  if (typeof source !== 'object' || source === null) return null;
  const sub = (source as Record<string, unknown>)['subagent'];
  if (typeof sub !== 'object' || sub === null) return null;
  const spawn = (sub as Record<string, unknown>)['thread_spawn'];
  if (typeof spawn !== 'object' || spawn === null) return null;
  const parent = (spawn as Record<string, unknown>)['parent_thread_id'];
  return typeof parent === 'string' && parent.length > 0 ? parent : null;
}

function parseTurnContext(line: RolloutLine, state: CodexRolloutState | undefined, filePath: string): ParsedRolloutLine {
  const parsed = TurnContextSchema.safeParse(line.payload);
  if (!parsed.success) return fail(filePath, `turn_context: ${zodProblem(parsed.error)}`);
  const sessionId = state?.sessionId ?? threadIdFromRolloutPath(filePath);
  if (sessionId === null) return fail(filePath, 'turn_context before any session_meta, and the file name names no thread');
  const timestampMs = parseTimestamp(line.timestamp);
  if (timestampMs === null) return fail(filePath, 'turn_context has no valid timestamp');
  const out: ParsedRolloutLine & { kind: 'session' } = {
    kind: 'session',
    from: 'turn_context',
    sessionId,
    cwd: nonEmpty(parsed.data.cwd),
    timestampMs,
    replayed: state ? replayed(state, timestampMs) : false,
  };
  const model = nonEmpty(parsed.data.model);
  if (model !== null) out.model = model;
  const turnId = nonEmpty(parsed.data.turn_id);
  if (turnId !== null) out.turnId = turnId;
  return out;
}

function parseTokenCount(line: RolloutLine, payload: Record<string, unknown>, state: CodexRolloutState | undefined, filePath: string): ParsedRolloutLine {
  const parsed = TokenCountSchema.safeParse(payload);
  if (!parsed.success) return fail(filePath, `token_count: ${zodProblem(parsed.error)}`);
  const sessionId = state?.sessionId ?? threadIdFromRolloutPath(filePath);
  if (sessionId === null) return fail(filePath, 'token_count before any session_meta, and the file name names no thread');
  const atMs = parseTimestamp(line.timestamp);
  if (atMs === null) return fail(filePath, 'token_count has no valid timestamp');
  const isReplay = state ? replayed(state, atMs) : false;
  const { limits, problem } = parseLimits(parsed.data.rate_limits, sessionId, atMs);

  const rawInfo = parsed.data.info;
  if (rawInfo === null || rawInfo === undefined) {
    if (limits !== null) return { kind: 'bars', replayed: isReplay, ...limits };
    return problem !== null ? fail(filePath, `token_count ${problem}`) : { kind: 'ignored' };
  }
  const info = InfoSchema.safeParse(rawInfo);
  if (!info.success) return fail(filePath, `token_count info: ${zodProblem(info.error)}`);
  const last = info.data.last_token_usage ?? null;
  const total = info.data.total_token_usage ?? null;
  const input = last?.input_tokens ?? 0;
  const output = last?.output_tokens ?? 0;
  if (last === null || (input === 0 && output === 0)) {
    // No billable tokens (a context-window fill, an empty snapshot): only the limits, if any.
    if (limits !== null) return { kind: 'bars', replayed: isReplay, ...limits };
    return problem !== null ? fail(filePath, `token_count ${problem}`) : { kind: 'ignored' };
  }

  const cached = Math.min(last.cached_input_tokens ?? 0, input);
  const writes = last.cache_write_input_tokens ?? 0;
  // Cache writes are taken as counted inside input, like cached reads (input_tokens_details); when they cannot be
  // (cached + writes > input), as extra. Either way they are priced as cache writes.
  const uncached = cached + writes <= input ? input - cached - writes : input - cached;
  const reasoning = last.reasoning_output_tokens ?? 0;
  const totalTokens = last.total_tokens ?? null;
  // Reasoning is part of output_tokens (facts: total_tokens = input + output). Only a total that adds it apart says otherwise.
  const reasoningApart = reasoning > 0 && totalTokens !== null && totalTokens === input + output + reasoning && totalTokens !== input + output;

  // Paginated forks hold only their own lines: their own thread. Legacy forks copy: the family's root.
  const lineage = state === undefined || state.forkOrdinal !== null ? sessionId : (state.lineageId ?? state.forkedFrom ?? sessionId);
  const dedupKey =
    total !== null
      ? `codex:${lineage}:${fingerprint(total)}`
      : `codex:${sessionId}:last:${line.ordinal ?? line.timestamp}:${fingerprint(last)}`;

  const usage: UsageRecord = {
    source: CODEX_ROLLOUT_SOURCE,
    dedupKey,
    sessionId,
    model: state?.model ?? UNKNOWN_CODEX_MODEL,
    timestampMs: atMs,
    cwd: state?.cwd ?? null,
    inputTokens: uncached,
    outputTokens: reasoningApart ? output + reasoning : output,
    cacheWrite5mTokens: writes,
    cacheWrite1hTokens: 0,
    cacheReadTokens: cached,
    webSearchRequests: 0,
    serviceTier: null,
    inferenceGeo: null,
  };
  return { kind: 'usage', usage, limits, limitsProblem: problem, replayed: isReplay };
}

function parseLimitError(
  line: RolloutLine,
  error: z.infer<typeof ErrorSchema>,
  turnId: string | null,
  state: CodexRolloutState | undefined,
  filePath: string,
): ParsedRolloutLine {
  if (!isUsageLimit(error.codex_error_info, error.message)) return { kind: 'ignored' };
  const sessionId = state?.sessionId ?? threadIdFromRolloutPath(filePath);
  if (sessionId === null) return fail(filePath, 'usage-limit error before any session_meta, and the file name names no thread');
  const timestampMs = parseTimestamp(line.timestamp);
  if (timestampMs === null) return fail(filePath, 'usage-limit error has no valid timestamp');
  const turn = turnId ?? state?.turnId ?? null;
  const wall: WallRecord = {
    source: CODEX_ROLLOUT_SOURCE,
    // The error event and the task_complete of one failed turn are one wall; a turn id is unique across threads.
    dedupKey: turn !== null ? `codex:wall:${turn}` : `codex:wall:${sessionId}:${line.ordinal ?? line.timestamp}`,
    sessionId,
    timestampMs,
    window: state?.binding?.window ?? null,
    resetsAtMs: state?.binding?.resetsAtMs ?? null,
    message: nonEmpty(error.message) ?? 'usage limit exceeded',
  };
  return { kind: 'wall', wall, replayed: state ? replayed(state, timestampMs) : false };
}

function parseEventMsg(line: RolloutLine, state: CodexRolloutState | undefined, filePath: string): ParsedRolloutLine {
  const payload = line.payload;
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) return fail(filePath, 'event_msg has no payload object');
  const p = payload as Record<string, unknown>;
  switch (p['type']) {
    case 'token_count':
      return parseTokenCount(line, p, state, filePath);
    case 'error': {
      const parsed = ErrorSchema.safeParse(p);
      if (!parsed.success) return fail(filePath, `error event: ${zodProblem(parsed.error)}`);
      return parseLimitError(line, parsed.data, nonEmpty(parsed.data.turn_id), state, filePath);
    }
    case 'task_complete': {
      const parsed = TaskCompleteSchema.safeParse(p);
      if (!parsed.success) return fail(filePath, `task_complete: ${zodProblem(parsed.error)}`);
      const error = parsed.data.error ?? null;
      if (error === null) return { kind: 'ignored' };
      return parseLimitError(line, error, nonEmpty(parsed.data.turn_id), state, filePath);
    }
    default:
      return { kind: 'ignored' };
  }
}

/**
 * Parses one complete line (no trailing newline). `state` is what the earlier lines of the same file said; without
 * it the line is read alone (thread from the file name, model unknown).
 */
export function parseCodexRolloutLine(line: string, context: { filePath: string; state?: CodexRolloutState }): ParsedRolloutLine {
  const { filePath, state } = context;
  if (line.trim().length === 0) return { kind: 'ignored' };
  let raw: unknown;
  try {
    raw = JSON.parse(line);
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e);
    return fail(filePath, `line is not valid JSON (truncated write?): ${why.split('\n')[0] ?? why}`);
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    return fail(filePath, `line is JSON but not a record object (${Array.isArray(raw) ? 'array' : raw === null ? 'null' : typeof raw})`);
  }
  const envelope = LineSchema.safeParse(raw);
  if (!envelope.success) return fail(filePath, `rollout line: ${zodProblem(envelope.error)}`);
  try {
    // A paginated fork holds no copy of its parent's lines (its parent's rollout does); one found anyway is not its own.
    if (envelope.data.type !== 'session_meta' && belowForkPoint(state, envelope.data)) return { kind: 'ignored' };
    switch (envelope.data.type) {
      case 'session_meta':
        return parseSessionMeta(envelope.data, state, filePath);
      case 'turn_context':
        return parseTurnContext(envelope.data, state, filePath);
      case 'event_msg':
        return parseEventMsg(envelope.data, state, filePath);
      default:
        // response_item, world_state, token_usage_record (the same response as its token_count: counted once, there), …
        return { kind: 'ignored' };
    }
  } catch (e) {
    // Belt and braces: the parser must never throw at the ingest loop.
    return fail(filePath, `unexpected parser failure: ${e instanceof Error ? e.message : String(e)}`);
  }
}

/** The time a parsed line carries, if any. */
function atOf(parsed: ParsedRolloutLine): number | null {
  switch (parsed.kind) {
    case 'usage':
      return parsed.usage.timestampMs;
    case 'bars':
      return parsed.observedAtMs;
    case 'wall':
      return parsed.wall.timestampMs;
    case 'session':
      return parsed.timestampMs;
    default:
      return null;
  }
}

/** The window a snapshot shows full (the fullest at 100 % or more), for the wall that follows. */
function bindingOf(limits: CodexLimits): CodexRolloutState['binding'] {
  let best: CodexBar | null = null;
  for (const bar of limits.bars) if (bar.usedPct >= 100 && (best === null || bar.usedPct > best.usedPct)) best = bar;
  return best === null ? null : { window: best.window, resetsAtMs: best.resetsAtMs };
}

/** The state after a parsed line. Pure. */
export function nextCodexRolloutState(state: CodexRolloutState, parsed: ParsedRolloutLine): CodexRolloutState {
  const at = atOf(parsed);
  const next: CodexRolloutState = { ...state };
  if (at !== null) {
    if (next.replayOpen && next.lastAtMs !== null && at - next.lastAtMs > FORK_REPLAY_GAP_MS) next.replayOpen = false;
    next.lastAtMs = next.lastAtMs === null ? at : Math.max(next.lastAtMs, at);
  }
  switch (parsed.kind) {
    case 'session':
      if (parsed.from === 'session_meta') {
        const sameThread = next.sessionId === parsed.sessionId;
        next.sessionId = parsed.sessionId;
        next.cwd = parsed.cwd ?? next.cwd;
        next.forkedFrom = parsed.forkedFrom ?? null;
        next.forkOrdinal = parsed.forkOrdinal ?? null;
        if (!sameThread || next.forkedFrom === null || next.forkOrdinal !== null) next.lineageId = null;
        // Only a legacy fork's opening session_meta starts a replay (not a re-read of it, after a replaced file).
        next.replayOpen = next.forkedFrom !== null && next.forkOrdinal === null && !state.metaSeen;
        if (!state.metaSeen) next.lastAtMs = parsed.timestampMs;
        next.metaSeen = true;
      } else {
        if (parsed.model !== undefined) next.model = parsed.model;
        if (parsed.turnId !== undefined) next.turnId = parsed.turnId;
        next.binding = null; // a new turn: a wall in it is told by its own snapshot
        next.cwd = parsed.cwd ?? next.cwd;
      }
      break;
    case 'usage':
      if (parsed.limits !== null) next.binding = bindingOf(parsed.limits);
      break;
    case 'bars':
      next.binding = bindingOf(parsed);
      break;
    default:
      break;
  }
  return next;
}

/** Reads one rollout's lines in order, keeping the state between them. */
export class CodexRolloutReader {
  state: CodexRolloutState;
  constructor(filePath: string, state?: CodexRolloutState) {
    this.state = state ?? initialCodexRolloutState(filePath);
  }

  read(line: string): ParsedRolloutLine {
    const parsed = parseCodexRolloutLine(line, { filePath: this.state.filePath, state: this.state });
    this.state = nextCodexRolloutState(this.state, parsed);
    return parsed;
  }
}
