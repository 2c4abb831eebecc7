import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A fake of Slack's Web API on 127.0.0.1 (port 0), speaking its wire: `POST /api/chat.postMessage` and
 * `/api/chat.update` (a JSON or a form body) with a Bearer token; API errors are HTTP 200 `{ok:false,error}` (a missing or unknown token is `not_authed` / `invalid_auth`, an
 * unknown channel `channel_not_found`); a rate limit is HTTP 429 with Retry-After and `{ok:false,error:"ratelimited"}`.
 * A post to a user id (U…/W…) lands in that user's DM, whose D… id the answer names, as Slack does; an update names
 * the message by that D… id and its ts (`message_not_found` otherwise). Other methods can be added by `methods`
 * (fake-slack-socket.ts adds `apps.connections.open`).
 */

export interface SlackPost {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The raw body, for asserting what was (not) sent. */
  raw: string;
  body: Record<string, unknown> | null;
}

export type SlackScript = { kind: 'ratelimited'; retryAfter: string } | { kind: 'error'; error: string } | { kind: 'status'; status: number };

export interface FakeSlack {
  /** What config.yml's upstreams.slack takes: `http://127.0.0.1:<port>/api/`. */
  apiUrl: string;
  requests: SlackPost[];
  /** Messages accepted, as Slack would store them. */
  messages: Array<{ channel: string; ts: string; text: string; blocks: unknown; thread_ts?: string }>;
  /** chat.update bodies accepted, in order (the message in `messages` is changed too). */
  updates: Array<{ channel: string; ts: string; text: string; blocks: unknown }>;
  /** Answers for the next requests, in order, before the normal handling. */
  script(...answers: SlackScript[]): void;
  close(): Promise<void>;
}

export interface FakeSlackOptions {
  /** The bot token it accepts. */
  token: string;
  /** User ids (U…) and channel ids (C…) that exist. */
  known: string[];
  /** More Web API methods by name ("apps.connections.open"): the request, answered with HTTP status and JSON body. */
  methods?: Record<string, (req: SlackPost) => { status: number; body: unknown }>;
}

/**
 * A Web API body as Slack reads it: JSON, or a form (`application/x-www-form-urlencoded`, what Slack's own client
 * sends) whose nested values (`blocks`) are JSON strings. Null when it is neither.
 */
function parseBody(raw: string, contentType: string): Record<string, unknown> | null {
  if (/^application\/x-www-form-urlencoded/i.test(contentType)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of new URLSearchParams(raw)) {
      if (k === 'blocks' || k === 'attachments' || k === 'metadata') {
        try {
          out[k] = JSON.parse(v);
        } catch {
          return null; // Slack answers invalid_blocks/invalid_json here; the fake: not a body
        }
      } else out[k] = v;
    }
    return out;
  }
  try {
    return JSON.parse(raw) as Record<string, unknown>;
  } catch {
    return null;
  }
}

function dmOf(user: string): string {
  return `D${user.slice(1)}`;
}

export async function startFakeSlack(opts: FakeSlackOptions): Promise<FakeSlack> {
  const requests: SlackPost[] = [];
  const messages: FakeSlack['messages'] = [];
  const updates: FakeSlack['updates'] = [];
  const queue: SlackScript[] = [];
  let seq = 0;

  const send = (res: import('node:http').ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void => {
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers });
    res.end(JSON.stringify(body));
  };

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const body = parseBody(raw, req.headers['content-type'] ?? '');
      const path = req.url ?? '';
      requests.push({ method: req.method ?? '', path, headers: req.headers, raw, body });
      const extra = req.method === 'POST' ? opts.methods?.[path.replace(/^\/api\//, '')] : undefined;
      if (extra) {
        const answer = extra(requests.at(-1)!);
        return send(res, answer.status, answer.body);
      }
      const method = path === '/api/chat.postMessage' ? 'postMessage' : path === '/api/chat.update' ? 'update' : null;
      if (req.method !== 'POST' || !method) return send(res, 404, { ok: false, error: 'unknown_method' });
      const scripted = queue.shift();
      if (scripted?.kind === 'ratelimited') return send(res, 429, { ok: false, error: 'ratelimited' }, { 'retry-after': scripted.retryAfter });
      if (scripted?.kind === 'error') return send(res, 200, { ok: false, error: scripted.error });
      if (scripted?.kind === 'status') return send(res, scripted.status, { ok: false, error: 'fatal_error' });

      const auth = req.headers.authorization;
      if (!auth) return send(res, 200, { ok: false, error: 'not_authed' });
      if (auth !== `Bearer ${opts.token}`) return send(res, 200, { ok: false, error: 'invalid_auth' });
      if (!body) return send(res, 200, { ok: false, error: 'invalid_json' });
      const channel = typeof body.channel === 'string' ? body.channel : '';
      if (!channel) return send(res, 200, { ok: false, error: 'channel_not_found' });
      const known = opts.known.includes(channel) || opts.known.some((u) => /^[UW]/.test(u) && dmOf(u) === channel);
      if (!known) return send(res, 200, { ok: false, error: 'channel_not_found' });
      const text = typeof body.text === 'string' ? body.text : '';
      if (!text && !Array.isArray(body.blocks)) return send(res, 200, { ok: false, error: 'no_text' });
      if (method === 'update') {
        const ts = typeof body.ts === 'string' ? body.ts : '';
        const found = messages.find((m) => m.channel === channel && m.ts === ts);
        if (!found) return send(res, 200, { ok: false, error: 'message_not_found' });
        found.text = text;
        found.blocks = body.blocks;
        updates.push({ channel, ts, text, blocks: body.blocks });
        return send(res, 200, { ok: true, channel, ts, text, message: { type: 'message', bot_id: 'B0FAKE', text, blocks: body.blocks } });
      }
      const at = /^[UW]/.test(channel) ? dmOf(channel) : channel;
      const ts = `1760000000.${String(++seq).padStart(6, '0')}`;
      const thread = typeof body.thread_ts === 'string' ? { thread_ts: body.thread_ts } : {};
      messages.push({ channel: at, ts, text, blocks: body.blocks, ...thread });
      // Slack warns about JSON sent without a charset; a form needs none.
      const type = req.headers['content-type'] ?? '';
      const charset = /charset=utf-8/i.test(type) || /^application\/x-www-form-urlencoded/i.test(type);
      send(res, 200, {
        ok: true,
        channel: at,
        ts,
        message: { type: 'message', subtype: 'bot_message', bot_id: 'B0FAKE', text, ts, blocks: body.blocks, ...thread },
        ...(charset ? {} : { warning: 'missing_charset', response_metadata: { warnings: ['missing_charset'] } }),
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    apiUrl: `http://127.0.0.1:${port}/api/`,
    requests,
    messages,
    updates,
    script: (...answers) => void queue.push(...answers),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
