import http, { type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import https from 'node:https';
import { randomUUID } from 'node:crypto';
import type { AddressInfo, Socket } from 'node:net';
import { createUsageMeter, meteredCost, type GatewayProvider, type MeteredResponse, type UsageMeter } from '../../core/gateway/meter.js';
import { allowanceRefusalMessage, type Allowance, type UtcOffset } from '../../core/gateway/allowance.js';
import { formatUsd } from '../../core/format.js';
import type { PriceTable } from '../../core/price-table.js';
import type { Clock } from '../clock.js';
import type { Log } from '../log.js';
import type { PlatformKeyStore } from '../store/platform-key.js';
import { allowanceVerdict, localUtcOffset } from './allowance.js';
import { refusal, type GatewayRefusal, type RefusalKind } from './errors.js';
import type { GatewayTokens, TokenGrant } from './tokens.js';

/**
 * The platform-key gateway: on loopback only, a pass-through for the Anthropic Messages API and the OpenAI
 * Responses API. The harness authenticates with a local token musher minted for its session; the gateway swaps it
 * for the platform key, refuses the seat once its allowance is spent, streams the answer through chunk by chunk
 * (never buffered) and meters each response's usage into the platform-key rail.
 */
export interface GatewayOptions {
  /** 127.0.0.1 (default), ::1 or localhost; anything else is refused before listening. */
  host?: string;
  /** 0 = ephemeral. */
  port?: number;
  upstreams: Record<GatewayProvider, string>;
  tokens: GatewayTokens;
  platformKeys: PlatformKeyStore;
  prices: PriceTable;
  clock: Clock;
  log: Log;
  /** The real key, read when a request needs it (so `sleds key set` takes effect without a restart). */
  platformKey(provider: GatewayProvider): Promise<string | null>;
  /** The seat's caps; the grant says which session (and so which repository's policy) the request is for. */
  allowance(seat: string, grant: TokenGrant): Allowance;
  /** The seat's zone for "today" and "this week"; default musher's own. */
  utcOffset?: UtcOffset;
}

export interface Gateway {
  url: string;
  port: number;
  close(): Promise<void>;
}

const LOOPBACK: Record<string, string> = { '127.0.0.1': '127.0.0.1', localhost: '127.0.0.1', '::1': '::1' };

/** Headers that belong to one connection, never forwarded (RFC 9110 §7.6.1), plus the ones the gateway owns. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade']);
const REQUEST_OWNED = new Set(['host', 'x-api-key', 'authorization', 'accept-encoding']);

interface Route {
  provider: GatewayProvider;
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
      return null;
    }
    path = path.slice(v1);
  }
  if ((method === 'HEAD' || method === 'GET') && (path === '/' || path === '/api/hello')) return 'hello';
  if (method !== 'POST') return null;
  if (path === '/v1/messages') return { provider: 'anthropic', upstreamPath: path + search, metered: true, project };
  if (path === '/v1/messages/count_tokens') return { provider: 'anthropic', upstreamPath: path + search, metered: false, project };
  if (path === '/v1/responses') return { provider: 'openai', upstreamPath: path + search, metered: true, project };
  return null;
}

function one(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** The local token, from `x-api-key` (ANTHROPIC_API_KEY) or `Authorization: Bearer` (ANTHROPIC_AUTH_TOKEN, Codex). */
function localToken(headers: IncomingHttpHeaders): string | null {
  const apiKey = one(headers, 'x-api-key');
  if (apiKey) return apiKey.trim();
  const auth = one(headers, 'authorization');
  const m = auth ? /^Bearer\s+(.+)$/i.exec(auth.trim()) : null;
  return m ? m[1]!.trim() : null;
}

function forwardedRequestHeaders(headers: IncomingHttpHeaders, provider: GatewayProvider, key: string, upstreamHost: string): http.OutgoingHttpHeaders {
  const named = new Set((one(headers, 'connection') ?? '').split(',').map((s) => s.trim().toLowerCase()));
  const out: http.OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || HOP_BY_HOP.has(name) || REQUEST_OWNED.has(name) || named.has(name)) continue;
    out[name] = value;
  }
  // A subscriber's OAuth beta would make the API reject an API key: the key's own betas only.
  const beta = one(headers, 'anthropic-beta');
  if (beta !== undefined) {
    const kept = beta.split(',').map((b) => b.trim()).filter((b) => b && !b.startsWith('oauth-'));
    if (kept.length > 0) out['anthropic-beta'] = kept.join(',');
    else delete out['anthropic-beta'];
  }
  out.host = upstreamHost;
  // The tee reads the body: it must arrive as sent, not compressed.
  out['accept-encoding'] = 'identity';
  if (provider === 'anthropic') out['x-api-key'] = key;
  else out.authorization = `Bearer ${key}`;
  return out;
}

function forwardedResponseHeaders(headers: IncomingHttpHeaders): http.OutgoingHttpHeaders {
  const named = new Set((one(headers, 'connection') ?? '').split(',').map((s) => s.trim().toLowerCase()));
  const out: http.OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || HOP_BY_HOP.has(name) || named.has(name)) continue;
    out[name] = value;
  }
  return out;
}

function sendRefusal(res: ServerResponse, r: GatewayRefusal): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res.writeHead(r.status, { ...r.headers, 'content-length': Buffer.byteLength(r.body) });
  res.end(r.body);
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
  const upstreams = Object.fromEntries(
    (Object.entries(opts.upstreams) as Array<[GatewayProvider, string]>).map(([p, base]) => {
      const u = new URL(base);
      if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error(`upstream for ${p} must be an http(s) URL, got ${base}`);
      return [p, u];
    }),
  ) as Record<GatewayProvider, URL>;
  // Kept-alive connections upstream: a new TLS handshake per request would cost far more than the gateway does.
  const agents = { http: new http.Agent({ keepAlive: true, maxSockets: 256 }), https: new https.Agent({ keepAlive: true, maxSockets: 256 }) };

  const server = http.createServer({ noDelay: true }, (req, res) => {
    handle(req, res).catch((e: Error) => {
      opts.log.error(`gateway: ${req.method} ${req.url?.split('?')[0]}: ${e.message}`);
      sendRefusal(res, refusal('anthropic', 'upstream-unreachable', `sleds gateway: internal error (${e.message}) — see the musher log`));
    });
  });

  // Codex's built-in provider first asks for Responses over a WebSocket; refused with 426, it falls back to POST +
  // SSE (facts/codex-cli.md §0), which is what the gateway meters.
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

    if (r.metered) {
      const verdict = allowanceVerdict(opts.platformKeys, grant.seat, opts.allowance(grant.seat, grant), opts.clock.now(), offset);
      if (!verdict.ok) {
        opts.log.warn(`gateway: ${grant.seat} refused, allowance spent ${verdict.period} (${formatUsd(verdict.spentMicros)} of ${formatUsd(verdict.capMicros)})`);
        return refuse('allowance', allowanceRefusalMessage(grant.seat, verdict));
      }
    }

    let key: string | null;
    try {
      key = await opts.platformKey(r.provider);
    } catch (e) {
      return refuse('no-key', `sleds gateway: cannot read the ${r.provider} platform key (${(e as Error).message})`);
    }
    if (!key) return refuse('no-key', `sleds gateway: no ${r.provider} platform key configured — run 'sleds key set ${r.provider}' (it reads the key from stdin)`);

    forward(req, res, r, grant, key);
  }

  function forward(req: IncomingMessage, res: ServerResponse, r: Route, grant: TokenGrant, key: string): void {
    const base = upstreams[r.provider];
    const lib = base.protocol === 'https:' ? https : http;
    const upReq = lib.request({
      protocol: base.protocol,
      hostname: base.hostname.replace(/^\[|\]$/g, ''),
      port: base.port || (base.protocol === 'https:' ? 443 : 80),
      method: 'POST',
      path: base.pathname.replace(/\/$/, '') + r.upstreamPath,
      headers: forwardedRequestHeaders(req.headers, r.provider, key, base.host),
      agent: base.protocol === 'https:' ? agents.https : agents.http,
    });
    upReq.on('socket', (s) => s.setNoDelay(true));

    let meter: UsageMeter | null = null;
    let decoder: TextDecoder | null = null;
    let requestId: string | null = null;
    let finished = false;
    const finish = (): void => {
      if (finished) return;
      finished = true;
      if (!meter) return;
      if (decoder) meter.push(decoder.decode());
      const metered = meter.finish();
      if (metered) record(metered, requestId, grant, r.project ?? grant.project);
      else opts.log.warn(`gateway: a ${r.provider} response for ${grant.seat} ended without usage — not metered`);
    };

    upReq.on('error', (e: NodeJS.ErrnoException) => {
      if (clientGone) return; // destroyed by us: the client left first
      if (res.headersSent) {
        // Cut mid-stream: the client must see the stream break, not a clean end.
        res.destroy();
        finish();
        return;
      }
      finished = true;
      opts.log.warn(`gateway: ${r.provider} upstream ${base.host} unreachable (${e.code ?? e.message})`);
      sendRefusal(res, refusal(r.provider, 'upstream-unreachable', `sleds gateway: the ${r.provider} API at ${base.host} is unreachable (${e.code ?? e.message}) — check the network; the request was not sent`));
    });

    upReq.on('response', (upRes) => {
      const status = upRes.statusCode ?? 502;
      requestId = one(upRes.headers, 'request-id') ?? one(upRes.headers, 'x-request-id') ?? null;
      // Only a success bills tokens; errors pass through verbatim, unmetered.
      if (r.metered && status >= 200 && status < 300) {
        meter = createUsageMeter(r.provider, one(upRes.headers, 'content-type') ?? '');
        decoder = new TextDecoder('utf-8');
      }
      res.writeHead(status, forwardedResponseHeaders(upRes.headers));
      // The head goes out with the first chunk (one write, not two); an upstream that sends its head and then
      // thinks for a while still gets it to the client at once.
      // (`headersSent` turns true at writeHead, before anything is written: track the first write here.)
      let wrote = false;
      setImmediate(() => {
        if (!wrote && !res.destroyed) res.flushHeaders();
      });
      upRes.on('data', (chunk: Buffer) => {
        wrote = true;
        // Each chunk goes to the client as it arrives; the tee reads a copy of it.
        if (!res.write(chunk)) upRes.pause();
        if (meter && decoder) meter.push(decoder.decode(chunk, { stream: true }));
      });
      res.on('drain', () => upRes.resume());
      upRes.on('end', () => {
        res.end();
        // Metering waits for the next turn of the loop: the client has its last byte first.
        setImmediate(finish);
      });
      upRes.on('aborted', () => {
        res.destroy();
        finish();
      });
      upRes.on('error', () => {
        res.destroy();
        finish();
      });
    });

    // The client went away before the answer ended: stop the upstream and meter what came (the input side).
    let clientGone = false;
    res.on('close', () => {
      if (!res.writableFinished) {
        clientGone = true;
        upReq.destroy();
        finish();
      }
    });
    req.pipe(upReq);
  }

  function record(m: MeteredResponse, requestId: string | null, grant: TokenGrant, project: string | null): void {
    const now = opts.clock.now();
    const model = m.model ?? 'unknown';
    const costMicros = meteredCost(opts.prices, m, model, now);
    const t = m.tokens;
    const id = requestId ?? m.responseId ?? `gw_${randomUUID()}`;
    try {
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
        opts.log.info(`gateway: ${grant.seat}${project ? ` ${project}` : ''} ${model} ${cost}${m.outputKnown ? '' : ' (output unknown: stream cut)'} ${id}`);
      }
    } catch (e) {
      opts.log.error(`gateway: could not record ${id}: ${(e as Error).message}`);
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
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
        agents.http.destroy();
        agents.https.destroy();
      }),
  };
}
