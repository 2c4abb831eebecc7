import { z } from 'zod';
import { eventText, IGNORED, jsonLine, type HarnessEvent } from '../events.js';
import type { HeadlessResult } from '../port.js';

/**
 * `opencode run --format json` read into the shared vocabulary. Records (captured on opencode-ai 1.18.33 against the
 * fake Anthropic API, tests/fixtures/opencode/; shared/facts/opencode.md §2–§4), each `{type, timestamp, sessionID,
 * part|error}`: `step_start` (one model request begins), `tool_use` (a tool call, reported once it has run),
 * `text` (a reply's text), `step_finish` (the request's tokens and cost; `reason` "tool-calls" when the run goes on,
 * "stop" when it ends), `error` (the run ends, exit 1; a 429 carries the response headers). There is no record for
 * the run as a whole: each step starts with turn_started (the session id is on every record) and reports its own
 * usage; the step that does not end in tool calls completes the turn.
 */

const Tokens = z.looseObject({
  input: z.number().int().nonnegative().catch(0).default(0),
  output: z.number().int().nonnegative().catch(0).default(0),
  reasoning: z.number().int().nonnegative().catch(0).default(0),
  cache: z.looseObject({ read: z.number().int().nonnegative().catch(0).default(0), write: z.number().int().nonnegative().catch(0).default(0) }).catch({ read: 0, write: 0 }).default({ read: 0, write: 0 }),
});
const Part = z.looseObject({
  tool: z.string().optional(),
  callID: z.string().optional(),
  text: z.string().optional(),
  reason: z.string().optional(),
  tokens: Tokens.optional(),
  cost: z.number().optional(),
  state: z.looseObject({ input: z.unknown().optional() }).optional(),
});
const ErrorData = z.looseObject({
  message: z.string().optional(),
  statusCode: z.number().optional(),
  responseHeaders: z.record(z.string(), z.string()).optional(),
});
const Record_ = z.looseObject({
  type: z.string(),
  sessionID: z.string().optional(),
  part: Part.optional(),
  error: z.looseObject({ name: z.string().optional(), data: ErrorData.optional() }).optional(),
});
type OpencodeRecord = z.infer<typeof Record_>;

/** The tool OpenCode asks the person through (its `question` tool); a headless run cannot answer it. */
const QUESTION_TOOL = 'question';
/** step_finish reasons after which OpenCode sends another request (the tools' results): the turn goes on. */
const CONTINUES = new Set(['tool-calls']);
/** step_finish reasons that end a turn that did its work (the rest — "error", "content-filter", … — end it failed). */
const FINISHED_OK = new Set(['stop', 'length']);

function questionText(input: unknown): string {
  const q = z.looseObject({ questions: z.array(z.looseObject({ question: z.string() })).min(1) }).safeParse(input);
  return q.success ? eventText(q.data.questions.map((x) => x.question).join(' ')) : 'the model asks a question';
}

/**
 * When a 429 says its limit resets, from the response headers OpenCode passes through: Anthropic's
 * `anthropic-ratelimit-unified-reset` (epoch seconds) and its claim, else `retry-after` seconds counted from the
 * response's own `date` (no clock here: the response says when it was sent).
 */
export function limitReset(headers: Record<string, string>): { resetsAtMs: number | null; window: string | null } {
  const h = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
  const window = h['anthropic-ratelimit-unified-representative-claim'] ?? null;
  const unified = Number(h['anthropic-ratelimit-unified-reset']);
  if (Number.isFinite(unified) && unified > 0) return { resetsAtMs: unified * 1000, window };
  const after = Number(h['retry-after']);
  const sent = Date.parse(h.date ?? '');
  return { resetsAtMs: Number.isFinite(after) && after >= 0 && Number.isFinite(sent) ? sent + after * 1000 : null, window };
}

function errorEvents(e: OpencodeRecord): HarnessEvent[] {
  const data = e.error?.data;
  const done: HarnessEvent = { kind: 'turn_completed', sessionId: e.sessionID ?? null, ok: false, text: null };
  if (data?.statusCode === 429) return [{ kind: 'rate_limited', ...limitReset(data.responseHeaders ?? {}) }, done];
  const message = data?.message ?? e.error?.name ?? 'the run failed';
  return [{ kind: 'error', message: eventText(message) }, done];
}

export function parseOpencodeHeadlessLine(line: string): HarnessEvent[] {
  const json = jsonLine(line);
  if (json === null) return [{ kind: 'error', message: `not an opencode run --format json record: ${eventText(line.slice(0, 120))}` }];
  const r = Record_.safeParse(json);
  if (!r.success) return [IGNORED];
  const e = r.data;
  const sessionId = e.sessionID ?? null;
  switch (e.type) {
    case 'step_start':
      return [{ kind: 'turn_started', sessionId, model: null }];
    case 'tool_use': {
      const p = e.part;
      if (!p?.tool) return [IGNORED];
      return [p.tool === QUESTION_TOOL ? { kind: 'question', text: questionText(p.state?.input) } : { kind: 'tool_call', name: p.tool, callId: p.callID ?? null }];
    }
    case 'step_finish': {
      const p = e.part;
      const t = p?.tokens;
      // OpenCode counts reasoning apart from output; both are billed as output.
      const usage: HarnessEvent[] = t ? [{ kind: 'usage', inputTokens: t.input, outputTokens: t.output + t.reasoning, cacheReadTokens: t.cache.read, cacheWriteTokens: t.cache.write }] : [];
      const reason = p?.reason ?? 'stop';
      if (CONTINUES.has(reason)) return usage.length > 0 ? usage : [IGNORED];
      return [...usage, { kind: 'turn_completed', sessionId, ok: FINISHED_OK.has(reason), text: null }];
    }
    case 'error':
      return errorEvents(e);
    default:
      return [IGNORED];
  }
}

/** The stream summed up: the last text, the session, the cost of every step, and whether it ended in an error. */
export function readOpencodeOutput(stdout: string): HeadlessResult | null {
  let text: string | null = null;
  let sessionId: string | null = null;
  let cost: number | null = null;
  let ended: 'ok' | 'failed' | null = null;
  let error: string | null = null;
  let seen = false;
  for (const line of stdout.split('\n')) {
    const json = jsonLine(line);
    if (json === null) continue;
    const r = Record_.safeParse(json);
    if (!r.success) continue;
    seen = true;
    const e = r.data;
    if (e.sessionID) sessionId = e.sessionID;
    if (e.type === 'text' && e.part?.text !== undefined) text = e.part.text;
    else if (e.type === 'step_finish') {
      if (typeof e.part?.cost === 'number') cost = (cost ?? 0) + e.part.cost;
      const reason = e.part?.reason ?? 'stop';
      if (!CONTINUES.has(reason)) ended = FINISHED_OK.has(reason) ? 'ok' : 'failed';
      if (ended === 'failed') error = `the model stopped: ${reason}`;
    } else if (e.type === 'error') {
      ended = 'failed';
      const d = e.error?.data;
      error = `${d?.message ?? e.error?.name ?? 'the run failed'}${d?.statusCode ? ` (HTTP ${d.statusCode})` : ''}`;
    }
  }
  if (!seen) return null;
  return { text, isError: ended === null ? null : ended === 'failed', sessionId, costUsd: cost, error: ended === 'failed' && error ? eventText(error) : null };
}
