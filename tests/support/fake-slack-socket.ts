import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { startFakeSlack, type FakeSlack, type FakeSlackOptions, type SlackPost } from './fake-slack.js';

/**
 * Slack's Socket Mode on 127.0.0.1, beside the Web API fake: `POST /api/apps.connections.open` with the app-level
 * token as a Bearer header answers a one-use `ws://127.0.0.1:<port>/link/?ticket=…` URL; the WebSocket server says
 * `hello` on connect, sends `interactive` envelopes whose payload is a real `block_actions` (trimmed from a captured
 * one), records each ack (`{envelope_id}` or `{envelope_id, payload}`: Slack's Node client sends the second, Python
 * the first) and sends `disconnect` frames. The pattern of `@slack/socket-mode`'s own integration test.
 */

export interface Ack {
  envelope_id: string;
  payload?: unknown;
}

export interface Delivery {
  envelopeId: string;
  ack: Ack;
}

export interface PressInput {
  /** The card's channel (the D… id for a DM) and ts, as chat.postMessage answered them. */
  channel: string;
  ts: string;
  /** Which button: its action_id. Its block_id, value and text come from the stored message unless given (a forgery). */
  actionId: string;
  value?: string;
  blockId?: string;
  user: { id: string; name: string };
}

export interface FakeSlackSocket extends FakeSlack {
  appToken: string;
  /** apps.connections.open calls, answered or refused. */
  opens: SlackPost[];
  /** WebSocket connections that were sent their hello, in order. */
  connections: number;
  /** Connections open now. */
  open(): number;
  acks: Ack[];
  /** Sends a button press (an `interactive` envelope) on the newest connection; resolves when its ack comes back. */
  press(p: PressInput): Promise<Delivery>;
  /** Sends an envelope already sent again, as Slack's retries do; resolves on its next ack. */
  redeliver(envelopeId: string): Promise<Delivery>;
  /** `{"type":"disconnect","reason":…}` on the newest connection. */
  sendDisconnect(reason: 'warning' | 'refresh_requested' | 'link_disabled' | 'too_many_websockets'): void;
  /** The next apps.connections.open answers `{ok:false,error}` (Slack's start errors: invalid_auth, …). */
  refuseOpens(error: string | null): void;
}

export interface FakeSlackSocketOptions extends FakeSlackOptions {
  appToken: string;
  /** How long press/redeliver wait for an ack before failing with a line that names the envelope. */
  ackTimeoutMs?: number;
}

interface Envelope {
  envelope_id: string;
  type: 'interactive';
  accepts_response_payload: boolean;
  payload: Record<string, unknown>;
}

/** A button of an actions block, as the message stores it. */
interface StoredButton {
  action_id?: string;
  value?: string;
  text?: unknown;
}

function findButton(blocks: unknown, actionId: string): { blockId: string; button: StoredButton } | null {
  if (!Array.isArray(blocks)) return null;
  for (const b of blocks as Array<{ type?: string; block_id?: string; elements?: StoredButton[] }>) {
    if (b.type !== 'actions' || !Array.isArray(b.elements)) continue;
    const button = b.elements.find((e) => e.action_id === actionId);
    if (button) return { blockId: b.block_id ?? '', button };
  }
  return null;
}

export async function startFakeSlackSocket(opts: FakeSlackSocketOptions): Promise<FakeSlackSocket> {
  const tickets = new Set<string>();
  const opens: SlackPost[] = [];
  const acks: Ack[] = [];
  const sent = new Map<string, Envelope>();
  const waiters = new Map<string, Array<(ack: Ack) => void>>();
  const sockets: WebSocket[] = [];
  let refusal: string | null = null;
  let actionSeq = 0;

  const wss = new WebSocketServer({
    host: '127.0.0.1',
    port: 0,
    // A URL is good for one connection: Slack's tickets are never reused.
    verifyClient: (info: { req: { url?: string } }) => {
      const ticket = new URL(info.req.url ?? '/', 'ws://127.0.0.1').searchParams.get('ticket') ?? '';
      return tickets.delete(ticket);
    },
  });
  await new Promise<void>((resolve) => wss.once('listening', () => resolve()));
  const wsPort = (wss.address() as AddressInfo).port;

  const state = { connections: 0 };
  wss.on('connection', (ws) => {
    sockets.push(ws);
    state.connections += 1;
    ws.on('close', () => sockets.splice(sockets.indexOf(ws), 1));
    ws.on('message', (data, isBinary) => {
      if (isBinary) return;
      let frame: unknown;
      try {
        frame = JSON.parse(data.toString());
      } catch {
        // Slack drops a frame that is not JSON; the test sees no ack for it.
        return;
      }
      const f = frame as { envelope_id?: unknown; payload?: unknown };
      if (typeof f.envelope_id !== 'string') return;
      const ack: Ack = 'payload' in f ? { envelope_id: f.envelope_id, payload: f.payload } : { envelope_id: f.envelope_id };
      acks.push(ack);
      const queue = waiters.get(ack.envelope_id);
      queue?.shift()?.(ack);
    });
    ws.send(
      JSON.stringify({
        type: 'hello',
        num_connections: sockets.length,
        debug_info: { host: 'applink-fake-1', started: '2026-12-02 12:00:00.000', build_number: 1, approximate_connection_time: 3600 },
        connection_info: { app_id: 'A0FAKEAPP' },
      }),
    );
  });

  const web = await startFakeSlack({
    ...opts,
    methods: {
      'apps.connections.open': (req) => {
        opens.push(req);
        const auth = req.headers.authorization;
        if (!auth) return { status: 200, body: { ok: false, error: 'not_authed' } };
        if (auth !== `Bearer ${opts.appToken}`) return { status: 200, body: { ok: false, error: 'invalid_auth' } };
        if (refusal) return { status: 200, body: { ok: false, error: refusal } };
        const ticket = randomUUID();
        tickets.add(ticket);
        return { status: 200, body: { ok: true, url: `ws://127.0.0.1:${wsPort}/link/?ticket=${ticket}&app_id=A0FAKEAPP` } };
      },
    },
  });

  const newest = (): WebSocket => {
    const ws = sockets.at(-1);
    if (!ws) throw new Error('fake Slack: no Socket Mode connection is open');
    return ws;
  };

  const deliver = (envelope: Envelope): Promise<Delivery> =>
    new Promise<Delivery>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`fake Slack: no ack for envelope ${envelope.envelope_id} within ${opts.ackTimeoutMs ?? 10_000} ms`)), opts.ackTimeoutMs ?? 10_000);
      timer.unref();
      const queue = waiters.get(envelope.envelope_id) ?? [];
      queue.push((ack) => {
        clearTimeout(timer);
        resolve({ envelopeId: envelope.envelope_id, ack });
      });
      waiters.set(envelope.envelope_id, queue);
      newest().send(JSON.stringify(envelope));
    });

  const press = (p: PressInput): Promise<Delivery> => {
    const message = web.messages.find((m) => m.channel === p.channel && m.ts === p.ts);
    const found = message ? findButton(message.blocks, p.actionId) : null;
    const actionTs = `1760000100.${String(++actionSeq).padStart(6, '0')}`;
    const envelope: Envelope = {
      envelope_id: randomUUID(),
      type: 'interactive',
      accepts_response_payload: false,
      payload: {
        type: 'block_actions',
        user: { id: p.user.id, username: p.user.name, name: p.user.name, team_id: 'T0FAKETEAM' },
        api_app_id: 'A0FAKEAPP',
        token: 'fake-verification-token',
        container: { type: 'message', message_ts: p.ts, channel_id: p.channel, is_ephemeral: false },
        trigger_id: `5890877001607.29320757700.${actionSeq}`,
        team: { id: 'T0FAKETEAM', domain: 'fake' },
        enterprise: null,
        is_enterprise_install: false,
        channel: { id: p.channel, name: 'directmessage' },
        message: { type: 'message', bot_id: 'B0FAKE', app_id: 'A0FAKEAPP', ts: p.ts, text: message?.text ?? '', blocks: message?.blocks ?? [] },
        state: { values: {} },
        response_url: 'https://hooks.slack.com/actions/T0FAKETEAM/1/fake',
        actions: [
          {
            type: 'button',
            action_id: p.actionId,
            block_id: p.blockId ?? found?.blockId ?? 'unknown',
            text: found?.button.text ?? { type: 'plain_text', text: p.actionId, emoji: true },
            value: p.value ?? found?.button.value ?? '',
            action_ts: actionTs,
          },
        ],
      },
    };
    sent.set(envelope.envelope_id, envelope);
    return deliver(envelope);
  };

  return {
    ...web,
    appToken: opts.appToken,
    opens,
    get connections() {
      return state.connections;
    },
    open: () => sockets.length,
    acks,
    press,
    redeliver: (envelopeId) => {
      const envelope = sent.get(envelopeId);
      if (!envelope) throw new Error(`fake Slack: envelope ${envelopeId} was never sent`);
      return deliver(envelope);
    },
    sendDisconnect: (reason) => newest().send(JSON.stringify({ type: 'disconnect', reason, debug_info: { host: 'wss-fake-1.slack.com' } })),
    refuseOpens: (error) => void (refusal = error),
    close: async () => {
      for (const ws of [...sockets]) ws.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      await web.close();
    },
  };
}
