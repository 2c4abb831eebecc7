import { routeVerbs } from '../engine/routes-api.js';
import { nightQueue } from '../engine/night-queue.js';
import { parseBody } from './parse-body.js';
import { QueueCancelRequest, QueueResumeRequest } from '../../protocol/requests.js';
import { OVERNIGHT_KIND } from '../exits/overnight.js';
import { formatClock } from '../../core/format.js';
import { clock24 } from '../../core/overnight/timeline.js';
import { allHarnesses } from '../../harnesses/registry.js';
import { DEFAULT_HARNESS_ID } from '../../harnesses/hook-defaults.js';
import type { RouteName } from '../../protocol/routes.js';
import { renderCardForPrompt } from '../../core/wall/card.js';
import { CARRY_ON } from '../hook-answers.js';
import { handOffRoute } from '../handoff/api.js';
import { cancelJob, createJob, listJobs, type ApiAnswer } from '../scheduler/api.js';
import { createTask, listTasks, showTask, updateTask } from '../tasks/api.js';
import { answerQuestion, listQuestions, parkQuestion, sessionTask, showQuestion } from '../questions/api.js';
import { estimateRoute } from '../estimate/api.js';
import { nodeBand } from '../../core/routes/band.js';
import { reportRoute } from '../report/api.js';
import { seatName } from '../walls/wiring.js';
import { fetchTrackerItem } from '../engine/route-from-item.js';
import { finishTaskRoute, listReceipts, showReceipt } from '../receipts/api.js';
import { dispatchTask, showPicker } from '../picker/api.js';
import type { ApiServices } from './services.js';

/** A request as a handler sees it: the route's parameters, the query, the whole body (read before routing), headers. */
export interface RouteRequest {
  params: Record<string, string>;
  /** The parameters as the path spelt them, undecoded. */
  rawParams: Record<string, string>;
  query: URLSearchParams;
  body: string;
  header(name: string): string | undefined;
}

/** What runs once the answer is sent: on the response's 'finish', or on the next turn of the event loop. */
export interface AfterSend {
  on: 'finish' | 'next';
  run: () => void;
}

/** A handler's answer: a JSON body or a plain text one, with its status. */
export type RouteAnswer = ({ status: number; json: unknown } | { status: number; text: string }) & { after?: AfterSend };

export interface HandlerContext extends ApiServices {
  /** Stops musher (POST /v1/shutdown), after the answer is sent. */
  shutdown: () => void;
}

export type RouteHandler = (s: HandlerContext, r: RouteRequest) => RouteAnswer | Promise<RouteAnswer>;

/** One handler per route of protocol/routes.ts: a route without a handler, or a handler without a route, does not compile. */
export type RouteHandlers = { readonly [N in RouteName]: RouteHandler };

const json = (status: number, body: unknown): RouteAnswer => ({ status, json: body });
const answered = (a: ApiAnswer): RouteAnswer => ({ status: a.status, json: a.body });

/** TMUX is "<socket path>,<server pid>,<session index>"; the pane is "%<n>". */
function tmuxOf(tmux: string | undefined, pane: string | undefined): { socket: string; pane: string } | null {
  if (!tmux || !pane || !/^%\d+$/.test(pane)) return null;
  const socket = tmux.split(',')[0];
  return socket && socket.startsWith('/') ? { socket, pane } : null;
}

/** GET /v1/wall/:id and its actions: the wall, or the 404 that says where the walls are listed. */
function withWall(s: HandlerContext, r: RouteRequest, then: (wall: NonNullable<ReturnType<HandlerContext['core']['wallBook']['get']>>) => RouteAnswer | Promise<RouteAnswer>): RouteAnswer | Promise<RouteAnswer> {
  const id = r.rawParams.id!;
  const wall = s.core.wallBook.get(id);
  if (!wall) return json(404, { error: `no wall ${id} — sleds status lists the walls` });
  return then(wall);
}

/** The route verbs over musher's route store; the harness ids a route file may name are the registry's. */
const verbs = (s: HandlerContext) =>
  routeVerbs({
    store: s.core.routes,
    harnesses: allHarnesses().map((a) => a.id),
    defaultMode: s.core.routeDefaultMode,
    bandFor: (node) => nodeBand(s.core.estimates.forRouteNode(node)),
    trackerItem: (from, cwd) => fetchTrackerItem(s.github?.client ?? null, from, cwd),
  });
/** The overnight queue over musher's route store, the gateway's metering and the night's scheduled wall jobs. */
const queue = (s: HandlerContext) =>
  nightQueue({
    routes: s.core.routes,
    events: s.core.lifecycle,
    spend: s.core.platformKey,
    nightOf: s.core.nightOf,
    wallJobs: () =>
      s.core.scheduler
        .list(200)
        .filter((j) => j.kind === OVERNIGHT_KIND && (j.state === 'scheduled' || j.state === 'running'))
        .map((j) => ({ id: j.id, state: j.state, runAt: j.runAt, sessionId: j.sessionId, summary: j.result?.summary ?? null })),
    cancelWallJob: (id) => cancelJob(s.core.scheduler, id),
    clock: s.core.clock,
    formatTime: (ms) => formatClock(ms, s.core.timeZone),
    // Each job's timeline in its window's zone, on the 24-hour clock the digest uses.
    timeIn: (repo) => (ms) => clock24(ms, s.core.digestSettingsOf(repo).zone),
    seat: () => seatName(),
  });
const cwdOf = (s: HandlerContext) => (sid: string) => s.core.sessions.get(sid)?.cwd ?? null;

export const HANDLERS = {
  hook: async (s, r) => {
    const event = r.params.event!;
    const delivery = {
      eventId: r.header('x-sleds-event-id') ?? globalThis.crypto.randomUUID(),
      event,
      harness: r.header('x-sleds-harness') ?? DEFAULT_HARNESS_ID,
      receivedAt: Number(r.header('x-sleds-received-at')) || s.core.clock.now(),
      raw: r.body,
      viaSpool: false,
      resumedFor: r.header('x-sleds-wall') ?? null,
      tmux: tmuxOf(r.header('x-sleds-tmux'), r.header('x-sleds-tmux-pane')),
    };
    if (s.core.answers(event)) {
      const { answer, after } = await s.core.handleHook(delivery);
      if (!after) return json(200, answer);
      return { ...json(200, answer), after: { on: 'finish', run: () => void after().catch((e: Error) => s.log.error(`hook ${event}: after the answer: ${e.message}`)) } };
    }
    // Nothing to say back: let the harness go on at once, then record the event.
    return { ...json(200, CARRY_ON), after: { on: 'next', run: () => void s.core.handleHook(delivery).catch((e: Error) => s.log.error(`hook ${event}: ${e.message}`)) } };
  },
  statusline: (s, r) => {
    const { line, record } = s.core.statusline(r.body, r.header('x-sleds-color') !== '0');
    const run = () => {
      try {
        record();
      } catch (e) {
        s.log.error(`statusline bookkeeping: ${(e as Error).message}`);
      }
    };
    return { status: 200, text: line, after: { on: 'next', run } };
  },
  status: async (s) => {
    // At most one round of `git ls-remote` a minute for the status; `sleds handoffs` always asks.
    await s.core.handoff?.refreshSent(cwdOf(s), 60_000);
    return json(200, s.core.status());
  },
  usagePoller: (s) => json(200, { line: s.core.usagePollerLine(), state: s.core.usagePoller?.state() ?? null }),
  walls: (s) => json(200, s.core.wallForecasts()),
  bars: (s) => json(200, s.core.barsNow()),
  wall: (s, r) =>
    withWall(s, r, (wall) => {
      // The card as the prompt words it (kept for old clients), and the view model every surface renders.
      const view = s.core.wallKeeper.view(wall);
      return json(200, { wall, card: renderCardForPrompt(view), wallCard: view, events: s.core.wallBook.events(wall.wallId) });
    }),
  wallExplain: (s, r) => withWall(s, r, (wall) => json(200, { text: s.core.wallKeeper.explain(wall.wallId) })),
  wallGo: (s, r) =>
    withWall(s, r, async (wall) => {
      const go = await s.core.wallKeeper.go(wall.wallId);
      return json('error' in go ? 409 : 200, go);
    }),
  snapshots: (s) => json(200, s.core.snapshotList()),
  snapshot: async (s, r) => answered(await s.core.snapshotShow(r.params.id!)),
  estimate: async (s, r) => answered(await estimateRoute(s.core.estimates, r.body)),
  taskDone: async (s, r) => answered(await finishTaskRoute(s.core.receipts, r.params.id!)),
  report: (s, r) => answered(reportRoute({ usage: s.core.usage, platformKey: s.core.platformKey, timeZone: s.core.timeZone, seat: seatName() }, Object.fromEntries(r.query))),
  receipts: async (s, r) => answered(await listReceipts(s.core.receipts, s.core.receiptStore, r.query)),
  receipt: async (s, r) => answered(await showReceipt(s.core.receipts, s.core.receiptStore, r.params.id!)),
  picker: async (s, r) => answered(await showPicker(s.core.picker, s.core.tasks.store, r.params.id!)),
  dispatch: async (s, r) => answered(await dispatchTask(s.core.picker, s.core.tasks.store, r.params.id!, r.body)),
  tasks: async (s, r) => answered(await listTasks(s.core.tasks.store, s.core.clock.now(), r.query)),
  taskCreate: async (s, r) => answered(await createTask(s.core.tasks, r.body)),
  task: async (s, r) =>
    answered(
      await showTask(
        s.core.tasks.store,
        r.params.id!,
        (t) => {
          const receipt = s.core.receipts.forTask(t.id);
          return { receipt, receiptLine: receipt ? s.core.receipts.lineOf(receipt) : null };
        },
        (id) => s.core.estimates.bandOf(id),
      ),
    ),
  taskUpdate: async (s, r) => answered(await updateTask(s.core.tasks, s.core.tasks.store, r.params.id!, r.body)),
  park: async (s, r) => answered(await parkQuestion(s.core.questions, r.params.id!, r.body)),
  questions: async (s, r) => answered(await listQuestions(s.core.questions, r.query)),
  question: async (s, r) => answered(await showQuestion(s.core.questions, r.params.id!)),
  answer: async (s, r) => answered(await answerQuestion(s.core.questions, r.params.id!, r.body)),
  sessionTask: async (s, r) => answered(await sessionTask(s.core.tasks, s.core.questions, r.params.id!)),
  // A PR-watcher round now: a PR just opened ends its task without waiting for the poll.
  githubWatch: async (s) => (s.github ? json(200, await s.github.prWatcher.runNow()) : json(503, { error: 'this musher does not watch GitHub' })),
  trackerPoll: async (s) => (s.github?.tracker ? json(200, await s.github.tracker.pollNow()) : json(503, { error: 'this musher runs no tracker intake' })),
  tracker: (s) => (s.github?.tracker ? json(200, { now: s.core.clock.now(), items: s.github.tracker.items() }) : json(503, { error: 'this musher runs no tracker intake' })),
  jobs: (s, r) => answered(listJobs(s.core.scheduler, s.core.clock, Number(r.query.get('limit')) || 50)),
  jobCreate: (s, r) => answered(createJob(s.core.scheduler, s.core.clock, r.body, s.core.timeZone)),
  jobCancel: (s, r) => answered(cancelJob(s.core.scheduler, r.params.id!)),
  gateway: (s) => json(200, s.gateway?.state() ?? { running: false, url: null }),
  gatewayToken: async (s, r) => {
    if (!s.gateway) return json(503, { error: 'this musher runs no gateway' });
    let body: unknown;
    try {
      body = JSON.parse(r.body);
    } catch {
      return json(400, { error: 'body is not JSON — send {sessionId, seat?, project?, wallId?, ttlMs?, tier?}' });
    }
    const minted = await s.gateway.mint(body);
    return json(minted.status, minted.body);
  },
  handoffs: async (s) => {
    // A sent hand-off's pickup is learnt from its transport, when asked.
    await s.core.handoff?.refreshSent(cwdOf(s));
    return json(200, { now: s.core.clock.now(), handoffs: s.core.handoffs.list(100) });
  },
  handOff: async (s, r) => answered(await handOffRoute(r.body, (sid, to) => s.core.handOffSession(sid, to), (id) => s.core.handoffs.get(id))),
  handoffsPrune: async (s, r) => {
    // A body that is not JSON throws: the server answers 500 with the parser's message.
    const body = JSON.parse(r.body || '{}') as { cwd?: unknown };
    if (typeof body.cwd !== 'string') return json(400, { error: 'send {cwd}' });
    if (!s.core.handoff) return json(409, { error: 'hand-offs are not set up on this machine' });
    try {
      return json(200, { pruned: await s.core.handoff.prune(body.cwd) });
    } catch (e) {
      return json(409, { error: (e as Error).message });
    }
  },
  pickup: async (s, r) => {
    let body: { id?: unknown; cwd?: unknown };
    try {
      body = JSON.parse(r.body) as typeof body;
    } catch {
      return json(400, { error: 'body is not JSON — send {id, cwd}' });
    }
    if (typeof body.id !== 'string' || typeof body.cwd !== 'string') return json(400, { error: 'send {id, cwd}' });
    // The one pickup rule is the service's, the same for `/sled pickup`: a second try says where the work is.
    const p = await s.core.pickupHandoff(body.id, body.cwd);
    return json('error' in p ? 409 : 200, 'error' in p ? p : { received: s.core.handoffs.get(p.picked.id), again: p.picked.again });
  },
  health: (s) => json(200, { ok: true, pid: process.pid, startedAt: s.core.startedAt }),
  shutdown: (s) => ({ ...json(200, { ok: true }), after: { on: 'next', run: s.shutdown } }),
  routes: (s) => answered(verbs(s).list()),
  routeLoad: async (s, r) => {
    const loaded = await verbs(s).load(r.body);
    // A repository's overnight jobs may be new: its morning digest is planned now.
    if (loaded.status === 200) s.core.planDigests(s.core.clock.now());
    return answered(loaded);
  },
  routePlan: async (s, r) => answered(await verbs(s).plan(r.body)),
  routeNew: async (s, r) => answered(await verbs(s).fromItem(r.body)),
  routeStart: (s, r) => answered(verbs(s).start(r.body)),
  routeAnswer: (s, r) => answered(s.core.routeQuestions.answer(r.body, s.core.clock.now())),
  routePark: (s, r) => answered(s.core.routeQuestions.park(r.body, s.core.clock.now())),
  routeAsk: async (s, r) => answered(await s.core.routeQuestions.ask(r.body, s.core.clock.now())),
  queue: (s) => answered(queue(s).list()),
  digest: (s) => json(200, { digests: s.core.nightDigest.digests(s.core.clock.now()) }),
  queueCancel: (s, r) => {
    const body = parseBody(r.body, QueueCancelRequest, '{job}');
    return answered(body.ok ? queue(s).cancel(body.value.job) : body.answer);
  },
  queueResume: async (s, r) => {
    const body = parseBody(r.body, QueueResumeRequest, '{job?, cwd}');
    return answered(body.ok ? await s.core.nightResume.resume(body.value) : body.answer);
  },
  needs: (s) => answered(s.core.routeQuestions.needs(s.core.questions.store.list({ state: 'open', limit: 200 }), (id) => s.core.tasks.store.get(id)?.title ?? id)),
  route: (s, r) => answered(verbs(s).show(r.params.key!)),
  routeArm: (s, r) => answered(verbs(s).arm(r.params.key!, r.body)),
  routeMode: (s, r) => answered(verbs(s).mode(r.params.key!, r.body)),
  routeDecisions: (s, r) => answered(verbs(s).decisions(r.params.key!)),
} as const satisfies RouteHandlers;
