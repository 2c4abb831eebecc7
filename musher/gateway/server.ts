import http, { type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import { createHash, randomUUID } from 'node:crypto';
import type { AddressInfo, Socket } from 'node:net';
import { Readable } from 'node:stream';
import type { Dispatcher, Pool } from 'undici';
import { createUsageMeter, meteredCost, type GatewayProvider, type MeteredResponse, type UsageMeter } from '../../core/gateway/meter.js';
import { type Allowance, type UtcOffset } from '../../core/gateway/allowance.js';
import { BODY_BYTES_PER_TOKEN, estimateRequest } from '../../core/gateway/request-estimate.js';
import { admissionRefusalMessage, ReservationLedger, type Hold } from '../../core/gateway/reservation.js';
import { formatUsd } from '../../core/format.js';
import type { PriceTable } from '../../core/price-table.js';
import type { Clock } from '../clock.js';
import type { Log } from '../log.js';
import type { PlatformKeyStore } from '../store/platform-key.js';
import type { GatewayBatchStore } from '../store/gateway-batches.js';
import { realTimers, type Timers } from '../timers.js';
import { admissionVerdict, isCapped, localUtcOffset } from './allowance.js';
import { refusal, type GatewayRefusal, type RefusalKind } from './errors.js';
import { TOKEN_PREFIX, type GatewayTokens, type TokenGrant } from './tokens.js';
import { BatchRoute, DEFAULT_BATCH_SETTINGS, type BatchSettings, type UpstreamCall } from './batch-route.js';
import { DEFAULT_FLEX_SETTINGS, flexBackoffMs, isFlexUnavailable, type FlexSettings } from './flex.js';

/**
 * The platform-key gateway: on loopback only, a pass-through for the Anthropic Messages API and the OpenAI
 * Responses API. The harness authenticates with a local token musher minted for its session; the gateway swaps it
 * for the platform key, refuses the seat once its allowance is spent, streams the answer through chunk by chunk
 * (never buffered) and meters each response's usage into the platform-key rail.
 *
 * The allowance cannot be walked past:
 * - Concurrently: on a capped seat a metered request reserves its estimated cost before it goes upstream, and the
 *   verdict counts what running requests hold (core/gateway/reservation.ts has the rule and its bound). The body is
 *   read whole first (the estimate needs its model and output ceiling); an uncapped seat's is piped as it comes.
 * - By hanging up early: the final usage comes last (`message_delta`, `response.completed`), after the content, so
 *   when the client leaves before the end the gateway reads on — at most `drain.maxBytes` more, for at most
 *   `drain.deadlineMs` — to meter the real count; cut short, the response is metered from the output deltas seen
 *   (core/gateway/output-estimate.ts). The bound keeps a cancelled long answer from running on at the key's expense.
 */
export interface GatewayOptions {
  /** 127.0.0.1 (default), ::1 or localhost; anything else is refused before listening. */
  host?: string;
  /** 0 = ephemeral. */
  port?: number;
  upstreams: Record<GatewayProvider, string>;
  tokens: GatewayTokens;
  platformKeys: PlatformKeyStore;
  /** The batch tier's Message Batches, kept across restarts (on the same database as the rail: billed in one transaction). */
  batches: GatewayBatchStore;
  prices: PriceTable;
  clock: Clock;
  log: Log;
  /** The real key, read when a request needs it (so `sleds key set` takes effect without a restart). */
  platformKey(provider: GatewayProvider): Promise<string | null>;
  /** The seat's caps; the grant says which session (and so which repository's policy) the request is for. */
  allowance(seat: string, grant: TokenGrant): Allowance;
  /** The seat's zone for "today" and "this week"; default musher's own. */
  utcOffset?: UtcOffset;
  /** How much more of a response is read after its client left, and for how long; default DEFAULT_DRAIN. */
  drain?: DrainSettings;
  /** The drain deadline's timer, the batch route's polls and keepalives, the flex retries' backoff; default the real one. */
  timers?: Timers;
  /** How a batch-tier token's Claude requests are polled and kept alive; default DEFAULT_BATCH_SETTINGS. */
  batch?: Partial<BatchSettings>;
  /** How a batch-tier token's OpenAI requests wait for flex capacity; default DEFAULT_FLEX_SETTINGS. */
  flex?: Partial<FlexSettings>;
}

export interface DrainSettings {
  maxBytes: number;
  deadlineMs: number;
}

/**
 * The tail of a finished answer (`message_delta` + `message_stop`, or `response.completed` with its output echoed)
 * is a few KiB and follows at once. A client that hung up mid-answer (Esc in Claude Code) lets the model write on at
 * the key's expense while the gateway reads: the deadline bounds that to ~20 s of generation (a couple of thousand
 * output tokens at streaming speed), the byte cap to 256 KiB of events, whichever comes first.
 */
export const DEFAULT_DRAIN: DrainSettings = { maxBytes: 256 * 1024, deadlineMs: 20_000 };

/** Messages requests are refused upstream above 32 MB (shared/facts/model-apis.md §0); the gateway holds no more. */
const MAX_BUFFERED_BODY_BYTES = 32 * 1024 * 1024;

export interface Gateway {
  url: string;
  port: number;
  /** What the seat's requests under way hold against its allowance now. */
  heldMicros(seat: string): number;
  close(): Promise<void>;
}

const LOOPBACK: Record<string, string> = { '127.0.0.1': '127.0.0.1', localhost: '127.0.0.1', '::1': '::1' };

/** Headers that belong to one connection, never forwarded (RFC 9110 §7.6.1), plus the ones the gateway owns. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade']);
// `expect` too: the body goes upstream as it comes (undici refuses a 100-continue it does not run).
const REQUEST_OWNED = new Set(['host', 'x-api-key', 'authorization', 'accept-encoding', 'expect']);

interface Route {
  provider: GatewayProvider;
  /** The path without its query: what the tier reroutes is `/v1/messages` and `/v1/responses` alone. */
  path: string;
  /** The client called the beta API (`?beta=true`). */
  beta: boolean;
  /** The path sent upstream, query included. */
  upstreamPath: string;
  /** Responses that bill tokens (count_tokens does not). */
  metered: boolean;
  project: string | null;
}

/** `/p/<project>/v1/…` carries attribution in the base URL; the project may itself hold slashes. */
function route(method: string, rawUrl: string): Route | 'hello' | null {
  const q = rawUrl.indexOf('?');
  let path = q < 0 ? rawUrl : rawUrl.slice(0, q);
  const search = q < 0 ? '' : rawUrl.slice(q);
  let project: string | null = null;
  if (path.startsWith('/p/')) {
    const v1 = path.indexOf('/v1/', 3);
    if (v1 < 0) return null;
    try {
      project = decodeURIComponent(path.slice(3, v1)) || null;
    } catch {
      // A malformed %-escape in the project: no route (the caller refuses it as not found).
      return null;
    }
    path = path.slice(v1);
  }
  if ((method === 'HEAD' || method === 'GET') && (path === '/' || path === '/api/hello')) return 'hello';
  if (method !== 'POST') return null;
  const beta = new URLSearchParams(search).get('beta') === 'true';
  if (path === '/v1/messages') return { provider: 'anthropic', path, beta, upstreamPath: path + search, metered: true, project };
  if (path === '/v1/messages/count_tokens') return { provider: 'anthropic', path, beta, upstreamPath: path + search, metered: false, project };
  if (path === '/v1/responses') return { provider: 'openai', path, beta, upstreamPath: path + search, metered: true, project };
  return null;
}

function one(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/**
 * The local token, from `x-api-key` (ANTHROPIC_API_KEY) or `Authorization: Bearer` (ANTHROPIC_AUTH_TOKEN, Codex).
 * Claude Code sends both when both variables are set (measured on 2.1.328): a user's own ANTHROPIC_API_KEY left in
 * the shell rides along beside the token musher handed the session, so the one that is musher's wins.
 */
function localToken(headers: IncomingHttpHeaders): string | null {
  const apiKey = one(headers, 'x-api-key')?.trim() || null;
  const auth = one(headers, 'authorization');
  const m = auth ? /^Bearer\s+(.+)$/i.exec(auth.trim()) : null;
  const bearer = m ? m[1]!.trim() : null;
  if (bearer?.startsWith(TOKEN_PREFIX) && !apiKey?.startsWith(TOKEN_PREFIX)) return bearer;
  return apiKey ?? bearer;
}

/** The client's betas an API key may send: a subscriber's OAuth beta would make the API reject the key. */
function keyBetas(headers: IncomingHttpHeaders): string | null {
  const beta = one(headers, 'anthropic-beta');
  if (beta === undefined) return null;
  const kept = beta.split(',').map((b) => b.trim()).filter((b) => b && !b.startsWith('oauth-'));
  return kept.length > 0 ? kept.join(',') : null;
}

function forwardedRequestHeaders(headers: IncomingHttpHeaders, provider: GatewayProvider, key: string, upstreamHost: string): Record<string, string | string[]> {
  const named = new Set((one(headers, 'connection') ?? '').split(',').map((s) => s.trim().toLowerCase()));
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || HOP_BY_HOP.has(name) || REQUEST_OWNED.has(name) || named.has(name)) continue;
    out[name] = value;
  }
  const beta = keyBetas(headers);
  if (beta !== null) out['anthropic-beta'] = beta;
  else delete out['anthropic-beta'];
  out.host = upstreamHost;
  // The tee reads the body: it must arrive as sent, not compressed.
  out['accept-encoding'] = 'identity';
  if (provider === 'anthropic') out['x-api-key'] = key;
  else out.authorization = `Bearer ${key}`;
  return out;
}

function forwardedResponseHeaders(headers: IncomingHttpHeaders | Dispatcher.ResponseData['headers']): http.OutgoingHttpHeaders {
  const named = new Set((one(headers, 'connection') ?? '').split(',').map((s) => s.trim().toLowerCase()));
  const out: http.OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || HOP_BY_HOP.has(name) || named.has(name)) continue;
    out[name] = value;
  }
  return out;
}

/** The system's code of an upstream failure (ECONNREFUSED…), through undici's wrapping; else its message. */
function upstreamErrorCode(e: Error & { code?: string; cause?: unknown }): string {
  const cause = e.cause as { code?: string } | undefined;
  if (e.code && !e.code.startsWith('UND_ERR')) return e.code;
  return cause?.code ?? e.code ?? e.message;
}

function sendRefusal(res: ServerResponse, r: GatewayRefusal): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res.writeHead(r.status, { ...r.headers, 'content-length': Buffer.byteLength(r.body) });
  res.end(r.body);
}

/** The whole request body, unless it is over `limit` bytes or the client leaves first. */
function readBody(req: IncomingMessage, limit: number): Promise<Buffer | 'too-large' | 'gone'> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    let ended = false;
    req.on('data', (c: Buffer) => {
      bytes += c.length;
      if (bytes <= limit) chunks.push(c);
    });
    req.on('end', () => {
      ended = true;
      resolve(bytes > limit ? 'too-large' : Buffer.concat(chunks));
    });
    req.on('error', () => resolve('gone'));
    req.on('close', () => {
      if (!ended) resolve('gone');
    });
  });
}

function parseJson(body: Buffer): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(body.toString('utf8')) };
  } catch {
    // The caller refuses a body that is not JSON in the provider's error envelope.
    return { ok: false };
  }
}

const TOKEN_MESSAGES: Record<'missing' | 'unknown' | 'expired', string> = {
  missing: 'sleds gateway: no local token — set ANTHROPIC_API_KEY (or the provider key) to the token musher minted for this session, or resume the session from its wall with /sled 1',
  unknown: 'sleds gateway: this token is not one musher minted — resume the session from its wall with /sled 1 to get a valid one',
  expired: 'sleds gateway: this session\'s token has expired — resume the session from its wall with /sled 1 to get a fresh one',
};

export async function startGateway(opts: GatewayOptions): Promise<Gateway> {
  const requestedHost = opts.host ?? '127.0.0.1';
  const host = LOOPBACK[requestedHost];
  if (host === undefined) {
    throw new Error(`gateway binds 127.0.0.1 only — '${requestedHost}' would put the platform key on the network; use 127.0.0.1, ::1 or localhost`);
  }
  const offset = opts.utcOffset ?? localUtcOffset;
  const drain = opts.drain ?? DEFAULT_DRAIN;
  const timers = opts.timers ?? realTimers;
  const reservations = new ReservationLedger();
  const upstreams = Object.fromEntries(
    (Object.entries(opts.upstreams) as Array<[GatewayProvider, string]>).map(([p, base]) => {
      const u = new URL(base);
      if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error(`upstream for ${p} must be an http(s) URL, got ${base}`);
      return [p, u];
    }),
  ) as Record<GatewayProvider, URL>;
  // One undici pool per upstream origin, its connections kept alive: a new TLS handshake per request would cost far
  // more than the gateway does. No header or body timeout: a model may think for minutes (as node:http never timed out).
  // Loaded here, not with every musher: the gateway starts only where a platform key is configured.
  const { Pool } = await import('undici');
  const pools = new Map<string, Pool>();
  const poolFor = (base: URL): Pool => {
    let pool = pools.get(base.origin);
    if (!pool) {
      pool = new Pool(base.origin, { connections: 256, headersTimeout: 0, bodyTimeout: 0 });
      pools.set(base.origin, pool);
    }
    return pool;
  };
  const flex: FlexSettings = { ...DEFAULT_FLEX_SETTINGS, ...opts.flex };
  // Flex answers are slow but not endless: the docs' 15 minutes, as undici's own header and body timeouts (its
  // 5-minute defaults would cut a queued flex request; §5.4).
  let flexPool: Pool | null = null;
  const flexPoolFor = (base: URL): Pool => {
    flexPool ??= new Pool(base.origin, { connections: 64, headersTimeout: flex.timeoutMs, bodyTimeout: flex.timeoutMs });
    return flexPool;
  };

  const anthropicCall: UpstreamCall = async ({ method, path, headers, body }) => {
    const r = await poolFor(upstreams.anthropic).request({ method, path, headers: { ...headers, host: upstreams.anthropic.host }, ...(body === undefined ? {} : { body }) });
    return { status: r.statusCode, body: await r.body.text() };
  };
  const batchRoute = new BatchRoute({
    call: anthropicCall,
    upstream: upstreams.anthropic,
    timers,
    clock: opts.clock,
    log: opts.log,
    settings: { ...DEFAULT_BATCH_SETTINGS, ...opts.batch },
    store: opts.batches,
    record: (m, requestId, grant, project) => recordUse(m, requestId, grant, project),
  });

  const server = http.createServer({ noDelay: true }, (req, res) => {
    handle(req, res).catch((e: Error) => {
      opts.log.error(`gateway: ${req.method} ${req.url?.split('?')[0]}: ${e.message}`);
      sendRefusal(res, refusal('anthropic', 'upstream-unreachable', `sleds gateway: internal error (${e.message}) — see the musher log`));
    });
  });

  // Codex's built-in provider first asks for Responses over a WebSocket; refused with 426, it falls back to POST +
  // SSE (shared/facts/codex-cli.md §0), which is what the gateway meters.
  server.on('upgrade', (_req: IncomingMessage, socket: Socket) => {
    const body = JSON.stringify({ error: { message: 'sleds gateway: no WebSocket here — use POST /v1/responses', type: 'invalid_request_error', param: null, code: 'upgrade_required' } });
    socket.end(`HTTP/1.1 426 Upgrade Required\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const r = route(req.method ?? 'GET', req.url ?? '/');
    if (r === 'hello') {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': 2 });
      res.end(req.method === 'HEAD' ? undefined : '{}');
      return;
    }
    if (r === null) {
      const provider: GatewayProvider = (req.url ?? '').includes('/responses') ? 'openai' : 'anthropic';
      req.resume();
      return sendRefusal(res, refusal(provider, 'not-found', `sleds gateway: no route ${req.method} ${(req.url ?? '').split('?')[0]} — it serves POST /v1/messages and POST /v1/responses`));
    }
    const refuse = (kind: RefusalKind, message: string): void => {
      req.resume();
      sendRefusal(res, refusal(r.provider, kind, message));
    };

    const token = localToken(req.headers);
    if (!token) return refuse('no-token', TOKEN_MESSAGES.missing);
    const checked = opts.tokens.check(token);
    if (!checked.ok) {
      opts.log.warn(`gateway: refused a request with an ${checked.reason} token`);
      return refuse('no-token', TOKEN_MESSAGES[checked.reason]);
    }
    const grant = checked.grant;
    // A batch-tier token's answers are bought at half price: Claude's as a Message Batch of one, OpenAI's on flex.
    const tier = r.metered && grant.tier === 'batch' && (r.path === '/v1/messages' || r.path === '/v1/responses') ? (r.provider === 'anthropic' ? 'batch' : 'flex') : null;

    // A capped seat, or a tier that rewrites the request: the body read whole first. A capped seat's cost is
    // estimated and reserved, all before anything goes upstream.
    let body: Buffer | null = null;
    let hold: Hold | null = null;
    const allowance = r.metered ? opts.allowance(grant.seat, grant) : null;
    const capped = allowance !== null && isCapped(allowance);
    if (capped || tier) {
      const read = await readBody(req, MAX_BUFFERED_BODY_BYTES);
      if (read === 'gone') return;
      if (read === 'too-large') return refuse('too-large', `sleds gateway: the request body is over ${MAX_BUFFERED_BODY_BYTES / 1024 / 1024} MiB — the API refuses it too; send less context`);
      body = read;
    }
    const notJson = 'sleds gateway: the request body is not JSON — send the Messages or Responses request as JSON';
    let request: Record<string, unknown> | null = null;
    if (tier && body) {
      const parsed = parseJson(body);
      if (!parsed.ok || parsed.value === null || typeof parsed.value !== 'object' || Array.isArray(parsed.value)) return refuse('bad-request', notJson);
      request = parsed.value as Record<string, unknown>;
    }

    // The same request again (Claude Code re-sends after its idle timeout): the batch it already has answers it,
    // and costs nothing more, so no allowance is asked of it.
    const dedupKey = tier === 'batch' && body ? createHash('sha256').update(grant.seat).update('\0').update(body).digest('hex') : null;
    if (dedupKey !== null && request !== null) {
      const running = batchRoute.attached(dedupKey);
      if (running) {
        opts.log.info(`gateway: ${grant.seat}'s request came again while its Message Batch ${running.batchIds.at(-1) ?? '(being sent)'} ${running.endedAtMs === null ? 'runs' : 'has its answer'} — attached to it, billed once`);
        return batchRoute.answer(running, res, request.stream === true);
      }
    }
    // Or a batch an earlier musher sent for it and did not see end (killed mid-batch): followed, not bought again.
    const stored = dedupKey !== null ? batchRoute.stored(dedupKey) : null;

    if (capped && allowance && body && !stored) {
      // No await from the verdict to the reservation: the two are one step, whatever else is running.
      const now = opts.clock.now();
      const verdict = admissionVerdict(opts.platformKeys, reservations.heldMicros(grant.seat), grant.seat, allowance, now, offset);
      if (!verdict.ok) {
        const held = verdict.heldMicros > 0 ? ` + ${formatUsd(verdict.heldMicros)} held by ${reservations.holding(grant.seat)} under way` : '';
        const what = verdict.spentMicros >= verdict.capMicros ? 'spent' : 'nearly spent';
        opts.log.warn(`gateway: ${grant.seat} refused, allowance ${what} ${verdict.period} (${formatUsd(verdict.spentMicros)}${held} of ${formatUsd(verdict.capMicros)})`);
        return refuse('allowance', admissionRefusalMessage(grant.seat, verdict));
      }
      const parsed = request === null ? parseJson(body) : { ok: true as const, value: request };
      if (!parsed.ok) return refuse('bad-request', notJson);
      // The estimate is at the standard price, also on the half-price tier: a reservation errs high, never low.
      hold = reservations.hold(grant.seat, estimateRequest(opts.prices, r.provider, parsed.value, body.length, now).costMicros);
    }

    let key: string | null;
    try {
      key = await opts.platformKey(r.provider);
    } catch (e) {
      hold?.release();
      return refuse('no-key', `sleds gateway: cannot read the ${r.provider} platform key (${(e as Error).message})`);
    }
    if (!key) {
      hold?.release();
      return refuse('no-key', `sleds gateway: no ${r.provider} platform key configured — run 'sleds key set ${r.provider}' (it reads the key from stdin)`);
    }

    if (tier === 'batch' && dedupKey !== null && request !== null) {
      const { stream, ...params } = request;
      const job = batchRoute.start({
        dedupKey,
        params,
        beta: r.beta,
        anthropicVersion: one(req.headers, 'anthropic-version') ?? '2023-06-01',
        anthropicBeta: keyBetas(req.headers),
        key,
        grant,
        project: r.project ?? grant.project,
        hold,
        resume: stored,
      });
      return batchRoute.answer(job, res, stream === true);
    }
    if (tier === 'flex' && request !== null) body = Buffer.from(JSON.stringify({ ...request, service_tier: 'flex' }));

    try {
      forward(req, res, r, grant, key, body, hold, tier === 'flex');
    } catch (e) {
      hold?.release();
      throw e;
    }
  }

  /**
   * Sends one request upstream and the answer back. `hold` (a capped seat's reservation) is released exactly once,
   * in `finish`, which every way the exchange can end reaches: the response's end, an upstream error before or
   * during it, the client gone (after the drain), the drain's byte cap or deadline.
   */
  function forward(req: IncomingMessage, res: ServerResponse, r: Route, grant: TokenGrant, key: string, body: Buffer | null, hold: Hold | null, onFlex = false): void {
    const base = upstreams[r.provider];
    /** Flex: a "resource unavailable" 429 is held back here while it may still be retried, not shown to the client. */
    let retries = 0;
    let retryTimer: unknown = null;
    let heldBack: { status: number; headers: Dispatcher.ResponseData['headers']; chunks: Buffer[] } | null = null;
    /** undici's handle on this exchange (abort, pause, resume), from the moment it is dispatched. */
    let control: Dispatcher.DispatchController | null = null;
    let cancelled = false;

    let meter: UsageMeter | null = null;
    let decoder: TextDecoder | null = null;
    let requestId: string | null = null;
    let answered = false;
    let requestBytes = body?.length ?? 0;
    let clientGone = false;
    let drainTimer: unknown = null;
    let drainedBytes = 0;
    let finished = false;
    let wrote = false;
    const finish = (): void => {
      if (finished) return;
      finished = true;
      if (drainTimer !== null) timers.clearTimeout(drainTimer);
      drainTimer = null;
      if (retryTimer !== null) timers.clearTimeout(retryTimer);
      retryTimer = null;
      try {
        if (!meter) return;
        if (decoder) meter.push(decoder.decode());
        const metered = meter.finish({ requestInputTokens: Math.ceil(requestBytes / BODY_BYTES_PER_TOKEN) });
        if (metered) record(metered, requestId, grant, r.project ?? grant.project);
        else opts.log.warn(`gateway: a ${r.provider} response for ${grant.seat} ended without usage — not metered`);
      } finally {
        // The real cost is recorded (or there is none) in this same turn: no instant counts the request twice or not at all.
        hold?.release();
      }
    };
    /** Stops the exchange upstream (its answer is no longer wanted) and meters what came. */
    const cut = (): void => {
      cancelled = true;
      if (control && !control.aborted) control.abort(new Error('sleds gateway: cut'));
      finish();
    };

    const handler: Dispatcher.DispatchHandler = {
      onRequestStart(controller) {
        control = controller;
        if (cancelled) controller.abort(new Error('sleds gateway: cut'));
      },
      onResponseStart(_controller, status, headers) {
        if (status < 200) return; // an informational head: the real one follows
        if (onFlex && status === 429 && retries < flex.maxRetries && !clientGone) {
          heldBack = { status, headers, chunks: [] };
          return;
        }
        answered = true;
        requestId = one(headers, 'request-id') ?? one(headers, 'x-request-id') ?? null;
        // Only a success bills tokens; errors pass through verbatim, unmetered.
        if (r.metered && status >= 200 && status < 300) {
          meter = createUsageMeter(r.provider, one(headers, 'content-type') ?? '');
          decoder = new TextDecoder('utf-8');
        }
        if (clientGone && !meter) return cut(); // nobody to answer and nothing to meter
        if (!clientGone) {
          res.writeHead(status, forwardedResponseHeaders(headers));
          // The head goes out with the first chunk (one write, not two); an upstream that sends its head and then
          // thinks for a while still gets it to the client at once.
          // (`headersSent` turns true at writeHead, before anything is written: track the first write here.)
          setImmediate(() => {
            if (!wrote && !res.destroyed) res.flushHeaders();
          });
        }
      },
      onResponseData(controller, chunk) {
        if (heldBack) {
          heldBack.chunks.push(Buffer.from(chunk));
          return;
        }
        if (!clientGone) {
          wrote = true;
          // Each chunk goes to the client as it arrives; the tee reads a copy of it.
          if (!res.write(chunk)) controller.pause();
        }
        if (meter && decoder) meter.push(decoder.decode(chunk, { stream: true }));
        if (clientGone) {
          drainedBytes += chunk.length;
          if (drainedBytes > drain.maxBytes && !finished) {
            opts.log.warn(`gateway: read ${Math.round(drain.maxBytes / 1024)} KiB of a ${r.provider} response for ${grant.seat} after its client left, without its final usage — cut; its output is estimated`);
            cut();
          }
        }
      },
      onResponseEnd() {
        if (heldBack) {
          const back = heldBack;
          heldBack = null;
          const text = Buffer.concat(back.chunks).toString('utf8');
          if (isFlexUnavailable(text) && !clientGone && !finished) {
            retries += 1;
            const delay = flexBackoffMs(flex, retries);
            opts.log.warn(`gateway: no flex capacity for ${grant.seat}'s ${r.provider} request (429, not charged) — retry ${retries} of ${flex.maxRetries} in ${Math.round(delay / 100) / 10} s`);
            retryTimer = timers.setTimeout(() => {
              retryTimer = null;
              if (!clientGone && !finished) send();
            }, delay);
            return;
          }
          // Another 429 (a rate limit, the quota): the client has it as it came.
          answered = true;
          requestId = one(back.headers, 'request-id') ?? one(back.headers, 'x-request-id') ?? null;
          if (!clientGone) {
            res.writeHead(back.status, forwardedResponseHeaders(back.headers));
            res.end(Buffer.concat(back.chunks));
          }
          setImmediate(finish);
          return;
        }
        if (!clientGone) res.end();
        // Metering waits for the next turn of the loop: the client has its last byte first.
        setImmediate(finish);
      },
      onResponseError(_controller, e: Error & { code?: string }) {
        heldBack = null;
        if (clientGone || finished) return finish(); // aborted by us (the client left, the drain ended): already settled or settling here
        if (answered || res.headersSent) {
          // Cut mid-stream: the client must see the stream break, not a clean end.
          res.destroy();
          finish();
          return;
        }
        finish();
        const why = upstreamErrorCode(e);
        opts.log.warn(`gateway: ${r.provider} upstream ${base.host} unreachable (${why})`);
        sendRefusal(res, refusal(r.provider, 'upstream-unreachable', `sleds gateway: the ${r.provider} API at ${base.host} is unreachable (${why}) — check the network; the request was not sent`));
      },
    };
    res.on('drain', () => control?.resume());

    // The client went away before the answer ended. Its final usage is still to come: read on, bounded, to meter it.
    res.on('close', () => {
      if (res.writableFinished || finished || clientGone) return;
      clientGone = true;
      // Waiting to retry for flex capacity: nothing ran that bills, nothing more is sent.
      if (retryTimer !== null) return cut();
      // Unmetered, an error answer, or a request whose body never arrived whole (nothing ran upstream): just stop.
      if (!r.metered || (answered && !meter) || !req.complete) return cut();
      opts.log.info(`gateway: ${grant.seat}'s client left before the end of its ${r.provider} response — reading on (at most ${Math.round(drain.maxBytes / 1024)} KiB, ${Math.round(drain.deadlineMs / 1000)} s) to meter it`);
      control?.resume(); // it may have been paused for a client that will never read again
      drainTimer = timers.setTimeout(() => {
        drainTimer = null;
        if (finished) return;
        opts.log.warn(`gateway: a ${r.provider} response for ${grant.seat} ran on ${Math.round(drain.deadlineMs / 1000)} s after its client left, without its final usage — cut; its output is estimated`);
        cut();
      }, drain.deadlineMs);
    });

    // The body's size is kept for the estimate when no final usage comes: a Content-Length is what node's parser
    // holds the body to, so the client's stream goes upstream as it is; a chunked body is counted as undici reads it
    // (not before: a listener of its own would let chunks flow past).
    const declared = Number(one(req.headers, 'content-length'));
    const sized = !body && req.headers['transfer-encoding'] === undefined && Number.isSafeInteger(declared) && declared >= 0;
    if (sized) requestBytes = declared;
    async function* counted(): AsyncGenerator<Buffer> {
      for await (const c of req as AsyncIterable<Buffer>) {
        requestBytes += c.length;
        yield c;
      }
    }

    const headers = forwardedRequestHeaders(req.headers, r.provider, key, base.host);
    // A body read whole may have been rewritten (flex): its own length, not the client's.
    if (body) headers['content-length'] = String(body.length);
    const send = (): void => {
      (onFlex ? flexPoolFor(base) : poolFor(base)).dispatch(
        {
          method: 'POST',
          path: base.pathname.replace(/\/$/, '') + r.upstreamPath,
          headers,
          body: body ?? (sized ? req : Readable.from(counted(), { objectMode: false })),
        },
        handler,
      );
    };
    send();
  }

  function record(m: MeteredResponse, requestId: string | null, grant: TokenGrant, project: string | null): void {
    try {
      recordUse(m, requestId, grant, project);
    } catch (e) {
      opts.log.error(`gateway: could not record ${requestId ?? m.responseId ?? 'a response'}: ${(e as Error).message}`);
    }
  }

  /** Meters one response into the rail; throws when the store cannot (the batch route's transaction must see it). */
  function recordUse(m: MeteredResponse, requestId: string | null, grant: TokenGrant, project: string | null): void {
    const now = opts.clock.now();
    const model = m.model ?? 'unknown';
    const costMicros = meteredCost(opts.prices, m, model, now);
    const t = m.tokens;
    const id = requestId ?? m.responseId ?? `gw_${randomUUID()}`;
    const fresh = opts.platformKeys.record({
      requestId: id,
      seat: grant.seat,
      project,
      model,
      timestampMs: now,
      inputTokens: t.inputTokens,
      outputTokens: t.outputTokens,
      cacheWriteTokens: t.cacheWrite5mTokens + t.cacheWrite1hTokens,
      cacheReadTokens: t.cacheReadTokens,
      costMicros,
      source: 'gateway',
      outputKnown: m.outputKnown,
      sessionId: grant.sessionId,
    });
    if (fresh) {
      const cost = costMicros === null ? 'unpriced' : formatUsd(costMicros);
      opts.log.info(`gateway: ${grant.seat}${project ? ` ${project}` : ''} ${model} ${cost}${m.outputKnown ? '' : ` (no final usage: output estimated at ${t.outputTokens} tokens)`} ${id}`);
    }
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const url = `http://${host === '::1' ? '[::1]' : host}:${port}`;
  return {
    url,
    port,
    heldMicros: (seat) => reservations.heldMicros(seat),
    close: () =>
      new Promise<void>((resolve) => {
        batchRoute.close();
        server.close(() => resolve());
        server.closeAllConnections();
        for (const pool of pools.values()) void pool.destroy();
        void flexPool?.destroy();
      }),
  };
}
