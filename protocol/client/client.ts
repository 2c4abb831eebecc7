import { request } from 'node:http';
import { ErrorBody } from '../schemas.js';
import { pathOf, ROUTES, type RouteInput, type RouteName, type RouteReply, type RouteSpec } from '../routes.js';

/**
 * The one typed client of musher's API (cli/, mcp-server/; later the cockpit and the hub): `call(route, input)`
 * sends the request the route table describes over musher's Unix socket and gives the reply checked by the route's
 * schema, or a typed failure. It does not start musher: a caller that may (the CLI, the MCP server) does so when a
 * failure says nobody listens. hooks/ and statusline/ keep their raw forwarding (they load no zod).
 */

export type CallFailure =
  /** musher answered, and said no (non-2xx): its `{error}`, and anything else it sent (`kind`, `handle`). */
  | { ok: false; kind: 'refused'; status: number; error: string; body: Record<string, unknown> }
  /** musher answered something that is not what the route promises (not JSON, or drifted from its schema). */
  | { ok: false; kind: 'unreadable'; status: number; reason: string }
  /** Nothing answered: `reason` is the socket's error code (ENOENT, ECONNREFUSED) or a timeout's words. */
  | { ok: false; kind: 'unreachable'; reason: string };

export type CallResult<N extends RouteName> = { ok: true; status: number; body: RouteReply<N> } | CallFailure;

export interface CallOptions {
  /** Per request; a route that does real work (a pickup fetches and checks out) gets longer. */
  timeoutMs?: number;
}

export interface MusherClient {
  call<N extends RouteName>(name: N, input: RouteInput<N>, options?: CallOptions): Promise<CallResult<N>>;
}

export interface ClientOptions {
  socketPath: string;
  /** The default per request (5 s). */
  timeoutMs?: number;
}

/** When a client may start musher: nothing listens on the socket (no socket file, or a dead musher's that refuses). */
export function nobodyListens(failure: CallFailure): boolean {
  return failure.kind === 'unreachable' && (failure.reason === 'ENOENT' || failure.reason === 'ECONNREFUSED');
}

/** An `unreadable` failure's reason when the body is not JSON at all. */
export const NOT_JSON = 'the answer is not JSON';

export interface RawReply {
  status: number;
  contentType: string;
  body: string;
}

/** One HTTP/1.1 request over the socket; rejects with the reason when nothing answers in time. */
function send(socketPath: string, method: string, path: string, body: string | null, timeoutMs: number): Promise<RawReply> {
  return new Promise((resolve, reject) => {
    const payload = body === null ? null : Buffer.from(body);
    const headers: Record<string, string | number> = { host: 'musher', connection: 'close', 'content-length': payload?.length ?? 0 };
    if (payload) headers['content-type'] = 'application/json';
    let settled = false;
    const settle = (f: () => void): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      f();
    };
    const req = request({ socketPath, method, path, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => settle(() => resolve({ status: res.statusCode ?? 0, contentType: String(res.headers['content-type'] ?? ''), body: Buffer.concat(chunks).toString('utf8') })));
      res.on('error', (e: NodeJS.ErrnoException) => settle(() => reject(new Error(e.code ?? e.message))));
    });
    const timer = setTimeout(() => settle(() => {
      req.destroy();
      reject(new Error(`no answer within ${timeoutMs} ms`));
    }), timeoutMs);
    req.on('error', (e: NodeJS.ErrnoException) => settle(() => reject(new Error(e.code ?? e.message))));
    req.end(payload ?? undefined);
  });
}

/** The reply as the route promises it, or why not. */
export function readReply<N extends RouteName>(name: N, raw: RawReply): CallResult<N> {
  const spec: RouteSpec = ROUTES[name];
  if (spec.reply === 'text') {
    if (raw.status >= 200 && raw.status < 300) return { ok: true, status: raw.status, body: raw.body as RouteReply<N> };
  }
  let json: unknown;
  try {
    json = JSON.parse(raw.body);
  } catch {
    // the parse error says no more than "not JSON": the failure answers with that
    return { ok: false, kind: 'unreadable', status: raw.status, reason: NOT_JSON };
  }
  if (raw.status < 200 || raw.status > 299) {
    const err = ErrorBody.safeParse(json);
    const body = json !== null && typeof json === 'object' && !Array.isArray(json) ? (json as Record<string, unknown>) : {};
    return { ok: false, kind: 'refused', status: raw.status, error: err.success ? err.data.error : `musher answered HTTP ${raw.status}`, body };
  }
  const checked = (spec.reply as Exclude<RouteSpec['reply'], 'text'>).safeParse(json);
  if (!checked.success) {
    const i = checked.error.issues[0];
    return { ok: false, kind: 'unreadable', status: raw.status, reason: `${i?.path.join('.') || 'body'}: ${i?.message ?? 'does not match'}` };
  }
  // The reply as musher sent it (key order, fields the schema does not list): checked, not rewritten. Reply
  // schemas have no transforms, so the checked value and the sent one are the same type.
  return { ok: true, status: raw.status, body: json as RouteReply<N> };
}

export function musherClient(o: ClientOptions): MusherClient {
  return {
    async call(name, input, options = {}) {
      const spec: RouteSpec = ROUTES[name];
      const i = input as { params?: Record<string, string>; query?: Record<string, string | undefined>; body?: unknown };
      const path = pathOf(spec, i.params, i.query);
      const body = 'body' in i ? JSON.stringify(i.body ?? {}) : spec.method === 'POST' && spec.body ? '{}' : null;
      let raw: RawReply;
      try {
        raw = await send(o.socketPath, spec.method, path, body, options.timeoutMs ?? o.timeoutMs ?? 5_000);
      } catch (e) {
        return { ok: false, kind: 'unreachable', reason: (e as Error).message };
      }
      return readReply(name, raw);
    },
  };
}
