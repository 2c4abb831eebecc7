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

/**
 * Where the first `"content":` key's value lies in a line, or null when it cannot be told cheaply. The bytes
 * `"content":` outside a string can only be a key (a quote inside a string is escaped), so this is some object's
 * content, and the caller checks it was the message's. The value must be a string or an array whose strings are well
 * formed and whose brackets balance, with nothing but JSON's own characters between its strings.
 */
function contentValueSpan(line: string): { start: number; end: number } | null {
  const key = line.indexOf('"content":');
  if (key < 0) return null;
  const start = key + '"content":'.length;
  const first = line.charCodeAt(start);
  if (first === 0x22) {
    const end = stringEnd(line, start);
    return end < 0 ? null : { start, end };
  }
  if (first !== 0x5b) return null;
  /** The closing bracket each open one waits for. */
  const closers: number[] = [];
  for (let i = start; i < line.length; i++) {
    const c = line.charCodeAt(i);
    if (c === 0x22) {
      const end = stringEnd(line, i);
      if (end < 0) return null;
      i = end - 1;
    } else if (c === 0x5b) closers.push(0x5d);
    else if (c === 0x7b) closers.push(0x7d);
    else if (c === 0x5d || c === 0x7d) {
      if (closers.pop() !== c) return null;
      if (closers.length === 0) return { start, end: i + 1 };
    } else if (c > 0x7f || JSON_BETWEEN_STRINGS[c] !== 1) return null;
  }
  return null;
}

/** What may stand between a JSON value's strings (1 by character code): punctuation, white space, numbers, literals. */
const JSON_BETWEEN_STRINGS = (() => {
  const table = new Uint8Array(128);
  for (const ch of ',: \t\r\n0123456789.eE+-truefalsn') table[ch.charCodeAt(0)] = 1;
  return table;
})();
/** What JSON.parse refuses inside a string: a raw control character, or an escape it does not know. */
const BAD_IN_STRING = /[\u0000-\u001f]|\\(?![\\"/bfnrt]|u[0-9a-fA-F]{4})/;

/** The index just past the string that opens at `open` (a quote), or -1 when it does not close or is not valid JSON. */
function stringEnd(line: string, open: number): number {
  let at = open;
  for (;;) {
    at = line.indexOf('"', at + 1);
    if (at < 0) return -1;
    let slashes = 0;
    while (line.charCodeAt(at - 1 - slashes) === 0x5c) slashes++;
    if (slashes % 2 === 0) break;
  }
  return BAD_IN_STRING.test(line.slice(open + 1, at)) ? -1 : at + 1;
}

/**
 * A block of a reply already parsed, as repeatedBlockTime compares a later line with it; where its parts lie is worked
 * out once, when first needed.
 */
export interface ParsedBlock {
  readonly line: string;
  tail?: BlockTail | null;
  head?: BlockHead | null;
}

interface BlockTail {
  usage: number;
  /** The two values left out after the usage (uuid and timestamp, in the order they come), [start, end) each. */
  first: number;
  firstEnd: number;
  second: number;
  secondEnd: number;
  stamp: number;
}

interface BlockHead {
  contentStart: number;
  /** The parentUuid value [start, end), or [-1, -1] when the line has none. */
  parent: number;
  parentEnd: number;
}

/**
 * The time of a line that is a block of the reply \`previous\` is a block of and says nothing more (shared/facts/
 * claude-code.md §4: one record per content block, each with the reply's usage): the same line but for the values
 * blocks differ in (\`parentUuid\`, the content, the stop fields between it and \`usage\`, \`uuid\`, \`timestamp\`), so it
 * parses to the same record but for its time. It must be JSON as the lean read checks it: the content balanced with
 * well formed strings, the values left out plain strings (or null), the stop fields simple. Null when any of it does
 * not hold, and the line is parsed. The usage and what follows are compared first: another reply differs there.
 */
export function repeatedBlockTime(line: string, previous: ParsedBlock): string | null {
  const tail = blockTail(line);
  if (tail === null) return null;
  const was = (previous.tail ??= blockTail(previous.line));
  const before = previous.line;
  if (was === null) return null;
  if (
    line.slice(tail.usage, tail.first) !== before.slice(was.usage, was.first) ||
    line.slice(tail.firstEnd, tail.second) !== before.slice(was.firstEnd, was.second) ||
    line.slice(tail.secondEnd) !== before.slice(was.secondEnd)
  ) {
    return null;
  }
  const head = blockHead(line, tail.usage);
  const wasHead = (previous.head ??= blockHead(before, was.usage));
  if (head === null || wasHead === null || line.charCodeAt(tail.stamp) !== 0x22) return null;
  if (head.parent < 0 !== wasHead.parent < 0) return null;
  const same =
    head.parent < 0
      ? line.slice(0, head.contentStart) === before.slice(0, wasHead.contentStart)
      : line.slice(0, head.parent) === before.slice(0, wasHead.parent) && line.slice(head.parentEnd, head.contentStart) === before.slice(wasHead.parentEnd, wasHead.contentStart);
  if (!same) return null;
  return line.slice(tail.stamp + 1, tail.stamp === tail.first ? tail.firstEnd - 1 : tail.secondEnd - 1);
}

/** The stop fields between a reply's content and its usage: simple keys with strings, numbers, literals. */
const STOP_FIELDS = /^(?:,"[A-Za-z_]+":(?:"[^"\\\u0000-\u001f]*"|null|true|false|-?[0-9]+))*,$/;

function blockTail(line: string): BlockTail | null {
  const usage = line.lastIndexOf('"usage":{');
  if (usage < 0) return null;
  const uuid = line.lastIndexOf('"uuid":"');
  const stamp = line.lastIndexOf('"timestamp":"');
  if (uuid < usage || stamp < usage) return null;
  const uuidAt = uuid + '"uuid":'.length;
  const stampAt = stamp + '"timestamp":'.length;
  const [first, second] = uuidAt < stampAt ? [uuidAt, stampAt] : [stampAt, uuidAt];
  const firstEnd = plainValueEnd(line, first);
  const secondEnd = plainValueEnd(line, second);
  if (firstEnd < 0 || secondEnd < 0 || firstEnd > second) return null;
  return { usage, first, firstEnd, second, secondEnd, stamp: stampAt };
}

function blockHead(line: string, usage: number): BlockHead | null {
  const span = contentValueSpan(line);
  if (span === null || span.end > usage || !STOP_FIELDS.test(line.slice(span.end, usage))) return null;
  const key = line.lastIndexOf('"parentUuid":', span.start);
  if (key < 0) return { contentStart: span.start, parent: -1, parentEnd: -1 };
  const parent = key + '"parentUuid":'.length;
  const parentEnd = plainValueEnd(line, parent);
  return parentEnd < 0 || parentEnd > span.start ? null : { contentStart: span.start, parent, parentEnd };
}

/** The end of a plain value at `at`: null, or a string with no escape and no control character; -1 for anything else. */
function plainValueEnd(text: string, at: number): number {
  if (text.startsWith('null', at)) return at + 4;
  if (text.charCodeAt(at) !== 0x22) return -1;
  const close = text.indexOf('"', at + 1);
  if (close < 0 || PLAIN_STRING_BREAKER.test(text.slice(at + 1, close))) return -1;
  return close + 1;
}
const PLAIN_STRING_BREAKER = /[\\\u0000-\u001f]/;

/**
 * A record read without its (first) content value: most of a line's bytes (a reply's text, thinking and tool inputs; a
 * prompt or a tool's result) and nothing the store keeps. Null when that cannot be done, or when what is left says
 * the content is read after all: a limit record's text, Claude Code's own records. The whole line is parsed then.
 */
function recordWithoutContent(line: string): Record<string, unknown> | null {
  const span = contentValueSpan(line);
  if (span === null) return null;
  let raw: unknown;
  try {
    raw = JSON.parse(`${line.slice(0, span.start)}null${line.slice(span.end)}`);
  } catch {
    return null; // the whole line is parsed, and says what is wrong with it
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return null;
  const record = raw as Record<string, unknown>;
  if (record['type'] === 'user') return record;
  if (record['type'] !== 'assistant' || 'apiError' in record) return null;
  const message = record['message'];
  if (typeof message !== 'object' || message === null) return null;
  const m = message as Record<string, unknown>;
  // The value cut must have been the message's own content: another object's, or a key repeated later, leaves it not null.
  return m['content'] === null && m['model'] !== SYNTHETIC_MODEL ? record : null;
}

/**
 * `wholeLine`: parse every byte, content included (what the lean read is held to in tests; the lean read differs only
 * on a content value that is not JSON yet balances, which it reads past rather than reporting).
 */
export function parseClaudeTranscriptLine(line: string, context: { filePath: string; wholeLine?: boolean }): ParsedTranscriptLine {
  const { filePath } = context;
  if (line.trim().length === 0) return { kind: 'ignored' };
  const lean = context.wholeLine === true ? null : recordWithoutContent(line);
  if (lean !== null) return parseRecord(lean, filePath);
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
  return parseRecord(raw as Record<string, unknown>, filePath);
}

function parseRecord(raw: Record<string, unknown>, filePath: string): ParsedTranscriptLine {
  const type = raw['type'];
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
