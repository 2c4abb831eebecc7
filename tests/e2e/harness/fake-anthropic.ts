/**
 * A fake Anthropic Messages API on 127.0.0.1 for driving the real Claude Code
 * binary in end-to-end tests. It speaks the real wire format (see
 * shared/facts/model-apis.md §1 and §4, shared/facts/claude-code.md §2-§3):
 *
 *  - POST /v1/messages[?beta=true]          streamed SSE (or a Message JSON when stream is not true)
 *  - POST /v1/messages/count_tokens         {"input_tokens": n}
 *  - POST /v1/messages/batches[?beta=true]  a Message Batch (§3): created `in_progress`; each GET
 *    GET  /v1/messages/batches/{id}         polls it, `in_progress` for `batch.inProgressPolls` polls (or until
 *                                           `batch.endWhen` says so), then `ended` with its `results_url`
 *    GET  /v1/messages/batches/{id}/results JSONL, one line per request: the reply as a `succeeded` Message whose
 *                                           usage says service_tier "batch", or `expired`/`canceled`/`errored` as
 *                                           `batch.outcomes` queues them
 *    POST /v1/messages/batches/{id}/cancel, DELETE /v1/messages/batches/{id}
 *  - HEAD|GET /api/hello                    200
 *  - anything else                          404 with the standard error envelope
 *
 * Every request is recorded. Behaviour (reply text, usage, subscriber rate-limit
 * headers, a usage-limit 429) can be changed between requests with setBehaviour().
 */
import { randomBytes } from 'node:crypto';
import type http from 'node:http';

import { chunks, startRecordingServer, type RecordedRequest } from './fake-http.js';

// ---------------------------------------------------------------------------
// Types

export type { RecordedRequest };

/** Usage numbers reported for a successful message (input side in message_start, cumulative in message_delta). */
export interface FakeUsage {
  input_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  /** The 5m/1h split of cache_creation_input_tokens (message_start only, as in the real API). */
  cache_creation: { ephemeral_5m_input_tokens: number; ephemeral_1h_input_tokens: number };
  output_tokens: number;
  service_tier: string;
}

export type RateLimitStatus = 'allowed' | 'allowed_warning' | 'rejected';
export type RateLimitClaim = 'five_hour' | 'seven_day';

export interface RateLimitWindow {
  /** 0..1 (0.91 means 91 %). */
  utilization: number;
  /** Epoch SECONDS. */
  resetsAt: number;
  /** Per-window status; default "allowed" ("rejected" when utilization >= 1). */
  status?: RateLimitStatus;
  /** Sent as …-<window>-surpassed-threshold when given (e.g. 0.9). */
  surpassedThreshold?: number;
}

/** Subscriber ("unified") rate-limit headers sent on successful responses. */
export interface RateLimitsBehaviour {
  fiveHour?: RateLimitWindow;
  sevenDay?: RateLimitWindow;
  /** anthropic-ratelimit-unified-status; default "allowed". */
  status?: RateLimitStatus;
  /** anthropic-ratelimit-unified-representative-claim; default: the window with the higher utilization. */
  representativeClaim?: RateLimitClaim;
}

/** Answer every /v1/messages with the subscriber quota 429. */
export interface UsageLimitRejection {
  claim: RateLimitClaim;
  /** Epoch SECONDS when the claimed window resets. */
  resetsAt: number;
  /**
   * Sent as anthropic-ratelimit-unified-overage-status: rejected plus
   * …-overage-disabled-reason (default "org_level_disabled", as seen on real
   * subscriber accounts without extra usage). null sends no overage headers.
   */
  overageDisabledReason?: string | null;
}

export type FakeContentBlock =
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id?: string; name: string; input: Record<string, unknown> };

/** What to answer: a text, or explicit content blocks (text / tool_use). */
export type FakeReply = string | FakeContentBlock[];

export interface FakeBehaviour {
  /** Reply text/blocks, or a function of the request (e.g. echo the user's text). Default "OK from fake API". */
  reply: FakeReply | ((req: RecordedRequest) => FakeReply);
  /** Model reported in the message; default: echo the request's model. */
  model?: string;
  /** Usage numbers; output_tokens defaults to a rough count of the reply. */
  usage: Partial<FakeUsage>;
  /** Subscriber rate-limit headers on successful responses; null/undefined sends none. */
  rateLimits?: RateLimitsBehaviour | null;
  /** When set, every /v1/messages gets the usage-limit 429 instead of an answer. */
  usageLimitRejection?: UsageLimitRejection | null;
  /**
   * A streamed answer is sent up to its last `content_block_stop`, then held until this resolves; only then come
   * `message_delta` (the final usage) and `message_stop`. What a slow end of a real stream looks like to a client
   * that leaves early.
   */
  holdBeforeMessageDelta?: ((req: RecordedRequest) => Promise<void>) | null;
  /** A streamed answer ends (cleanly, at the HTTP level) after its last `content_block_stop`: no final usage ever. */
  endBeforeMessageDelta?: boolean;
}

/** What one batch request ends as: the reply (default), or a failure. */
export type FakeBatchOutcome = 'succeeded' | 'expired' | 'canceled' | { errored: { type: string; message: string } };

export interface FakeBatchBehaviour {
  /** GET polls of a batch that answer `in_progress` before it ends; default 1. */
  inProgressPolls: number;
  /** When set, a batch stays `in_progress` until this returns true (a test ends it when it chooses). */
  endWhen?: ((batch: FakeBatch) => boolean) | null;
  /** Outcomes for the next batch requests, in order of creation (each taken once); then 'succeeded'. */
  outcomes: FakeBatchOutcome[];
}

/** A batch the fake holds, with every poll it answered. */
export interface FakeBatch {
  id: string;
  /** The create call (its path says whether it came with ?beta=true). */
  created: RecordedRequest;
  customIds: string[];
  /** Each request's params, as sent. */
  params: Array<Record<string, any>>;
  polls: number;
  status: 'in_progress' | 'canceling' | 'ended';
  /** The results' JSONL lines, fixed when the batch ends. */
  results: string[] | null;
  /** DELETEd (kept here, for the test to see). */
  deleted?: boolean;
}

export interface FakeAnthropic {
  /** Base URL to put in ANTHROPIC_BASE_URL, e.g. "http://127.0.0.1:43121". */
  url: string;
  port: number;
  /** Every request received, in order. */
  requests: RecordedRequest[];
  /** Only the POST /v1/messages requests (not count_tokens, not batches). */
  messageRequests(): RecordedRequest[];
  /** Every batch created, in order. */
  batches: FakeBatch[];
  /** Only the POST /v1/messages/batches requests. */
  batchCreates(): RecordedRequest[];
  /** Merge into the batch behaviour (applies to the next poll on). */
  setBatchBehaviour(b: Partial<FakeBatchBehaviour>): void;
  readonly batchBehaviour: FakeBatchBehaviour;
  /** Merge into the current behaviour (applies to the next request on). */
  setBehaviour(b: Partial<FakeBehaviour>): void;
  readonly behaviour: FakeBehaviour;
  /** Resolve once at least `n` POST /v1/messages requests have been answered. */
  waitForMessageRequests(n: number, timeoutMs?: number): Promise<RecordedRequest[]>;
  close(): Promise<void>;
}

export const DEFAULT_REPLY_TEXT = 'OK from fake API';

const DEFAULT_USAGE: FakeUsage = {
  input_tokens: 3091,
  cache_creation_input_tokens: 100,
  cache_read_input_tokens: 2000,
  cache_creation: { ephemeral_5m_input_tokens: 100, ephemeral_1h_input_tokens: 0 },
  output_tokens: 12,
  service_tier: 'standard',
};

// ---------------------------------------------------------------------------
// Helpers to read recorded requests

/** Plain text of one message's content (string, or text / tool_result blocks joined with "\n"). */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  const parts: string[] = [];
  for (const block of content) {
    if (!block || typeof block !== 'object') continue;
    const b = block as Record<string, unknown>;
    if (b.type === 'text' && typeof b.text === 'string') parts.push(b.text);
    else if (b.type === 'tool_result') parts.push(contentText(b.content));
    else if (b.type === 'tool_use') parts.push(JSON.stringify(b.input ?? {}));
  }
  return parts.join('\n');
}

/** Role and text of every message in a recorded /v1/messages request, in order. */
export function messageTexts(req: RecordedRequest): Array<{ role: string; text: string }> {
  const messages: unknown = req.body?.messages;
  if (!Array.isArray(messages)) return [];
  return messages.map((m: any) => ({ role: String(m?.role ?? ''), text: contentText(m?.content) }));
}

/** All message texts of a request joined with "\n" (handy for `toContain`). */
export function conversationText(req: RecordedRequest): string {
  return messageTexts(req)
    .map((m) => m.text)
    .join('\n');
}

/**
 * Text of the LAST role:"user" message. Claude Code appends role:"system"
 * messages after the user turn, so "the last message" is not the user's.
 */
export function lastUserText(req: RecordedRequest): string {
  const all = messageTexts(req);
  for (let i = all.length - 1; i >= 0; i--) if (all[i]!.role === 'user') return all[i]!.text;
  return '';
}

/**
 * What the user typed in the last role:"user" message: its text blocks minus
 * the `<system-reminder>` blocks Claude Code prepends (e.g. "hello").
 */
export function lastUserPrompt(req: RecordedRequest): string {
  const messages: unknown = req.body?.messages;
  if (!Array.isArray(messages)) return '';
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i] as { role?: unknown; content?: unknown };
    if (m?.role !== 'user') continue;
    if (typeof m.content === 'string') return m.content;
    if (!Array.isArray(m.content)) return '';
    return m.content
      .filter((b: any) => b?.type === 'text' && typeof b.text === 'string' && !b.text.trimStart().startsWith('<system-reminder>'))
      .map((b: any) => b.text as string)
      .join('\n');
  }
  return '';
}

/** The system prompt of a request as text. */
export function systemText(req: RecordedRequest): string {
  return contentText(req.body?.system);
}

// ---------------------------------------------------------------------------
// Wire helpers

function newId(prefix: string): string {
  return `${prefix}${randomBytes(12).toString('base64url')}`;
}

function sse(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

function errorEnvelope(type: string, message: string, requestId: string): string {
  return JSON.stringify({ type: 'error', error: { type, message }, request_id: requestId });
}

const WINDOW_HEADER: Record<RateLimitClaim, string> = { five_hour: '5h', seven_day: '7d' };

function windowHeaders(prefix: string, w: RateLimitWindow): Record<string, string> {
  const status = w.status ?? (w.utilization >= 1 ? 'rejected' : 'allowed');
  const headers: Record<string, string> = {
    [`anthropic-ratelimit-unified-${prefix}-utilization`]: String(w.utilization),
    [`anthropic-ratelimit-unified-${prefix}-reset`]: String(Math.floor(w.resetsAt)),
    [`anthropic-ratelimit-unified-${prefix}-status`]: status,
  };
  if (w.surpassedThreshold !== undefined) {
    headers[`anthropic-ratelimit-unified-${prefix}-surpassed-threshold`] = String(w.surpassedThreshold);
  }
  return headers;
}

/** The subscriber "unified" rate-limit headers for a set of windows. */
export function unifiedRateLimitHeaders(rl: RateLimitsBehaviour): Record<string, string> {
  const windows: Array<[RateLimitClaim, RateLimitWindow]> = [];
  if (rl.fiveHour) windows.push(['five_hour', rl.fiveHour]);
  if (rl.sevenDay) windows.push(['seven_day', rl.sevenDay]);
  if (windows.length === 0) return {};
  let claim = rl.representativeClaim;
  if (!claim) {
    claim = windows.reduce((a, b) => (b[1].utilization > a[1].utilization ? b : a))[0];
  }
  const rep = windows.find(([c]) => c === claim)?.[1] ?? windows[0]![1];
  const headers: Record<string, string> = {
    'anthropic-ratelimit-unified-status': rl.status ?? 'allowed',
    'anthropic-ratelimit-unified-reset': String(Math.floor(rep.resetsAt)),
    'anthropic-ratelimit-unified-representative-claim': claim,
  };
  for (const [c, w] of windows) Object.assign(headers, windowHeaders(WINDOW_HEADER[c], w));
  return headers;
}

/** The reply to one Messages request (`rec.body` is its params): its blocks, stop reason, model, usage and id. */
function replyOf(rec: RecordedRequest, b: FakeBehaviour) {
  const reply = typeof b.reply === 'function' ? b.reply(rec) : b.reply;
  const blocks: FakeContentBlock[] = typeof reply === 'string' ? [{ type: 'text', text: reply }] : reply;
  const content = blocks.map((blk) => (blk.type === 'tool_use' ? { ...blk, id: blk.id ?? newId('toolu_fake_') } : blk));
  const stopReason = content.some((blk) => blk.type === 'tool_use') ? 'tool_use' : 'end_turn';
  const model = b.model ?? (typeof rec.body?.model === 'string' ? (rec.body.model as string) : 'claude-sonnet-4-6');
  const approxOut = Math.max(1, Math.ceil(content.reduce((n, blk) => n + JSON.stringify(blk).length, 0) / 4));
  const cacheWrite = b.usage.cache_creation_input_tokens ?? DEFAULT_USAGE.cache_creation_input_tokens;
  const usage: FakeUsage = {
    ...DEFAULT_USAGE,
    output_tokens: approxOut,
    ...b.usage,
    // Without an explicit split, all cache writes are 5-minute writes.
    cache_creation: b.usage.cache_creation ?? { ephemeral_5m_input_tokens: cacheWrite, ephemeral_1h_input_tokens: 0 },
  };
  return { content, stopReason, model, usage, messageId: newId('msg_fake_') };
}

/** The whole Message of a reply, as a non-streaming answer and a batch result carry it (`usage` with its tier and geo). */
function messageOf(r: ReturnType<typeof replyOf>, usageMore: Record<string, unknown>) {
  return { id: r.messageId, type: 'message', role: 'assistant', model: r.model, content: r.content, stop_reason: r.stopReason, stop_sequence: null, usage: { ...r.usage, ...usageMore } };
}

// ---------------------------------------------------------------------------
// Server

export interface StartFakeAnthropicOptions extends Partial<FakeBehaviour> {
  /** Port to bind on 127.0.0.1; default 0 (any free port). */
  port?: number;
}

export async function startFakeAnthropic(opts: StartFakeAnthropicOptions = {}): Promise<FakeAnthropic> {
  const { port: wantedPort = 0, ...initial } = opts;
  let behaviour: FakeBehaviour = { reply: DEFAULT_REPLY_TEXT, usage: {}, ...initial };
  const batchState: BatchState = { behaviour: { inProgressPolls: 1, outcomes: [] }, batches: [] };
  const server = await startRecordingServer<RecordedRequest>({
    port: wantedPort,
    handle: (rec, res) => (rec.pathname.startsWith('/v1/messages/batches') ? handleBatch(rec, res, behaviour, batchState) : handle(rec, res, behaviour)),
    serverError(rec, err) {
      const requestId = newId('req_fake_');
      rec.requestId = requestId;
      return { headers: { 'request-id': requestId }, body: errorEnvelope('api_error', `fake server error: ${String(err)}`, requestId) };
    },
  });
  const messageRequests = () => server.requestsTo('POST', '/v1/messages');

  return {
    url: server.origin,
    port: server.port,
    requests: server.requests,
    messageRequests,
    batches: batchState.batches,
    batchCreates: () => server.requestsTo('POST', '/v1/messages/batches'),
    setBatchBehaviour(b: Partial<FakeBatchBehaviour>) {
      batchState.behaviour = { ...batchState.behaviour, ...b };
    },
    get batchBehaviour() {
      return batchState.behaviour;
    },
    setBehaviour(b: Partial<FakeBehaviour>) {
      behaviour = { ...behaviour, ...b };
    },
    get behaviour() {
      return behaviour;
    },
    waitForMessageRequests: (n: number, timeoutMs = 15_000) => server.waitForAnswered('POST', '/v1/messages', n, timeoutMs),
    close: () => server.close(),
  };
}

function handle(rec: RecordedRequest, res: http.ServerResponse, b: FakeBehaviour): void {
  const requestId = newId('req_fake_');
  rec.requestId = requestId;
  const baseHeaders = { 'request-id': requestId, 'anthropic-organization-id': '00000000-0000-4000-8000-000000000000' };
  const send = (status: number, headers: Record<string, string>, body: string) => {
    rec.status = status;
    res.writeHead(status, { ...baseHeaders, ...headers });
    res.end(body);
  };

  if (rec.pathname === '/api/hello' && (rec.method === 'HEAD' || rec.method === 'GET')) {
    send(200, { 'content-type': 'application/json' }, rec.method === 'HEAD' ? '' : JSON.stringify({ message: 'hello' }));
    return;
  }

  if (rec.pathname === '/v1/messages/count_tokens' && rec.method === 'POST') {
    const n = Math.max(1, Math.ceil(rec.rawBody.length / 4));
    send(200, { 'content-type': 'application/json' }, JSON.stringify({ input_tokens: n }));
    return;
  }

  if (rec.pathname !== '/v1/messages' || rec.method !== 'POST') {
    send(404, { 'content-type': 'application/json' }, errorEnvelope('not_found_error', `Not found: ${rec.method} ${rec.pathname}`, requestId));
    return;
  }

  if (!rec.body || typeof rec.body !== 'object' || !Array.isArray(rec.body.messages)) {
    send(400, { 'content-type': 'application/json' }, errorEnvelope('invalid_request_error', 'messages: Field required', requestId));
    return;
  }

  if (b.usageLimitRejection) {
    const { claim, resetsAt, overageDisabledReason = 'org_level_disabled' } = b.usageLimitRejection;
    const rl: RateLimitsBehaviour = { ...(b.rateLimits ?? {}), status: 'rejected', representativeClaim: claim };
    const rejected: RateLimitWindow = { utilization: 1, resetsAt, status: 'rejected' };
    if (claim === 'five_hour') rl.fiveHour = rejected;
    else rl.sevenDay = rejected;
    send(
      429,
      {
        'content-type': 'application/json',
        ...unifiedRateLimitHeaders(rl),
        ...(overageDisabledReason === null
          ? {}
          : {
              'anthropic-ratelimit-unified-overage-status': 'rejected',
              'anthropic-ratelimit-unified-overage-disabled-reason': overageDisabledReason,
            }),
      },
      errorEnvelope('rate_limit_error', 'This request would exceed your account\'s rate limit. Please try again later.', requestId),
    );
    return;
  }

  const reply = replyOf(rec, b);
  const { content, stopReason, model, usage, messageId } = reply;
  const rlHeaders = b.rateLimits ? unifiedRateLimitHeaders(b.rateLimits) : {};

  if (rec.body.stream !== true) {
    send(200, { 'content-type': 'application/json', ...rlHeaders }, JSON.stringify(messageOf(reply, { inference_geo: 'global' })));
    return;
  }

  rec.status = 200;
  res.writeHead(200, {
    ...baseHeaders,
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    ...rlHeaders,
  });
  let out = sse('message_start', {
    type: 'message_start',
    message: {
      id: messageId,
      type: 'message',
      role: 'assistant',
      model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: {
        input_tokens: usage.input_tokens,
        cache_creation_input_tokens: usage.cache_creation_input_tokens,
        cache_read_input_tokens: usage.cache_read_input_tokens,
        cache_creation: usage.cache_creation,
        output_tokens: 1,
        service_tier: usage.service_tier,
        inference_geo: 'global',
      },
    },
  });
  content.forEach((blk, index) => {
    if (blk.type === 'text') {
      out += sse('content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
      if (index === 0) out += sse('ping', { type: 'ping' });
      for (const piece of chunks(blk.text, 24)) {
        out += sse('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'text_delta', text: piece } });
      }
    } else {
      out += sse('content_block_start', {
        type: 'content_block_start',
        index,
        content_block: { type: 'tool_use', id: blk.id, name: blk.name, input: {} },
      });
      if (index === 0) out += sse('ping', { type: 'ping' });
      out += sse('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: '' } });
      for (const piece of chunks(JSON.stringify(blk.input), 24)) {
        out += sse('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: piece } });
      }
    }
    out += sse('content_block_stop', { type: 'content_block_stop', index });
  });
  const finalUsage = () => sse('message_delta', {
    type: 'message_delta',
    delta: { stop_reason: stopReason, stop_sequence: null },
    usage: {
      input_tokens: usage.input_tokens,
      cache_creation_input_tokens: usage.cache_creation_input_tokens,
      cache_read_input_tokens: usage.cache_read_input_tokens,
      output_tokens: usage.output_tokens,
    },
  }) + sse('message_stop', { type: 'message_stop' });
  if (b.endBeforeMessageDelta) {
    res.end(out);
    return;
  }
  const hold = b.holdBeforeMessageDelta;
  if (!hold) {
    res.end(out + finalUsage());
    return;
  }
  res.write(out);
  void hold(rec).then(() => {
    if (!res.destroyed) res.end(finalUsage());
  });
}

// ---------------------------------------------------------------------------
// Message Batches (shared/facts/model-apis.md §3)

interface BatchState {
  behaviour: FakeBatchBehaviour;
  batches: FakeBatch[];
}

const CUSTOM_ID = /^[a-zA-Z0-9_-]{1,64}$/;
const DAY_MS = 86_400_000;

function batchObject(batch: FakeBatch, origin: string): Record<string, unknown> {
  const created = batch.created.receivedAt;
  const counts = { processing: 0, succeeded: 0, errored: 0, canceled: 0, expired: 0 };
  if (batch.status !== 'ended' || !batch.results) counts.processing = batch.customIds.length;
  else for (const line of batch.results) counts[(JSON.parse(line) as { result: { type: keyof typeof counts } }).result.type] += 1;
  const ended = batch.status === 'ended';
  return {
    id: batch.id,
    type: 'message_batch',
    processing_status: batch.status,
    request_counts: counts,
    ended_at: ended ? new Date().toISOString() : null,
    created_at: new Date(created).toISOString(),
    expires_at: new Date(created + DAY_MS).toISOString(),
    archived_at: null,
    cancel_initiated_at: null,
    results_url: ended ? `${origin}/v1/messages/batches/${batch.id}/results` : null,
  };
}

/** The JSONL line of one request as it ends. */
function resultLine(customId: string, params: Record<string, any>, outcome: FakeBatchOutcome, created: RecordedRequest, b: FakeBehaviour): string {
  // A Messages body with no messages (or max_tokens under 1) is refused only now: batches validate asynchronously.
  if (!Array.isArray(params.messages) || !(Number(params.max_tokens) >= 1)) {
    outcome = { errored: { type: 'invalid_request_error', message: !Array.isArray(params.messages) ? 'messages: Field required' : 'max_tokens: must be at least 1' } };
  }
  if (outcome === 'expired' || outcome === 'canceled') return JSON.stringify({ custom_id: customId, result: { type: outcome } });
  if (typeof outcome === 'object') {
    return JSON.stringify({ custom_id: customId, result: { type: 'errored', error: { type: 'error', error: outcome.errored, request_id: null } } });
  }
  const message = messageOf(replyOf({ ...created, body: params }, b), { service_tier: 'batch', inference_geo: 'not_available' });
  return JSON.stringify({ custom_id: customId, result: { type: 'succeeded', message } });
}

function handleBatch(rec: RecordedRequest, res: http.ServerResponse, b: FakeBehaviour, state: BatchState): void {
  const requestId = newId('req_fake_');
  rec.requestId = requestId;
  const send = (status: number, body: string, contentType = 'application/json') => {
    rec.status = status;
    res.writeHead(status, { 'request-id': requestId, 'content-type': contentType });
    res.end(body);
  };
  const fail = (status: number, type: string, message: string) => send(status, errorEnvelope(type, message, requestId));
  const origin = `http://${rec.headers.host ?? '127.0.0.1'}`;
  if (rec.headers['anthropic-version'] === undefined) return fail(400, 'invalid_request_error', 'anthropic-version: header is required');

  if (rec.method === 'POST' && rec.pathname === '/v1/messages/batches') {
    const requests: unknown = rec.body?.requests;
    if (!Array.isArray(requests) || requests.length === 0) return fail(400, 'invalid_request_error', 'requests: Field required');
    const ids = new Set<string>();
    for (const [i, r] of requests.entries()) {
      const q = r as { custom_id?: unknown; params?: unknown };
      if (typeof q?.custom_id !== 'string' || !CUSTOM_ID.test(q.custom_id)) return fail(400, 'invalid_request_error', `requests.${i}.custom_id: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'`);
      if (ids.has(q.custom_id)) return fail(400, 'invalid_request_error', `requests.${i}.custom_id: must be unique within the batch`);
      ids.add(q.custom_id);
      if (!q.params || typeof q.params !== 'object') return fail(400, 'invalid_request_error', `requests.${i}.params: Field required`);
      // Batch params are the non-streaming kind (the SDK types them `stream?: false`): this fake refuses a stream.
      if ((q.params as { stream?: unknown }).stream !== undefined) return fail(400, 'invalid_request_error', `requests.${i}.params.stream: Extra inputs are not permitted`);
    }
    const batch: FakeBatch = {
      id: newId('msgbatch_fake_'),
      created: rec,
      customIds: (requests as Array<{ custom_id: string }>).map((r) => r.custom_id),
      params: (requests as Array<{ params: Record<string, any> }>).map((r) => r.params),
      polls: 0,
      status: 'in_progress',
      results: null,
    };
    state.batches.push(batch);
    return send(200, JSON.stringify(batchObject(batch, origin)));
  }

  const m = /^\/v1\/messages\/batches\/([^/]+)(\/results|\/cancel)?$/.exec(rec.pathname);
  const batch = m ? state.batches.find((x) => x.id === m[1] && !x.deleted) : undefined;
  if (!m || !batch) return fail(404, 'not_found_error', `Not found: ${rec.method} ${rec.pathname}`);
  const end = () => {
    batch.results = batch.customIds.map((id, i) => resultLine(id, batch.params[i]!, state.behaviour.outcomes.shift() ?? 'succeeded', batch.created, b));
    batch.status = 'ended';
  };

  if (rec.method === 'GET' && m[2] === undefined) {
    batch.polls += 1;
    if (batch.status !== 'ended') {
      const endWhen = state.behaviour.endWhen;
      const done = endWhen ? endWhen(batch) : batch.polls > state.behaviour.inProgressPolls;
      if (done) end();
    }
    return send(200, JSON.stringify(batchObject(batch, origin)));
  }
  if (rec.method === 'GET' && m[2] === '/results') {
    if (batch.status !== 'ended' || !batch.results) return fail(400, 'invalid_request_error', `Batch ${batch.id} is still processing: its results are not available yet`);
    return send(200, batch.results.map((l) => `${l}\n`).join(''), 'application/x-jsonl');
  }
  if (rec.method === 'POST' && m[2] === '/cancel') {
    if (batch.status === 'in_progress') {
      batch.status = 'ended';
      batch.results = batch.customIds.map((id) => JSON.stringify({ custom_id: id, result: { type: 'canceled' } }));
    }
    return send(200, JSON.stringify(batchObject(batch, origin)));
  }
  if (rec.method === 'DELETE' && m[2] === undefined) {
    if (batch.status !== 'ended') return fail(400, 'invalid_request_error', `Batch ${batch.id} cannot be deleted while processing: cancel it first`);
    batch.deleted = true;
    return send(200, JSON.stringify({ id: batch.id, type: 'message_batch_deleted' }));
  }
  return fail(404, 'not_found_error', `Not found: ${rec.method} ${rec.pathname}`);
}
