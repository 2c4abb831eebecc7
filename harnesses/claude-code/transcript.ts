/**
 * Parses one line of a Claude Code transcript (`~/.claude/projects/<slug>/<session-uuid>.jsonl`). Pure; never throws.
 * Record shapes: shared/facts/claude-code.md §3 (the usage-limit record) and §4 (transcripts).
 *
 * Claude Code writes one assistant record per content block, each with the same `message.id`, `requestId` and
 * `usage`: every one of them comes back as a `usage` line with the same dedupKey, and the store keeps one.
 */
import { z } from 'zod';
import { parseTimestamp, zodProblem } from '../../core/record-parse.js';
import type { UsageRecord, WallRecord } from '../../core/usage.js';

export const CLAUDE_TRANSCRIPT_SOURCE = 'claude-transcript';

/** The model Claude Code puts on records it writes itself (limit errors, "No response requested."). */
const SYNTHETIC_MODEL = '<synthetic>';

export type ParsedTranscriptLine =
  | { kind: 'usage'; usage: UsageRecord }
  | { kind: 'wall'; wall: WallRecord }
  | { kind: 'session'; sessionId: string; cwd: string; timestampMs: number; version?: string; gitBranch?: string }
  | { kind: 'ignored' }
  | { kind: 'error'; message: string };

const UUID_RE = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;
const UUID_ONLY_RE = new RegExp(`^${UUID_RE.source}$`, 'i');

/**
 * The session id a transcript path names: `<slug>/<uuid>.jsonl`, or for a subagent transcript
 * `<slug>/<uuid>/subagents/agent-<id>.jsonl` the parent session's uuid. Null when the path names none.
 */
export function sessionIdFromTranscriptPath(path: string): string | null {
  const parts = path.split(/[\\/]/).filter((p) => p.length > 0);
  const base = parts[parts.length - 1];
  if (base === undefined) return null;
  const stem = base.replace(/\.jsonl$/i, '');
  if (UUID_ONLY_RE.test(stem)) return stem;
  const sub = parts.lastIndexOf('subagents');
  if (sub >= 1) {
    const parent = parts[sub - 1];
    if (parent !== undefined && UUID_ONLY_RE.test(parent)) return parent;
  }
  return null;
}

// ---- record shapes (unknown fields tolerated: z.object strips them) ----

const count = z.number().int().nonnegative().nullish();
const optString = z.string().nullish();

const UsageSchema = z.object({
  input_tokens: count,
  output_tokens: count,
  cache_creation_input_tokens: count,
  cache_read_input_tokens: count,
  cache_creation: z
    .object({
      ephemeral_5m_input_tokens: count,
      ephemeral_1h_input_tokens: count,
    })
    .nullish(),
  server_tool_use: z.object({ web_search_requests: count }).nullish(),
  service_tier: optString,
  inference_geo: optString,
});

const AssistantSchema = z.object({
  type: z.literal('assistant'),
  uuid: optString,
  requestId: optString,
  sessionId: optString,
  timestamp: optString,
  cwd: optString,
  message: z.object({
    id: optString,
    model: optString,
    /** Read loosely: a content block sleds does not know must not cost the record its usage. */
    content: z.unknown(),
    usage: UsageSchema.nullish(),
  }),
});
type AssistantRecord = z.infer<typeof AssistantSchema>;

const RateLimitInfoSchema = z.object({
  rateLimitType: optString,
  resetsAt: z.number().finite().nullish(),
});

const LimitSchema = z.object({
  apiError: optString,
  isApiErrorMessage: z.boolean().nullish(),
  apiErrorParams: z.object({ rate_limit_info: RateLimitInfoSchema.nullish() }).nullish(),
  quotaLimits: RateLimitInfoSchema.nullish(),
});

const UserSchema = z.object({
  type: z.literal('user'),
  sessionId: optString,
  timestamp: optString,
  cwd: optString,
  version: optString,
  gitBranch: optString,
});

// ---- helpers ----

function where(filePath: string): string {
  return `claude transcript ${filePath}`;
}

function fail(filePath: string, what: string): ParsedTranscriptLine {
  return { kind: 'error', message: `${where(filePath)}: ${what}` };
}



/** `resetsAt` is epoch seconds in the transcript; a value already in milliseconds is passed through. */
function resetsAtMs(v: number | null | undefined): number | null {
  if (v === null || v === undefined) return null;
  return v >= 1e11 ? Math.round(v) : Math.round(v * 1000);
}

/** The text blocks of a message, joined. */
function contentText(content: unknown): string {
  if (typeof content === 'string') return content.trim();
  if (!Array.isArray(content)) return '';
  const texts: string[] = [];
  for (const block of content) {
    if (typeof block !== 'object' || block === null) continue;
    const b = block as Record<string, unknown>;
    if (b['type'] === 'text' && typeof b['text'] === 'string') texts.push(b['text']);
  }
  return texts.join('\n').trim();
}

/** Claude Code before `apiError` existed: `Claude AI usage limit reached|<epoch seconds>`. */
const LEGACY_LIMIT_RE = /^Claude AI usage limit reached\|(\d+)/;

function recordSessionId(recordSessionId: string | null | undefined, filePath: string): string | null {
  if (typeof recordSessionId === 'string' && recordSessionId.length > 0) return recordSessionId;
  return sessionIdFromTranscriptPath(filePath);
}

function parseWall(
  record: AssistantRecord,
  raw: unknown,
  text: string,
  legacyResetSeconds: number | null,
  filePath: string,
): ParsedTranscriptLine {
  const limit = LimitSchema.safeParse(raw);
  if (!limit.success) return fail(filePath, `usage-limit record: ${zodProblem(limit.error)}`);
  const info = limit.data.apiErrorParams?.rate_limit_info ?? null;
  const quota = limit.data.quotaLimits ?? null;
  const sessionId = recordSessionId(record.sessionId, filePath);
  if (sessionId === null) return fail(filePath, 'usage-limit record has no sessionId and the file name is not a session uuid');
  const timestampMs = parseTimestamp(record.timestamp);
  if (timestampMs === null) return fail(filePath, 'usage-limit record has no valid timestamp');
  const dedupKey = record.uuid ?? record.requestId;
  if (dedupKey === null || dedupKey === undefined || dedupKey.length === 0) {
    return fail(filePath, 'usage-limit record has neither uuid nor requestId');
  }
  const wall: WallRecord = {
    source: CLAUDE_TRANSCRIPT_SOURCE,
    dedupKey,
    sessionId,
    timestampMs,
    window: info?.rateLimitType ?? quota?.rateLimitType ?? null,
    resetsAtMs: resetsAtMs(info?.resetsAt ?? quota?.resetsAt ?? legacyResetSeconds),
    message: text.length > 0 ? text : 'usage limit reached',
  };
  return { kind: 'wall', wall };
}

function parseAssistant(raw: unknown, filePath: string): ParsedTranscriptLine {
  const parsed = AssistantSchema.safeParse(raw);
  if (!parsed.success) return fail(filePath, `assistant record: ${zodProblem(parsed.error)}`);
  const record = parsed.data;
  const rawRecord = raw as Record<string, unknown>;
  const model = record.message.model ?? null;

  if (rawRecord['apiError'] === 'usage_limit_reached') {
    return parseWall(record, raw, contentText(record.message.content), null, filePath);
  }
  if (model === SYNTHETIC_MODEL) {
    const text = contentText(record.message.content);
    const legacy = rawRecord['isApiErrorMessage'] === true ? LEGACY_LIMIT_RE.exec(text) : null;
    if (legacy !== null && legacy[1] !== undefined) {
      return parseWall(record, raw, 'Claude AI usage limit reached', Number(legacy[1]), filePath);
    }
    return { kind: 'ignored' };
  }

  if (model === null || model.length === 0) return fail(filePath, 'assistant record has no message.model');
  const usage = record.message.usage;
  if (usage === null || usage === undefined) return fail(filePath, `assistant record (${model}) has no message.usage`);
  const messageId = record.message.id;
  if (messageId === null || messageId === undefined || messageId.length === 0) {
    return fail(filePath, `assistant record (${model}) has usage but no message.id`);
  }
  const sessionId = recordSessionId(record.sessionId, filePath);
  if (sessionId === null) return fail(filePath, `assistant record ${messageId} has no sessionId and the file name is not a session uuid`);
  const timestampMs = parseTimestamp(record.timestamp);
  if (timestampMs === null) return fail(filePath, `assistant record ${messageId} has no valid timestamp`);

  // Writes: the TTL split when present; whatever it does not account for counts as 5-minute writes.
  const splitTotal = usage.cache_creation_input_tokens ?? null;
  const split = usage.cache_creation ?? null;
  let write1h = 0;
  let write5m = splitTotal ?? 0;
  if (split !== null) {
    write1h = split.ephemeral_1h_input_tokens ?? 0;
    const split5m = split.ephemeral_5m_input_tokens ?? 0;
    write5m = Math.max(split5m, (splitTotal ?? split5m + write1h) - write1h);
  }

  const usageRecord: UsageRecord = {
    source: CLAUDE_TRANSCRIPT_SOURCE,
    dedupKey: `${messageId}:${record.requestId ?? 'none'}`,
    sessionId,
    model,
    timestampMs,
    cwd: record.cwd ?? null,
    inputTokens: usage.input_tokens ?? 0,
    outputTokens: usage.output_tokens ?? 0,
    cacheWrite5mTokens: write5m,
    cacheWrite1hTokens: write1h,
    cacheReadTokens: usage.cache_read_input_tokens ?? 0,
    webSearchRequests: usage.server_tool_use?.web_search_requests ?? 0,
    serviceTier: usage.service_tier ?? null,
    inferenceGeo: usage.inference_geo ?? null,
  };
  return { kind: 'usage', usage: usageRecord };
}

function parseUser(raw: unknown, filePath: string): ParsedTranscriptLine {
  const parsed = UserSchema.safeParse(raw);
  if (!parsed.success) return fail(filePath, `user record: ${zodProblem(parsed.error)}`);
  const record = parsed.data;
  const sessionId = recordSessionId(record.sessionId, filePath);
  if (sessionId === null) return fail(filePath, 'user record has no sessionId and the file name is not a session uuid');
  const timestampMs = parseTimestamp(record.timestamp);
  if (timestampMs === null) return fail(filePath, 'user record has no valid timestamp');
  if (record.cwd === null || record.cwd === undefined || record.cwd.length === 0) {
    return fail(filePath, 'user record has no cwd');
  }
  const line: ParsedTranscriptLine & { kind: 'session' } = { kind: 'session', sessionId, cwd: record.cwd, timestampMs };
  if (typeof record.version === 'string') line.version = record.version;
  if (typeof record.gitBranch === 'string') line.gitBranch = record.gitBranch;
  return line;
}

export function parseClaudeTranscriptLine(line: string, context: { filePath: string }): ParsedTranscriptLine {
  const { filePath } = context;
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
  const type = (raw as Record<string, unknown>)['type'];
  if (typeof type !== 'string') return fail(filePath, 'record has no "type" field');
  try {
    switch (type) {
      case 'assistant':
        return parseAssistant(raw, filePath);
      case 'user':
        return parseUser(raw, filePath);
      default:
        return { kind: 'ignored' };
    }
  } catch (e) {
    // Belt and braces: the parser must never throw at the ingest loop.
    return fail(filePath, `unexpected parser failure: ${e instanceof Error ? e.message : String(e)}`);
  }
}
