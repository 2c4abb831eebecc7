import { batchBand, gateNight } from '../../core/overnight/night-gate.js';
import { RUN_CYCLE } from '../../core/lifecycle/run.js';
import { timelineText } from '../../core/overnight/timeline.js';
import { receiptLineOf } from '../../core/routes/node-receipt.js';
import { OVERNIGHT_DEFAULTS } from '../../core/policy/schema.js';
import type { RouteBand } from '../../core/routes/band.js';
import type { ApiAnswer } from '../scheduler/api.js';
import type { LifecycleEvents } from '../store/lifecycle-events.js';
import type { PlatformKeyStore } from '../store/platform-key.js';
import { nightSessionId } from './night-tier.js';
import { isNightJobRoute, runId, type NodeRow, type RouteStore } from './route-store.js';
import { NIGHT_JOB_NODE } from '../../core/overnight/night-job.js';

/**
 * `sleds queue` (issue 15 § 1): every overnight job — a route node marked `overnight` — with its state, its band at
 * batch prices, its cap, what it has spent on the half-price tier so far, and its log (its night in words, each line
 * with its time in the window's zone: core/overnight/timeline.ts); and the jobs a wall or the picker queued for the night that no route carries yet. `cancel` ends a
 * job: a route node is CANCELLED (the engine stops its run), a wall's job is unscheduled.
 */

export interface NightQueueDeps {
  routes: RouteStore;
  events: LifecycleEvents;
  spend: PlatformKeyStore;
  /** A repository's overnight window at `now` with its cap and concurrency (null: its policy has none). */
  nightOf(repoRoot: string, now: number): { startMs: number; endMs: number; capMicros: number; concurrency: number } | null;
  /** Jobs queued for the night from a wall or the picker (kind `overnight`, not run by the engine yet). */
  wallJobs(): Array<{ id: string; state: string; runAt: number; sessionId: string | null; summary: string | null }>;
  cancelWallJob(id: string): ApiAnswer;
  clock: { now(): number };
  /** `11:02pm` in the user's zone. */
  formatTime(ms: number): string;
  /** `23:02` in a repository's overnight window's zone, for the jobs' timelines; default formatTime. */
  timeIn?(repoRoot: string): (ms: number) => string;
  /** Who cancels (the seat's handle). */
  seat(): string;
}

export interface QueueJob {
  job: string;
  kind: 'route-node' | 'job' | 'wall';
  title: string;
  state: string;
  /** At batch prices; null: not sized yet. */
  band: RouteBand | null;
  capMicros: number | null;
  spentMicros: number;
  /** Why it waits or stopped, when it does. */
  note: string | null;
  log: string[];
}

const TERMINAL: ReadonlySet<string> = new Set(RUN_CYCLE.terminal);
const WORKING = new Set(['CLAIMING', 'PREPARING', 'RUNNING', 'VERIFYING']);

export function nightQueue(d: NightQueueDeps) {
  /** Why a queued job has not started: what the engine's gate says of it now (core/overnight/night-gate.ts). */
  const whyQueued = (n: NodeRow, repoRoot: string, working: number): string => {
    if (!n.armed) return `not armed — sleds route arm ${n.routeKey}`;
    const open = n.dependsOn.filter((dep) => d.routes.node(n.routeKey, dep)?.run.state !== 'COMPLETED');
    if (open.length > 0) return `waits for ${open.join(', ')} to be merged`;
    const now = d.clock.now();
    const window = d.nightOf(repoRoot, now);
    const capMicros = n.capMicros ?? window?.capMicros ?? OVERNIGHT_DEFAULTS.capMicros;
    const gate = gateNight([{ key: 'job', band: n.band, capMicros, window, working }], now, d.formatTime);
    return gate.waiting[0]?.why ?? 'starts at sleds engine’s next round';
  };
  /** What a job waiting on a question waits for: its on-call (until its escalation runs out), or a person. */
  const whyAsking = (n: NodeRow): string => {
    const q = d.routes.openQuestion(n.routeKey, n.nodeId);
    if (!q) return 'its answer came: it resumes inside a window with a free slot';
    const { rung, escalatedTo, escalateUntil } = q.ladder;
    if (rung === 'escalated' && escalateUntil !== null && d.clock.now() < escalateUntil) return `escalated to ${escalatedTo}: parks at ${d.formatTime(escalateUntil)} if no reply (it keeps its slot until then)`;
    if (rung !== null) return `parked: no reply from ${escalatedTo ?? 'on-call'}; a late answer resumes it (sleds needs)`;
    return `waits for an answer: ${q.question.slice(0, 120)} (sleds needs)`;
  };
  const nodeJob = (n: NodeRow, repoRoot: string, working: number, isJob: boolean): QueueJob => {
    const id = runId(n.routeKey, n.nodeId);
    const window = n.capMicros === null ? d.nightOf(repoRoot, d.clock.now()) : null;
    const capMicros = n.capMicros ?? window?.capMicros ?? OVERNIGHT_DEFAULTS.capMicros;
    const spentMicros = d.spend.sessionsSpendMicros([nightSessionId(n)]);
    const log = timelineText({
      job: id,
      events: d.events.forEntity('run', id),
      questions: d.routes.questionsOf(n.routeKey, n.nodeId),
      decisions: d.routes.decisions(n.routeKey).filter((x) => x.nodeId === n.nodeId),
      capMicros,
      spentMicros,
      lastError: n.lastError,
      prNumber: n.prNumber,
      receiptLine: receiptLineOf(n.receipt),
      time: d.timeIn?.(repoRoot) ?? d.formatTime,
    });
    return {
      // A job musher made (exit 3, /sled overnight, the picker) goes by its route's key: it has one node.
      job: isJob ? n.routeKey : id,
      kind: isJob ? 'job' : 'route-node',
      title: n.title,
      state: n.run.state,
      band: n.band ? batchBand(n.band) : null,
      capMicros,
      spentMicros,
      note: n.run.state === 'QUEUED' ? whyQueued(n, repoRoot, working) : n.run.state === 'WAITING_FOR_INPUT' ? whyAsking(n) : (n.run.problem ?? n.run.reason ?? (n.run.state === 'WAITING_FOR_LIMIT' ? n.lastError : null)),
      log,
    };
  };
  return {
    list(): ApiAnswer {
      const jobs: QueueJob[] = [];
      const nights = d.routes.routes().flatMap((r) => d.routes.nodes(r.key).filter((n) => n.overnight).map((n) => ({ n, repoRoot: r.repoRoot, isJob: isNightJobRoute(r) })));
      const working = nights.filter(({ n }) => WORKING.has(n.run.state)).length;
      for (const { n, repoRoot, isJob } of nights) jobs.push(nodeJob(n, repoRoot, working, isJob));
      for (const j of d.wallJobs())
        jobs.push({
          job: j.id,
          kind: 'wall',
          title: j.sessionId ? `session ${j.sessionId.slice(0, 8)} at its wall` : 'a queued task',
          state: j.state,
          band: null,
          capMicros: null,
          spentMicros: 0,
          note: j.summary ?? `queued for ${d.formatTime(j.runAt)}`,
          log: [],
        });
      // Open jobs first, then the ended ones.
      jobs.sort((a, b) => Number(TERMINAL.has(a.state)) - Number(TERMINAL.has(b.state)));
      return { status: 200, body: { jobs } };
    },
    cancel(job: string): ApiAnswer {
      const slash = job.indexOf('/');
      const made = slash < 0 ? d.routes.route(job) : null;
      if (slash < 0 && !(made && isNightJobRoute(made))) return d.cancelWallJob(job);
      const key = slash < 0 ? job : job.slice(0, slash);
      const id = slash < 0 ? NIGHT_JOB_NODE : job.slice(slash + 1);
      const n = d.routes.node(key, id);
      if (!n || !n.overnight) return { status: 404, body: { error: `no overnight job '${job.slice(0, 80)}' — sleds queue lists them` } };
      if (TERMINAL.has(n.run.state)) return { status: 409, body: { error: `${job} is ${n.run.state} already; nothing to cancel` } };
      const reason = `cancelled by ${d.seat()} (sleds queue cancel)`;
      const r = d.routes.step(key, id, n.fencingToken, { type: 'cancel', reason }, d.clock.now());
      if (!r.ok) return { status: 409, body: { error: r.error } };
      return { status: 200, body: { job, state: r.row.run.state, reason } };
    },
  };
}
