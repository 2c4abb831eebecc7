import { handOffRoute } from './handoff/api.js';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { chmodSync, statSync, unlinkSync } from 'node:fs';
import { CARRY_ON, type Musher } from './app.js';
import { renderCardForPrompt } from '../core/wall/card.js';
import type { Log } from './log.js';
import { cancelJob, createJob, listJobs, type ApiAnswer } from './scheduler/api.js';
import { routesApi } from './engine/routes-api.js';
import { HarnessId } from '../harnesses/registry.js';
import { createTask, listTasks, showTask, updateTask } from './tasks/api.js';
import { answerQuestion, listQuestions, parkQuestion, sessionTask, showQuestion } from './questions/api.js';
import { estimateRoute } from './estimate/api.js';
import { finishTaskRoute, listReceipts, showReceipt } from './receipts/api.js';
import { dispatchTask, showPicker } from './picker/api.js';

/** musher's API: HTTP/1.1 + JSON over a Unix socket that only its user can open (0600). */
const MAX_BODY_BYTES = 64 * 1024 * 1024;

const bodies = new WeakMap<IncomingMessage, Promise<string>>();

/** The request's body, read once (the server reads every POST whole before routing it; routes get the same text). */
function readBody(req: IncomingMessage): Promise<string> {
  let body = bodies.get(req);
  if (!body) {
    body = readWhole(req);
    bodies.set(req, body);
  }
  return body;
}

function readWhole(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY_BYTES) {
        reject(new Error(`body over ${MAX_BODY_BYTES} bytes`));
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function send(res: ServerResponse, status: number, body: string, type = 'application/json'): void {
  const buf = Buffer.from(body);
  res.writeHead(status, { 'content-type': type, 'content-length': buf.length });
  res.end(buf);
}

function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** TMUX is "<socket path>,<server pid>,<session index>"; the pane is "%<n>". */
function tmuxOf(tmux: string | undefined, pane: string | undefined): { socket: string; pane: string } | null {
  if (!tmux || !pane || !/^%\d+$/.test(pane)) return null;
  const socket = tmux.split(',')[0];
  return socket && socket.startsWith('/') ? { socket, pane } : null;
}

/** GET /v1/jobs, POST /v1/jobs (kind, runAt | when, payload), POST /v1/jobs/<id>/cancel. */
async function jobsRoute(musher: Musher, req: IncomingMessage, url: URL): Promise<ApiAnswer | null> {
  if (req.method === 'GET' && url.pathname === '/v1/jobs') return listJobs(musher.scheduler, musher.clock, Number(url.searchParams.get('limit')) || 50);
  if (req.method === 'POST' && url.pathname === '/v1/jobs') return createJob(musher.scheduler, musher.clock, await readBody(req), musher.timeZone);
  const cancel = /^\/v1\/jobs\/([^/]+)\/cancel$/.exec(url.pathname);
  if (req.method === 'POST' && cancel) return cancelJob(musher.scheduler, decodeURIComponent(cancel[1]!));
  return null;
}

/** POST /v1/estimate; POST /v1/tasks/<id>/done; GET /v1/receipts, GET /v1/receipts/<id>. */
async function estimateRoutes(musher: Musher, req: IncomingMessage, url: URL): Promise<ApiAnswer | null> {
  if (req.method === 'POST' && url.pathname === '/v1/estimate') return estimateRoute(musher.estimates, await readBody(req));
  const done = /^\/v1\/tasks\/([^/]+)\/done$/.exec(url.pathname);
  if (req.method === 'POST' && done) return finishTaskRoute(musher.receipts, decodeURIComponent(done[1]!));
  if (req.method === 'GET' && url.pathname === '/v1/receipts') return listReceipts(musher.receipts, musher.receiptStore, url.searchParams);
  const one = /^\/v1\/receipts\/([^/]+)$/.exec(url.pathname);
  if (req.method === 'GET' && one) return showReceipt(musher.receipts, musher.receiptStore, decodeURIComponent(one[1]!));
  return null;
}

/** GET /v1/tasks[?state=], POST /v1/tasks (intake), GET /v1/tasks/<id>, POST /v1/tasks/<id> (worth, type, state, title). */
async function tasksRoute(musher: Musher, req: IncomingMessage, url: URL): Promise<ApiAnswer | null> {
  if (req.method === 'GET' && url.pathname === '/v1/tasks') return listTasks(musher.tasks.store, musher.clock.now(), url.searchParams);
  if (req.method === 'POST' && url.pathname === '/v1/tasks') return createTask(musher.tasks, await readBody(req));
  const one = /^\/v1\/tasks\/([^/]+)$/.exec(url.pathname);
  if (one && req.method === 'GET') {
    return showTask(musher.tasks.store, decodeURIComponent(one[1]!), (t) => {
      const receipt = musher.receipts.forTask(t.id);
      return { receipt, receiptLine: receipt ? musher.receipts.lineOf(receipt) : null };
    }, (id) => musher.estimates.bandOf(id));
  }
  if (one && req.method === 'POST') return updateTask(musher.tasks, musher.tasks.store, decodeURIComponent(one[1]!), await readBody(req));
  return null;
}

/** POST /v1/tasks/<id>/park, GET /v1/questions[?state=&task=], GET /v1/questions/<id>, POST /v1/questions/<id>/answer, GET /v1/sessions/<id>/task. */
async function questionsRoute(musher: Musher, req: IncomingMessage, url: URL): Promise<ApiAnswer | null> {
  const park = /^\/v1\/tasks\/([^/]+)\/park$/.exec(url.pathname);
  if (park && req.method === 'POST') return parkQuestion(musher.questions, decodeURIComponent(park[1]!), await readBody(req));
  if (req.method === 'GET' && url.pathname === '/v1/questions') return listQuestions(musher.questions, url.searchParams);
  const one = /^\/v1\/questions\/([^/]+)(\/answer)?$/.exec(url.pathname);
  if (one && !one[2] && req.method === 'GET') return showQuestion(musher.questions, decodeURIComponent(one[1]!));
  if (one && one[2] && req.method === 'POST') return answerQuestion(musher.questions, decodeURIComponent(one[1]!), await readBody(req));
  const session = /^\/v1\/sessions\/([^/]+)\/task$/.exec(url.pathname);
  if (session && req.method === 'GET') return sessionTask(musher.tasks, musher.questions, decodeURIComponent(session[1]!));
  return null;
}

/** GET /v1/tasks/<id>/picker (the rows), POST /v1/tasks/<id>/dispatch ({row} or {verb}: take a row's verb). */
async function pickerRoute(musher: Musher, req: IncomingMessage, url: URL): Promise<ApiAnswer | null> {
  const m = /^\/v1\/tasks\/([^/]+)\/(picker|dispatch)$/.exec(url.pathname);
  if (!m) return null;
  const id = decodeURIComponent(m[1]!);
  if (req.method === 'GET' && m[2] === 'picker') return showPicker(musher.picker, musher.tasks.store, id);
  if (req.method === 'POST' && m[2] === 'dispatch') return dispatchTask(musher.picker, musher.tasks.store, id, await readBody(req));
  return null;
}

/** POST /v1/github/watch: one PR-watcher round now (a PR just opened ends its task without waiting for the poll). */
async function githubRoute(musher: Musher, req: IncomingMessage, url: URL): Promise<ApiAnswer | null> {
  if (!(req.method === 'POST' && url.pathname === '/v1/github/watch')) return null;
  if (!musher.github) return { status: 503, body: { error: 'this musher does not watch GitHub' } };
  return { status: 200, body: await musher.github.prWatcher.runNow() };
}

/** POST /v1/tracker/poll (one tracker round now), GET /v1/tracker (the items taken, and their comments). */
async function trackerRoute(musher: Musher, req: IncomingMessage, url: URL): Promise<ApiAnswer | null> {
  const tracker = musher.github?.tracker;
  if (!tracker) return { status: 503, body: { error: 'this musher runs no tracker intake' } };
  if (req.method === 'POST' && url.pathname === '/v1/tracker/poll') return { status: 200, body: await tracker.pollNow() };
  if (req.method === 'GET' && url.pathname === '/v1/tracker') return { status: 200, body: { now: musher.clock.now(), items: tracker.items() } };
  return null;
}

export interface MusherServer {
  server: Server;
  close(): Promise<void>;
}

export function startServer(musher: Musher, socketPath: string, log: Log, onShutdown: () => void): Promise<MusherServer> {
  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://musher');
    try {
      // Every POST is read whole before it is answered, used or not: an answer that closed the connection while the
      // client still wrote its body would fail the client's write (EPIPE, seen as "musher is not running").
      if (req.method === 'POST') await readBody(req);
      if (req.method === 'POST' && url.pathname.startsWith('/v1/hook/')) {
        const event = decodeURIComponent(url.pathname.slice('/v1/hook/'.length));
        const raw = await readBody(req);
        const delivery = {
          eventId: header(req, 'x-sleds-event-id') ?? globalThis.crypto.randomUUID(),
          event,
          harness: header(req, 'x-sleds-harness') ?? 'claude-code',
          receivedAt: Number(header(req, 'x-sleds-received-at')) || musher.clock.now(),
          raw,
          viaSpool: false,
          resumedFor: header(req, 'x-sleds-wall') ?? null,
          tmux: tmuxOf(header(req, 'x-sleds-tmux'), header(req, 'x-sleds-tmux-pane')),
        };
        if (musher.answers(event)) {
          const { answer, after } = await musher.handleHook(delivery);
          send(res, 200, JSON.stringify(answer));
          if (after) res.once('finish', () => void after().catch((e: Error) => log.error(`hook ${event}: after the answer: ${e.message}`)));
          return;
        }
        // Nothing to say back: let the harness go on at once, then record the event.
        send(res, 200, JSON.stringify(CARRY_ON));
        setImmediate(() => {
          musher.handleHook(delivery).catch((e: Error) => log.error(`hook ${event}: ${e.message}`));
        });
        return;
      }
      if (req.method === 'POST' && url.pathname === '/v1/statusline') {
        const raw = await readBody(req);
        const { line, record } = musher.statusline(raw, header(req, 'x-sleds-color') !== '0');
        send(res, 200, line, 'text/plain; charset=utf-8');
        setImmediate(() => {
          try {
            record();
          } catch (e) {
            log.error(`statusline bookkeeping: ${(e as Error).message}`);
          }
        });
        return;
      }
      if (req.method === 'GET' && url.pathname === '/v1/status') {
        // At most one round of `git ls-remote` a minute for the status; `sleds handoffs` always asks.
        await musher.handoff?.refreshSent((sid) => musher.sessions.get(sid)?.cwd ?? null, 60_000);
        return send(res, 200, JSON.stringify(musher.status()));
      }
      if (req.method === 'GET' && url.pathname === '/v1/usage-poller') {
        return send(res, 200, JSON.stringify({ line: musher.usagePollerLine(), state: musher.usagePoller?.state() ?? null }));
      }
      if (req.method === 'GET' && url.pathname === '/v1/walls') {
        return send(res, 200, JSON.stringify(musher.wallForecasts()));
      }
      if (req.method === 'GET' && url.pathname === '/v1/bars') {
        return send(res, 200, JSON.stringify(musher.barsNow()));
      }
      const wallRoute = /^\/v1\/wall\/([^/]+)(?:\/(explain|go))?$/.exec(url.pathname);
      if (wallRoute) {
        const [, id, action] = wallRoute;
        const wall = musher.wallBook.get(id!);
        if (!wall) return send(res, 404, JSON.stringify({ error: `no wall ${id} — sleds status lists the walls` }));
        if (req.method === 'GET' && !action) {
          // The card as the prompt words it (kept for old clients), and the view model every surface renders.
          const view = musher.wallKeeper.view(wall);
          return send(res, 200, JSON.stringify({ wall, card: renderCardForPrompt(view), wallCard: view, events: musher.wallBook.events(wall.wallId) }));
        }
        if (req.method === 'GET' && action === 'explain') return send(res, 200, JSON.stringify({ text: musher.wallKeeper.explain(wall.wallId) }));
        if (req.method === 'POST' && action === 'go') {
          const go = await musher.wallKeeper.go(wall.wallId);
          return send(res, 'error' in go ? 409 : 200, JSON.stringify(go));
        }
      }
      if (req.method === 'GET' && url.pathname === '/v1/snapshots') {
        return send(res, 200, JSON.stringify(musher.snapshotList()));
      }
      if (req.method === 'GET' && url.pathname.startsWith('/v1/snapshots/')) {
        const answer = await musher.snapshotShow(decodeURIComponent(url.pathname.slice('/v1/snapshots/'.length)));
        return send(res, answer.status, JSON.stringify(answer.body));
      }
      {
        const answer = await estimateRoutes(musher, req, url);
        if (answer) return send(res, answer.status, JSON.stringify(answer.body));
      }
      if (/^\/v1\/tasks\/[^/]+\/(picker|dispatch)$/.test(url.pathname)) {
        const answer = await pickerRoute(musher, req, url);
        if (answer) return send(res, answer.status, JSON.stringify(answer.body));
      }
      if (url.pathname === '/v1/tasks' || url.pathname.startsWith('/v1/tasks/')) {
        const answer = await tasksRoute(musher, req, url);
        if (answer) return send(res, answer.status, JSON.stringify(answer.body));
      }
      if (/^\/v1\/(questions|sessions|tasks)(\/|$)/.test(url.pathname)) {
        const answer = await questionsRoute(musher, req, url);
        if (answer) return send(res, answer.status, JSON.stringify(answer.body));
      }
      if (url.pathname.startsWith('/v1/github/')) {
        const answer = await githubRoute(musher, req, url);
        if (answer) return send(res, answer.status, JSON.stringify(answer.body));
      }
      if (url.pathname === '/v1/tracker' || url.pathname.startsWith('/v1/tracker/')) {
        const answer = await trackerRoute(musher, req, url);
        if (answer) return send(res, answer.status, JSON.stringify(answer.body));
      }
      if (url.pathname === '/v1/routes' || url.pathname.startsWith('/v1/routes/')) {
        const answer = await routesApi({ store: musher.routes, harnesses: HarnessId.options, defaultMode: musher.routeDefaultMode, readBody }, req, url);
        if (answer) return send(res, answer.status, JSON.stringify(answer.body));
      }
      if (url.pathname === '/v1/jobs' || url.pathname.startsWith('/v1/jobs/')) {
        const answer = await jobsRoute(musher, req, url);
        if (answer) return send(res, answer.status, JSON.stringify(answer.body));
      }
      if (req.method === 'GET' && url.pathname === '/v1/gateway') {
        return send(res, 200, JSON.stringify(musher.gateway?.state() ?? { running: false, url: null }));
      }
      if (req.method === 'POST' && url.pathname === '/v1/gateway/tokens') {
        if (!musher.gateway) return send(res, 503, JSON.stringify({ error: 'this musher runs no gateway' }));
        let body: unknown;
        try {
          body = JSON.parse(await readBody(req));
        } catch {
          return send(res, 400, JSON.stringify({ error: 'body is not JSON — send {sessionId, seat?, project?, wallId?, ttlMs?}' }));
        }
        const minted = await musher.gateway.mint(body);
        return send(res, minted.status, JSON.stringify(minted.body));
      }
      if (req.method === 'GET' && url.pathname === '/v1/handoffs') {
        // A sent hand-off's pickup is learnt from its transport, when asked.
        await musher.handoff?.refreshSent((sid) => musher.sessions.get(sid)?.cwd ?? null);
        return send(res, 200, JSON.stringify({ now: musher.clock.now(), handoffs: musher.handoffs.list(100) }));
      }
      if (req.method === 'POST' && url.pathname === '/v1/handoffs') {
        const a = await handOffRoute(await readBody(req), (sid, to) => musher.handOffSession(sid, to), (id) => musher.handoffs.get(id));
        return send(res, a.status, JSON.stringify(a.body));
      }
      if (req.method === 'POST' && url.pathname === '/v1/handoffs/prune') {
        const body = JSON.parse((await readBody(req)) || '{}') as { cwd?: unknown };
        if (typeof body.cwd !== 'string') return send(res, 400, JSON.stringify({ error: 'send {cwd}' }));
        if (!musher.handoff) return send(res, 409, JSON.stringify({ error: 'hand-offs are not set up on this machine' }));
        try {
          return send(res, 200, JSON.stringify({ pruned: await musher.handoff.prune(body.cwd) }));
        } catch (e) {
          return send(res, 409, JSON.stringify({ error: (e as Error).message }));
        }
      }
      if (req.method === 'POST' && url.pathname === '/v1/handoffs/pickup') {
        let body: { id?: unknown; cwd?: unknown };
        try {
          body = JSON.parse(await readBody(req)) as typeof body;
        } catch {
          return send(res, 400, JSON.stringify({ error: 'body is not JSON — send {id, cwd}' }));
        }
        if (typeof body.id !== 'string' || typeof body.cwd !== 'string') return send(res, 400, JSON.stringify({ error: 'send {id, cwd}' }));
        // The one pickup rule is the service's, the same for `/sled pickup`: a second try says where the work is.
        const r = await musher.pickupHandoff(body.id, body.cwd);
        return send(res, 'error' in r ? 409 : 200, JSON.stringify('error' in r ? r : { received: musher.handoffs.get(r.picked.id), again: r.picked.again }));
      }
      if (req.method === 'GET' && url.pathname === '/v1/health') {
        return send(res, 200, JSON.stringify({ ok: true, pid: process.pid, startedAt: musher.startedAt }));
      }
      if (req.method === 'POST' && url.pathname === '/v1/shutdown') {
        send(res, 200, JSON.stringify({ ok: true }));
        setImmediate(onShutdown);
        return;
      }
      return send(res, 404, JSON.stringify({ error: `no route ${req.method} ${url.pathname}` }));
    } catch (e) {
      log.error(`api ${req.method} ${url.pathname}: ${(e as Error).message}`);
      if (!res.headersSent) send(res, 500, JSON.stringify({ error: (e as Error).message }));
    }
  });
  server.keepAliveTimeout = 1000;
  return new Promise((resolve, reject) => {
    // The socket is born 0600: no window in which another user could connect.
    const previous = process.umask(0o177);
    server.once('error', (e) => {
      process.umask(previous);
      reject(e);
    });
    server.listen(socketPath, () => {
      process.umask(previous);
      chmodSync(socketPath, 0o600);
      const ours = statSync(socketPath).ino;
      resolve({
        server,
        close: () =>
          new Promise<void>((r) => {
            server.close(() => {
              // Remove the socket file only if it is still ours: a musher started after us may own the path now.
              try {
                if (statSync(socketPath).ino === ours) unlinkSync(socketPath);
              } catch {
                // already gone
              }
              r();
            });
            server.closeAllConnections();
          }),
      });
    });
  });
}
