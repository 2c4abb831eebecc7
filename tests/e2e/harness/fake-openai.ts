/**
 * A fake OpenAI Responses API on 127.0.0.1 for driving the real Codex CLI in end-to-end tests. It speaks the wire
 * format Codex 0.169 uses with a custom `wire_api = "responses"` provider (shared/facts/codex-cli.md §0, §4;
 * shared/facts/model-apis.md §5):
 *
 *  - POST /v1/responses            streamed SSE: response.created, response.in_progress, then per output item
 *                                  response.output_item.added, (message: response.content_part.added,
 *                                  response.output_text.delta…, response.output_text.done,
 *                                  response.content_part.done | function_call:
 *                                  response.function_call_arguments.delta/.done), response.output_item.done,
 *                                  and response.completed with `usage`. Every event has a sequence_number.
 *                                  The Codex rate-limit headers (x-codex-primary-*, x-codex-secondary-*,
 *                                  x-codex-credits-*, x-codex-limit-name) go on the response when configured.
 *  - GET  /v1/responses + Upgrade  (Responses over WebSocket, tried by the built-in provider) refused with 426,
 *                                  which makes Codex fall back to POST + SSE
 *  - GET  /v1/models               {"object":"list","data":[…]}
 *  - anything else                 404 with the OpenAI error envelope
 *
 * A usage-limit rejection answers POST /v1/responses with the 429 Codex maps to `usage_limit_exceeded`.
 * Flex (§5.4): a request's `service_tier` is recorded; with `flexUnavailable: n` the next n requests asking for flex
 * get the "Resource Unavailable" 429 (its exact body is unconfirmed: the one below names it in code and message), and
 * an answered flex request says `service_tier: "flex"` in its terminal event (`auto` before it, as the API may).
 * Every request is recorded. Behaviour can be set for all later requests (setBehaviour) or queued for the next
 * ones only (queueBehaviour), and any field of it may be a function of the request.
 */
import { randomBytes } from 'node:crypto';
import type http from 'node:http';

import { chunks, startRecordingServer, type RecordedRequest as BaseRecordedRequest } from './fake-http.js';

// ---------------------------------------------------------------------------
// Types

/** A recorded request (fake-http.ts), with the response id of an answered POST /v1/responses. */
export interface RecordedRequest extends BaseRecordedRequest {
  /** The response id (resp_…) of an answered POST /v1/responses. */
  responseId?: string;
  /** The request body's `service_tier`, when it had one. */
  serviceTier?: string;
}

/** Usage in response.completed (OpenAI shape: input_tokens INCLUDES cached_tokens, output_tokens INCLUDES reasoning). */
export interface FakeOpenAIUsage {
  input_tokens: number;
  cached_tokens: number;
  output_tokens: number;
  reasoning_tokens: number;
}

/** One Codex rate-limit window, as sent in the x-codex-<primary|secondary>-* headers. */
export interface CodexWindow {
  /** 0..100 (a float is fine: 42.5). */
  usedPercent: number;
  /** 300 for the 5-hour window, 10080 for the weekly one. */
  windowMinutes: number;
  /** Epoch SECONDS. */
  resetAt: number;
}

export interface CodexCredits {
  hasCredits: boolean;
  unlimited: boolean;
  /** A decimal string, e.g. "12.34". */
  balance?: string;
}

/** The rate-limit headers Codex parses on every HTTP response (the 429 included). */
export interface CodexRateLimits {
  primary?: CodexWindow;
  secondary?: CodexWindow;
  credits?: CodexCredits;
  /** x-codex-limit-name; omitted when undefined. */
  limitName?: string;
  /**
   * Header family: x-<family>-primary-used-percent … Default "codex". Codex reports a family as
   * limit_id <family> with "-" turned into "_". (The credits and limit-name headers are always x-codex-….)
   */
  family?: string;
}

/** Answer POST /v1/responses with the plan usage-limit 429 (Codex: "You've hit your usage limit…", exec exits 1). */
export interface UsageLimitRejection {
  /** Epoch SECONDS; Codex prints it as "try again at <local time>". */
  resetsAt: number;
  /** Default "plus". Changes Codex's wording (plus → "Upgrade to Pro…"). */
  planType?: string;
  /** Headers to send with the 429 (default: primary at 100 %, the window resetting at resetsAt). null sends none. */
  rateLimits?: CodexRateLimits | null;
  /** x-codex-active-limit (default: the rateLimits family, or "codex"). */
  activeLimit?: string;
}

export type FakeOutputItem =
  | { type: 'message'; text: string }
  | { type: 'function_call'; name: string; arguments: string | Record<string, unknown>; call_id?: string; namespace?: string };

/** What to answer: a text (one assistant message), or explicit output items. */
export type FakeOpenAIReply = string | FakeOutputItem[];

type OrFn<T> = T | ((req: RecordedRequest) => T);

export interface FakeOpenAIBehaviour {
  /** Reply text/items. Default: `fake reply #<n> to: <last user text>`. */
  reply: OrFn<FakeOpenAIReply>;
  /** Model reported in the response; default: echo the request's model. */
  model?: OrFn<string | undefined>;
  /** Usage numbers (partial: the rest default). */
  usage: OrFn<Partial<FakeOpenAIUsage>>;
  /** Rate-limit headers on successful responses; null/undefined sends none. */
  rateLimits?: OrFn<CodexRateLimits | null | undefined>;
  /**
   * An in-stream `codex.rate_limits` event sent after response.created. Codex 0.169 IGNORES it over HTTP SSE (it
   * uses it only over WebSocket): keep it for tests that prove sleds does not depend on it.
   */
  rateLimitsEvent?: OrFn<Record<string, unknown> | null | undefined>;
  /** When set, POST /v1/responses gets the usage-limit 429 instead of an answer. */
  usageLimitRejection?: OrFn<UsageLimitRejection | null | undefined>;
  /** Extra response headers for POST /v1/responses. */
  extraHeaders?: OrFn<Record<string, string> | undefined>;
  /**
   * A streamed answer is sent up to its last `response.output_item.done`, then held until this resolves; only then
   * comes `response.completed` (the only event with usage).
   */
  holdBeforeCompleted?: ((req: RecordedRequest) => Promise<void>) | null;
  /** A streamed answer ends (cleanly, at the HTTP level) before `response.completed`: no usage ever. */
  endBeforeCompleted?: boolean;
  /** The next this-many requests asking for `service_tier: "flex"` get the flex 429 "Resource Unavailable". */
  flexUnavailable?: number;
}

export interface FakeOpenAI {
  /** Origin, e.g. "http://127.0.0.1:43121". */
  origin: string;
  /** Base URL for a provider's base_url / openai_base_url: "<origin>/v1". */
  url: string;
  port: number;
  /** Every request received, in order. */
  requests: RecordedRequest[];
  /** Only the POST /v1/responses requests. */
  responseRequests(): RecordedRequest[];
  /** Merge into the current behaviour (applies to every later request). */
  setBehaviour(b: Partial<FakeOpenAIBehaviour>): void;
  /** Behaviour overrides for the NEXT POST /v1/responses only (FIFO; each merged over the current behaviour). */
  queueBehaviour(...b: Array<Partial<FakeOpenAIBehaviour>>): void;
  readonly behaviour: FakeOpenAIBehaviour;
  /** Resolves once at least `n` POST /v1/responses have been answered. */
  waitForResponseRequests(n: number, timeoutMs?: number): Promise<RecordedRequest[]>;
  close(): Promise<void>;
}

const DEFAULT_USAGE: FakeOpenAIUsage = { input_tokens: 1001, cached_tokens: 200, output_tokens: 50, reasoning_tokens: 10 };

// ---------------------------------------------------------------------------
// Helpers to read recorded requests

function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .filter((c: any) => c && typeof c.text === 'string')
    .map((c: any) => c.text as string)
    .join('\n');
}

/** Role and text of every `type:"message"` input item of a recorded /v1/responses request, in order. */
export function inputMessages(req: RecordedRequest): Array<{ role: string; text: string }> {
  const input: unknown = req.body?.input;
  if (typeof input === 'string') return [{ role: 'user', text: input }];
  if (!Array.isArray(input)) return [];
  return input
    .filter((i: any) => i && (i.type === 'message' || (i.type === undefined && typeof i.role === 'string')))
    .map((i: any) => ({ role: String(i.role ?? ''), text: contentText(i.content) }));
}

/**
 * What the user typed in the last role:"user" message. Codex sends its environment context
 * (`<environment_context>…`) and AGENTS.md-like instructions as user messages too; those start with "<" and are
 * skipped.
 */
export function lastUserInput(req: RecordedRequest): string {
  const all = inputMessages(req).filter((m) => m.role === 'user' && !m.text.trimStart().startsWith('<'));
  return all.length ? all[all.length - 1]!.text : '';
}

/** x-codex-turn-metadata, parsed (session_id, turn_id, request_kind, turn_trigger, …), or undefined. */
export function turnMetadata(req: RecordedRequest): Record<string, unknown> | undefined {
  const raw = req.headers['x-codex-turn-metadata'];
  if (typeof raw !== 'string') return undefined;
  try {
    return JSON.parse(raw) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

// ---------------------------------------------------------------------------
// Wire helpers

function newId(prefix: string): string {
  return `${prefix}${randomBytes(12).toString('hex')}`;
}

function errorEnvelope(message: string, type: string, code: string | null = null, param: string | null = null): string {
  return JSON.stringify({ error: { message, type, param, code } });
}

function bool(b: boolean): string {
  return b ? 'true' : 'false';
}

/** The x-codex-* headers for a set of limits (shared/facts/codex-cli.md §4). */
export function codexRateLimitHeaders(rl: CodexRateLimits): Record<string, string> {
  const family = rl.family ?? 'codex';
  const h: Record<string, string> = {};
  const windowHeaders = (name: 'primary' | 'secondary', w: CodexWindow | undefined) => {
    if (!w) return;
    h[`x-${family}-${name}-used-percent`] = String(w.usedPercent);
    h[`x-${family}-${name}-window-minutes`] = String(w.windowMinutes);
    h[`x-${family}-${name}-reset-at`] = String(Math.floor(w.resetAt));
  };
  windowHeaders('primary', rl.primary);
  windowHeaders('secondary', rl.secondary);
  if (rl.credits) {
    h['x-codex-credits-has-credits'] = bool(rl.credits.hasCredits);
    h['x-codex-credits-unlimited'] = bool(rl.credits.unlimited);
    if (rl.credits.balance !== undefined) h['x-codex-credits-balance'] = rl.credits.balance;
  }
  if (rl.limitName !== undefined) h['x-codex-limit-name'] = rl.limitName;
  return h;
}

function resolve<T>(v: OrFn<T>, req: RecordedRequest): T {
  return typeof v === 'function' ? (v as (r: RecordedRequest) => T)(req) : v;
}

// ---------------------------------------------------------------------------
// Server

export interface StartFakeOpenAIOptions extends Partial<FakeOpenAIBehaviour> {
  /** Port to bind on 127.0.0.1; default 0 (any free port). */
  port?: number;
}

export async function startFakeOpenAI(opts: StartFakeOpenAIOptions = {}): Promise<FakeOpenAI> {
  const { port: wantedPort = 0, ...initial } = opts;
  let behaviour: FakeOpenAIBehaviour = {
    reply: (req) => `fake reply #${req.index} to: ${lastUserInput(req)}`,
    usage: {},
    ...initial,
  };
  const queued: Array<Partial<FakeOpenAIBehaviour>> = [];
  const server = await startRecordingServer<RecordedRequest>({
    port: wantedPort,
    handle(rec, res) {
      const isResponses = rec.method === 'POST' && rec.pathname === '/v1/responses';
      if (isResponses && typeof rec.body?.service_tier === 'string') rec.serviceTier = rec.body.service_tier as string;
      if (isResponses && rec.serviceTier === 'flex' && (behaviour.flexUnavailable ?? 0) > 0) {
        behaviour = { ...behaviour, flexUnavailable: behaviour.flexUnavailable! - 1 };
        return flexUnavailable(rec, res);
      }
      handle(rec, res, isResponses && queued.length ? { ...behaviour, ...queued.shift()! } : behaviour);
    },
    serverError: (rec, err) => ({ headers: { 'x-request-id': rec.requestId ?? newId('req_') }, body: errorEnvelope(`fake server error: ${String(err)}`, 'server_error') }),
    // Responses over WebSocket: refuse the upgrade so Codex falls back to POST + SSE.
    upgrade(rec, socket) {
      rec.status = 426;
      socket.on('error', () => undefined);
      socket.end('HTTP/1.1 426 Upgrade Required\r\nconnection: close\r\ncontent-length: 0\r\n\r\n');
    },
  });
  const responseRequests = () => server.requestsTo('POST', '/v1/responses');

  return {
    origin: server.origin,
    url: `${server.origin}/v1`,
    port: server.port,
    requests: server.requests,
    responseRequests,
    setBehaviour(b) {
      behaviour = { ...behaviour, ...b };
    },
    queueBehaviour(...b) {
      queued.push(...b);
    },
    get behaviour() {
      return behaviour;
    },
    waitForResponseRequests: (n, timeoutMs = 15_000) => server.waitForAnswered('POST', '/v1/responses', n, timeoutMs),
    close: () => server.close(),
  };
}

/** Flex with no capacity now: not charged, retry later (§5.4). */
function flexUnavailable(rec: RecordedRequest, res: http.ServerResponse): void {
  const requestId = newId('req_');
  rec.requestId = requestId;
  rec.status = 429;
  res.writeHead(429, { 'x-request-id': requestId, 'content-type': 'application/json', 'retry-after': '1' });
  res.end(errorEnvelope('Resource Unavailable: flex processing has no capacity for this request right now. Please retry later or use the default tier.', 'rate_limit_error', 'resource_unavailable'));
}

function handle(rec: RecordedRequest, res: http.ServerResponse, b: FakeOpenAIBehaviour): void {
  const requestId = newId('req_');
  rec.requestId = requestId;
  const send = (status: number, headers: Record<string, string>, body: string) => {
    rec.status = status;
    res.writeHead(status, { 'x-request-id': requestId, 'openai-processing-ms': '7', ...headers });
    res.end(body);
  };

  if (rec.method === 'GET' && rec.pathname === '/v1/models') {
    send(200, { 'content-type': 'application/json' }, JSON.stringify({ object: 'list', data: [] }));
    return;
  }
  if (rec.pathname !== '/v1/responses' || rec.method !== 'POST') {
    send(404, { 'content-type': 'application/json' }, errorEnvelope(`Invalid URL (${rec.method} ${rec.pathname})`, 'invalid_request_error'));
    return;
  }
  if (!rec.body || typeof rec.body !== 'object') {
    send(400, { 'content-type': 'application/json' }, errorEnvelope('We could not parse the JSON body of your request.', 'invalid_request_error'));
    return;
  }

  const extra = resolve(b.extraHeaders, rec) ?? {};
  const rejection = resolve(b.usageLimitRejection, rec);
  if (rejection) {
    const rl =
      rejection.rateLimits === undefined
        ? { primary: { usedPercent: 100, windowMinutes: 300, resetAt: rejection.resetsAt } }
        : rejection.rateLimits;
    const headers: Record<string, string> = { 'content-type': 'application/json', ...(rl ? codexRateLimitHeaders(rl) : {}), ...extra };
    headers['x-codex-active-limit'] = rejection.activeLimit ?? rl?.family ?? 'codex';
    send(
      429,
      headers,
      JSON.stringify({ error: { type: 'usage_limit_reached', message: 'The usage limit has been reached', plan_type: rejection.planType ?? 'plus', resets_at: Math.floor(rejection.resetsAt) } }),
    );
    return;
  }

  const model = resolve(b.model, rec) ?? (typeof rec.body.model === 'string' ? rec.body.model : 'gpt-fake');
  const u: FakeOpenAIUsage = { ...DEFAULT_USAGE, ...resolve(b.usage, rec) };
  const usage = {
    input_tokens: u.input_tokens,
    input_tokens_details: { cached_tokens: u.cached_tokens },
    output_tokens: u.output_tokens,
    output_tokens_details: { reasoning_tokens: u.reasoning_tokens },
    total_tokens: u.input_tokens + u.output_tokens,
  };
  const reply = resolve(b.reply, rec);
  const items: FakeOutputItem[] = typeof reply === 'string' ? [{ type: 'message', text: reply }] : reply;
  const rl = resolve(b.rateLimits, rec);
  const responseId = newId('resp_');
  rec.responseId = responseId;
  const createdAt = Math.floor(Date.now() / 1000);

  let seq = 0;
  let out = '';
  const event = (type: string, data: Record<string, unknown>) => {
    out += `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seq++, ...data })}\n\n`;
  };
  const flex = rec.serviceTier === 'flex';
  const responseObject = (status: string, output: unknown[], withUsage: boolean) => ({
    id: responseId,
    object: 'response',
    created_at: createdAt,
    status,
    model,
    output,
    parallel_tool_calls: rec.body.parallel_tool_calls ?? true,
    tool_choice: rec.body.tool_choice ?? 'auto',
    tools: [],
    // The tier actually used is said in the terminal event; before it, flex may read `auto`.
    service_tier: flex ? (withUsage ? 'flex' : 'auto') : 'default',
    usage: withUsage ? usage : null,
    error: null,
    incomplete_details: null,
  });

  event('response.created', { response: responseObject('in_progress', [], false) });
  const rlEvent = resolve(b.rateLimitsEvent, rec);
  if (rlEvent) out += `event: codex.rate_limits\ndata: ${JSON.stringify({ type: 'codex.rate_limits', ...rlEvent })}\n\n`;
  event('response.in_progress', { response: responseObject('in_progress', [], false) });

  const done: unknown[] = [];
  items.forEach((item, output_index) => {
    if (item.type === 'message') {
      const id = newId('msg_');
      event('response.output_item.added', { output_index, item: { id, type: 'message', status: 'in_progress', role: 'assistant', content: [] } });
      event('response.content_part.added', { item_id: id, output_index, content_index: 0, part: { type: 'output_text', text: '', annotations: [] } });
      for (const delta of chunks(item.text, 16)) {
        event('response.output_text.delta', { item_id: id, output_index, content_index: 0, delta, logprobs: [] });
      }
      event('response.output_text.done', { item_id: id, output_index, content_index: 0, text: item.text, logprobs: [] });
      const part = { type: 'output_text', text: item.text, annotations: [] };
      event('response.content_part.done', { item_id: id, output_index, content_index: 0, part });
      const full = { id, type: 'message', status: 'completed', role: 'assistant', content: [part] };
      event('response.output_item.done', { output_index, item: full });
      done.push(full);
    } else {
      const id = newId('fc_');
      const args = typeof item.arguments === 'string' ? item.arguments : JSON.stringify(item.arguments);
      const call_id = item.call_id ?? newId('call_');
      const base = { id, type: 'function_call', call_id, name: item.name, ...(item.namespace ? { namespace: item.namespace } : {}) };
      event('response.output_item.added', { output_index, item: { ...base, status: 'in_progress', arguments: '' } });
      for (const delta of chunks(args, 24)) event('response.function_call_arguments.delta', { item_id: id, output_index, delta });
      event('response.function_call_arguments.done', { item_id: id, output_index, arguments: args });
      const full = { ...base, status: 'completed', arguments: args };
      event('response.output_item.done', { output_index, item: full });
      done.push(full);
    }
  });
  const beforeCompleted = out;
  event('response.completed', { response: responseObject('completed', done, true) });
  const completed = out.slice(beforeCompleted.length);

  rec.status = 200;
  res.writeHead(200, {
    'x-request-id': requestId,
    'openai-processing-ms': '7',
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    ...(rl ? codexRateLimitHeaders(rl) : {}),
    ...extra,
  });
  if (b.endBeforeCompleted) {
    res.end(beforeCompleted);
    return;
  }
  const hold = b.holdBeforeCompleted;
  if (!hold) {
    res.end(out);
    return;
  }
  res.write(beforeCompleted);
  void hold(rec).then(() => {
    if (!res.destroyed) res.end(completed);
  });
}
