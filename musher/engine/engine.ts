import { dirname, join } from 'node:path';
import { RUN_CYCLE, type RunEvent, type RunStateName } from '../../core/lifecycle/run.js';
import { sessionNamedIn, type HarnessEvent } from '../../harnesses/events.js';
import type { Clock } from '../clock.js';
import type { AtLimitPolicy } from '../../core/policy/schema.js';
import type { Checks, EngineLog, EngineNode, EngineRoute, EngineStore, Harnesses, NightPort, NodeFields, NodeReceipts, PullRequests, RouteTracker, RunHandle, Runner, SessionPlacer, Worktrees } from './ports.js';
import { cappedLine, gateNight, isCappedLine } from '../../core/overnight/night-gate.js';
import { OVERNIGHT_DEFAULTS } from '../../core/policy/schema.js';
import { holdsSlot } from '../../core/overnight/ladder.js';

/**
 * `sleds engine`: deliberately dull. Each tick it first reconciles the store with the world (renews its leases, takes
 * over nodes whose engine died, reattaches to their harness processes or reads what they left), then moves every node
 * it holds one step (SPEC.md § run), then claims ready nodes up to its concurrency. It never merges: a merged pull
 * request is what it waits for. Every move is a fenced step of the run reducer in the store, so two engines on one
 * store never both act on a node: a step with a stale token is refused and the loser lets the node go.
 */

export interface EngineSettings {
  /** This engine's name in leases (`host:pid:random`). */
  owner: string;
  leaseMs: number;
  /** Nodes at work at once (claiming, preparing, running, verifying); waiting ones take no slot. */
  concurrency: number;
  /** Where each run's files go: `<runsDir>/<route>/<node>/<attempt>/`. */
  runsDir: string;
  /** How long to wait before asking again about a limit whose reset the harness did not say. */
  unknownResetWaitMs: number;
  /**
   * Rounds further apart than this mean the machine slept (a closed lid): the gap is not runtime. Longer than the
   * loop ever waits between rounds; default 10 minutes.
   */
  asleepAfterMs?: number;
  /** A running node's worktree is checkpointed at most this often while its agent works (default 5 minutes). */
  checkpointEveryMs?: number;
}

export interface PackRequest {
  route: EngineRoute;
  node: EngineNode;
  /** Why the node is back in its session: a failed check, a review, a conflict, an answer, a reset; null on its first run. */
  feedback: { kind: 'verify-failed' | 'checks-failed' | 'changes-requested' | 'conflict' | 'answer' | 'continue'; text: string } | null;
}

export interface Packs {
  /** The prompt handed to the harness (the node's brief, the field book, the route's decisions, its dependencies' PRs). */
  forNode(r: PackRequest): Promise<string>;
  /** The pull request's body (brief, decisions, verification, and the receipt the node carries, if any). */
  prBody(route: EngineRoute, node: EngineNode, verification: string): Promise<string>;
}

export interface EngineDeps {
  store: EngineStore;
  worktrees: Worktrees;
  checks: Checks;
  prs: PullRequests;
  runner: Runner;
  harnesses: Harnesses;
  packs: Packs;
  clock: Clock;
  log: EngineLog;
  settings: EngineSettings;
  /** The route's tracker item (its comment); none: nothing is written there. */
  tracker?: RouteTracker;
  /** The policy at a node's limit (`engine.at_limit` of its repository); none: wait for the reset. */
  atLimit?(route: EngineRoute): AtLimitPolicy;
  /** Each verified node's signed receipt; none: nodes land without one. */
  receipts?: NodeReceipts;
  /** The overnight window, the half-price tier and the caps; none: overnight nodes never start (said once). */
  night?: NightPort;
  /** How the night's times read in its lines (`22:00`); default UTC hours and minutes. */
  formatTime?: (ms: number) => string;
  /** Places a wall's session for an overnight job's worktree (its first run resumes it); none: such a job needs a person. */
  sessions?: SessionPlacer;
}

/** What an overnight job made at a wall is told when it resumes the wall's session in its worktree. */
export const WALL_CONTINUATION =
  'This is the overnight continuation of a session that hit its usage limit, resumed headless in its own worktree: carry on with the task where you stopped, then say what you did.';

export interface TickReport {
  claimed: string[];
  tookOver: string[];
  moved: Array<{ node: string; from: RunStateName; to: RunStateName }>;
  errors: string[];
}

/** How much of an agent's last words a node keeps as its summary. */
const SUMMARY_CHARS = 2_000;
const WORKING: readonly RunStateName[] = ['CLAIMING', 'PREPARING', 'RUNNING', 'VERIFYING'];
const keyOf = (n: { routeKey: string; nodeId: string }) => `${n.routeKey}/${n.nodeId}`;
/**
 * An overnight node's cap: its own, else its window's (the policy's). A window gone from the policy since it started
 * leaves the default, never $0 (which would stop it at once).
 */
const capOf = (n: EngineNode, w: { capMicros: number } | null): number => n.capMicros ?? w?.capMicros ?? OVERNIGHT_DEFAULTS.capMicros;
const utcClock = (ms: number) => `${new Date(ms).toISOString().slice(11, 16)} UTC`;

export class Engine {
  private readonly handles = new Map<string, RunHandle>();
  /** Work under way for a node (preparing, verifying, opening its PR): a tick never starts a second one. */
  private readonly busy = new Map<string, Promise<void>>();
  /** When GitHub may be asked again, per repository. */
  private readonly prWaitUntil = new Map<string, number>();
  /** What a node was last sent back for (fingerprint), so one review or failing check sends it back once. */
  private readonly sentBackFor = new Map<string, string>();
  private report: TickReport = { claimed: [], tookOver: [], moved: [], errors: [] };
  /** Why each overnight node waits, as last said: a line is logged when it changes, not every round. */
  private readonly nightNotes = new Map<string, string>();
  /** When this engine's last round began: a much later round means the machine slept in between. */
  private lastRoundAt: number | null = null;
  /** When each node's worktree was last checkpointed by this engine. */
  private readonly checkpointedAt = new Map<string, number>();
  /** Checkpoints being written, one after another per node (they may be asked for from inside other work). */
  private readonly saving = new Map<string, Promise<void>>();
  /** Overnight jobs whose escalation ran out and whose slot went to the next job, said once each (by question id). */
  private readonly parkedFor = new Set<string>();

  constructor(private readonly d: EngineDeps) {}

  /** One reconcile round. Long work (worktree setup, checks, pushing) runs on; `settle()` waits for it. */
  async tick(): Promise<TickReport> {
    this.report = { claimed: [], tookOver: [], moved: [], errors: [] };
    const { store, clock, settings } = this.d;
    const now = clock.now();
    // A run whose node someone ended meanwhile (`sleds queue cancel`) is stopped: nothing of it goes on.
    for (const [k, handle] of this.handles) {
      const [routeKey, nodeId] = [k.slice(0, k.indexOf('/')), k.slice(k.indexOf('/') + 1)];
      const n = store.node(routeKey, nodeId);
      if (n && !RUN_CYCLE.terminal.includes(n.state)) continue;
      handle.stop();
      this.handles.delete(k);
      this.d.log.info(`${k}: its run was stopped — the node is ${n ? `${n.state}${n.problem ? ` (${n.problem})` : ''}` : 'gone'}`);
    }
    const mine: EngineNode[] = [];
    for (const n of store.activeNodes()) {
      if (n.state === 'QUEUED') continue;
      if (n.leaseOwner === settings.owner) {
        if (store.renew(n.routeKey, n.nodeId, settings.owner, n.fencingToken, now, settings.leaseMs)) mine.push(n);
        else this.forget(n, 'its lease was taken by another engine');
      } else if (n.state !== 'RECOVERY_REQUIRED' && n.leaseExpiresAt !== null && n.leaseExpiresAt <= now) {
        // (A node that needs a person is left alone until they say it is safe: `recovered` queues it again.)
        const token = store.takeOver(n.routeKey, n.nodeId, settings.owner, now, settings.leaseMs);
        if (token !== null) {
          this.report.tookOver.push(keyOf(n));
          this.d.log.info(`${keyOf(n)}: taken over (${n.state}; its engine ${n.leaseOwner ?? 'unknown'} stopped renewing)`);
          mine.push({ ...n, fencingToken: token, leaseOwner: settings.owner });
        }
      }
    }
    this.accountSleep(mine, now);
    await this.followPullRequests(mine.filter((n) => n.state === 'AWAITING_MERGE'));
    for (const n of mine) if (n.state !== 'AWAITING_MERGE') await this.advance(n);

    let working = store.activeNodes().filter((n) => n.leaseOwner === settings.owner && WORKING.includes(n.state)).length;
    for (const n of this.startable(store.ready(now), now)) {
      if (working >= settings.concurrency) break;
      const token = store.claim(n.routeKey, n.nodeId, settings.owner, now, settings.leaseMs);
      if (token === null) continue;
      working++;
      this.report.claimed.push(keyOf(n));
      this.d.log.info(`${keyOf(n)}: claimed`);
      if (n.overnight) this.sayParkedFor(n, now);
      const claimed = store.node(n.routeKey, n.nodeId);
      if (claimed) await this.advance(claimed);
    }
    return this.report;
  }

  /**
   * Time asleep is not runtime (issue 15 § 4): when this round comes far later than the loop ever waits, the machine
   * slept (a closed lid, a suspended VM) since the last one, and every node at work is told so. Its harness slept too:
   * it goes on where it was, its checkpoint and session untouched.
   */
  private accountSleep(mine: EngineNode[], now: number): void {
    const since = this.lastRoundAt;
    this.lastRoundAt = now;
    if (since === null || now - since <= (this.d.settings.asleepAfterMs ?? 10 * 60_000)) return;
    for (let i = 0; i < mine.length; i++) {
      const n = mine[i]!;
      if (!WORKING.includes(n.state)) continue;
      const next = this.step(n, { type: 'slept', sinceMs: since });
      if (!next) continue;
      mine[i] = next;
      this.d.log.info(`${keyOf(n)}: the machine slept ${Math.round((now - since) / 60_000)} min — not counted as its runtime`);
    }
  }

  /**
   * A checkpoint (issue 15 § 4): the worktree's files as a commit kept beside its branch, with the session they go
   * with, so a crash, a restart or a lost worktree resumes the job where it was, not from the start. Never fatal: a
   * checkpoint that cannot be made is logged and the run goes on.
   */
  private async checkpoint(n: EngineNode, why: string): Promise<void> {
    if (!n.worktree || !n.branch || !this.d.worktrees.exists(n.worktree)) return;
    const k = keyOf(n);
    const at = this.d.clock.now();
    this.checkpointedAt.set(k, at);
    try {
      const commit = await this.d.worktrees.checkpoint(n.worktree, n.branch, `sleds checkpoint of ${k}: ${why}`);
      const sessionId = this.d.store.node(n.routeKey, n.nodeId)?.sessionId ?? n.sessionId;
      if (this.d.store.patch(n.routeKey, n.nodeId, n.fencingToken, { checkpoint: { sessionId, commit, at } })) this.d.log.info(`${k}: checkpoint ${commit.slice(0, 12)} (${why})`);
    } catch (e) {
      this.d.log.warn(`${k}: no checkpoint (${why}): ${oneLineError(e)}`);
    }
  }

  /** While the agent works, a checkpoint at most every so often, taken between its tool calls. */
  private checkpointWhileWorking(n: EngineNode, events: HarnessEvent[]): void {
    if (!events.some((e) => e.kind === 'tool_call')) return;
    const k = keyOf(n);
    const last = this.checkpointedAt.get(k);
    const now = this.d.clock.now();
    if (last === undefined) {
      // The first this engine sees: the clock starts here (a checkpoint was taken when the node last stopped).
      this.checkpointedAt.set(k, now);
      return;
    }
    if (now - last < (this.d.settings.checkpointEveryMs ?? 5 * 60_000)) return;
    this.checkpointedAt.set(k, now);
    this.saveCheckpoint(n, 'while its agent works');
  }

  /**
   * The worktree a resumed node needs: there as it was, else made again from its branch with its last checkpoint's
   * files (uncommitted work included), so the agent finds what it left.
   */
  private async ensureWorktree(n: EngineNode): Promise<void> {
    if (!n.worktree || this.d.worktrees.exists(n.worktree)) return;
    const route = this.route(n);
    const base = await this.d.worktrees.baseFor(route, n);
    const made = await this.d.worktrees.create(route, n, base, this.slotOf(n));
    if (n.checkpoint) await this.d.worktrees.restore(made.path, n.checkpoint.commit);
    this.d.store.patch(n.routeKey, n.nodeId, n.fencingToken, { worktree: made.path });
    this.d.log.info(`${keyOf(n)}: its worktree was gone — made again from ${made.branch}${n.checkpoint ? ` and checkpoint ${n.checkpoint.commit.slice(0, 12)}` : ''}`);
  }

  /**
   * The ready nodes this round may start: every daytime one, and the overnight ones the night lets go (in its window,
   * under its cap, in priority order, up to its concurrency); each overnight node held says why, once per change.
   */
  private startable(ready: EngineNode[], now: number): EngineNode[] {
    const day = ready.filter((n) => !n.overnight);
    const nights = ready.filter((n) => n.overnight);
    if (nights.length === 0) return day;
    const night = this.d.night;
    if (!night) {
      for (const n of nights) this.noteNight(n, 'this engine has no overnight runner configured');
      return day;
    }
    const workingNights = this.workingNights(now);
    const byKey = new Map(nights.map((n) => [keyOf(n), n]));
    const gate = gateNight(
      nights.map((n) => {
        const w = night.windowFor(this.route(n), now);
        return { key: keyOf(n), band: n.band, capMicros: capOf(n, w), window: w, working: workingNights };
      }),
      now,
      this.d.formatTime ?? utcClock,
    );
    for (const w of gate.waiting) this.noteNight(byKey.get(w.key)!, w.why);
    return [...day, ...gate.start.map((k) => byKey.get(k)!)];
  }

  /**
   * Overnight nodes holding a slot of the night: at work, or waiting on a question escalated to the on-call that may
   * still answer (the ladder: until the escalation runs out the job keeps its place; then it parks, and its slot frees).
   */
  private workingNights(now: number): number {
    return this.d.store.activeNodes().filter((x) => x.overnight && (WORKING.includes(x.state) || (x.state === 'WAITING_FOR_INPUT' && this.escalationHolds(x, now)))).length;
  }

  private escalationHolds(n: EngineNode, now: number): boolean {
    return holdsSlot(this.d.store.openQuestion(n.routeKey, n.nodeId)?.escalateUntil ?? null, now);
  }

  /** The next overnight job started: each job parked for want of a reply says so, once (`no reply · parked … · started job …`). */
  private sayParkedFor(next: EngineNode, now: number): void {
    for (const x of this.d.store.activeNodes()) {
      if (!x.overnight || x.state !== 'WAITING_FOR_INPUT') continue;
      const q = this.d.store.openQuestion(x.routeKey, x.nodeId);
      const until = q?.escalateUntil ?? null;
      if (!q || until === null || until > now || this.parkedFor.has(q.id)) continue;
      this.parkedFor.add(q.id);
      const line = `no reply · parked ${keyOf(x)} · started job ${keyOf(next)}`;
      this.d.log.info(`${keyOf(x)}: ${line}`);
      this.d.store.note?.(x.routeKey, x.nodeId, line, now);
    }
  }

  private noteNight(n: EngineNode, why: string): void {
    const k = keyOf(n);
    if (this.nightNotes.get(k) === why) return;
    this.nightNotes.set(k, why);
    this.d.log.info(`${k}: overnight — ${why}`);
  }

  /** An overnight node at work that reached its cap is stopped, its session and worktree kept: true when it was. */
  private stopAtCap(n: EngineNode): boolean {
    const night = this.d.night;
    if (!n.overnight || !night) return false;
    const now = this.d.clock.now();
    const w = night.windowFor(this.route(n), now);
    const cap = capOf(n, w);
    const spent = night.spentMicros(n);
    if (spent < cap) return false;
    const k = keyOf(n);
    const handle = this.handles.get(k) ?? this.reattach(n);
    // The gateway meters an answer before this engine has read the stream that named the session (it reads once a
    // round): the name is taken from the stream before the run stops, or a raised cap could not resume the job.
    const named = handle ? sessionNamedIn(handle.read()) : null;
    handle?.stop();
    this.handles.delete(k);
    // It waits as at a limit: the next window's start is its "reset", when a raised cap lets it go on.
    const next = w && now < w.startMs ? w.startMs : (night.windowFor(this.route(n), (w?.endMs ?? now) + 1)?.startMs ?? now + 86_400_000);
    const line = cappedLine(spent, cap);
    const stopped = this.step(n, { type: 'rate-limited', resetsAtMs: next }, { lastError: line, ...(named && named !== n.sessionId ? { sessionId: named } : {}) });
    if (stopped) {
      this.d.log.info(`${k}: ${line}`);
      this.saveCheckpoint(stopped, 'stopped at its cap');
    }
    return true;
  }

  /** Waits for the work ticks started (tests and `--once`). */
  async settle(): Promise<void> {
    while (this.busy.size > 0 || this.saving.size > 0) await Promise.all([...this.busy.values(), ...this.saving.values()]);
  }

  /** A checkpoint taken beside whatever else the node's work is doing, after the one before it. */
  private saveCheckpoint(n: EngineNode, why: string): void {
    const k = keyOf(n);
    const p: Promise<void> = (this.saving.get(k) ?? Promise.resolve()).then(() => this.checkpoint(n, why)).finally(() => {
      if (this.saving.get(k) === p) this.saving.delete(k);
    });
    this.saving.set(k, p);
  }

  /**
   * Resolves when one of the runs this engine follows writes to its stream or ends, or after `maxMs` (a run that
   * died quietly, a merge on GitHub, a limit's reset): what the loop waits on between ticks, so an event is acted
   * on at once. `wait` is the timer (injected: tests and the loop pass their own).
   */
  activity(maxMs: number, wait: (ms: number) => Promise<void>): Promise<void> {
    const handles = [...this.handles.values()];
    return new Promise<void>((resolve) => {
      const offs: Array<() => void> = [];
      let done = false;
      const finish = () => {
        if (done) return;
        done = true;
        for (const off of offs) off();
        resolve();
      };
      for (const h of handles) offs.push(h.onActivity(finish));
      if (handles.some((h) => h.ended())) finish();
      void wait(maxMs).then(finish);
    });
  }

  /** The runs this engine watches (for the status line). */
  watching(): string[] {
    return [...this.handles.keys()];
  }

  private forget(n: EngineNode, why: string): void {
    const k = keyOf(n);
    if (this.handles.has(k)) this.d.log.warn(`${k}: no longer ours — ${why}`);
    this.handles.delete(k);
  }

  private step(n: EngineNode, event: RunEvent, fields?: NodeFields): EngineNode | null {
    const r = this.d.store.step(n.routeKey, n.nodeId, n.fencingToken, event, this.d.clock.now(), fields);
    if (!r.ok) {
      this.report.errors.push(`${keyOf(n)}: ${r.error}`);
      this.d.log.warn(`${keyOf(n)}: ${r.error}`);
      return null;
    }
    this.report.moved.push({ node: keyOf(n), from: n.state, to: r.node.state });
    return r.node;
  }

  /** Runs `work` for a node unless some is already under way; errors become the node's recovery reason. */
  private spawnWork(n: EngineNode, work: () => Promise<void>): void {
    const k = keyOf(n);
    if (this.busy.has(k)) return;
    const p = work()
      .catch((e: unknown) => {
        const reason = oneLineError(e);
        this.d.log.warn(`${k}: ${reason}`);
        const fresh = this.d.store.node(n.routeKey, n.nodeId);
        if (fresh && fresh.fencingToken === n.fencingToken && ['PREPARING', 'RUNNING', 'VERIFYING'].includes(fresh.state)) this.step(fresh, { type: 'lost', reason });
      })
      .finally(() => this.busy.delete(k));
    this.busy.set(k, p);
  }

  private async advance(n: EngineNode): Promise<void> {
    if (this.busy.has(keyOf(n))) return;
    switch (n.state) {
      case 'CLAIMING': {
        const next = this.step(n, { type: 'claimed' });
        if (next) this.spawnWork(next, () => this.prepare(next));
        return;
      }
      case 'PREPARING':
        this.spawnWork(n, () => this.prepare(n));
        return;
      case 'RUNNING':
        if (this.stopAtCap(n)) return;
        this.follow(n);
        return;
      case 'VERIFYING':
        this.spawnWork(n, () => this.verify(n));
        return;
      case 'WAITING_FOR_LIMIT': {
        const now = this.d.clock.now();
        const due = n.resetsAtMs ?? n.enteredAt + this.d.settings.unknownResetWaitMs;
        if (now < due) {
          this.atLimit(n, due);
          return;
        }
        if (n.overnight && !this.nightLetsResume(n, now)) return;
        const next = this.step(n, { type: 'limit-reset' });
        // A question about this limit nobody answered (`at_limit: ask`) is moot now: it must not hold the node later.
        const asked = this.d.store.openQuestion(n.routeKey, n.nodeId);
        if (next && asked) this.d.store.settleQuestion(asked.id, 'the limit reset before anyone answered: it carried on', now);
        const words = n.overnight && isCappedLine(n.lastError) ? 'Your spending cap was raised. Carry on where you stopped.' : 'The usage limit has reset. Carry on where you stopped.';
        if (next) this.spawnWork(next, () => this.resume(next, { kind: 'continue', text: words }));
        return;
      }
      case 'WAITING_FOR_INPUT': {
        const answer = n.questionId ? this.d.store.answerTo(n.routeKey, n.nodeId, n.questionId) : null;
        if (answer === null) return;
        // A late answer to an overnight job resumes it inside a window only, and in a free slot of the night.
        if (n.overnight && !this.nightSlotFor(n)) return;
        const next = this.step(n, { type: 'answered' });
        const text = `${n.lastError ? `You asked: ${n.lastError}\n` : ''}The answer: ${answer}`;
        if (next) {
          this.d.store.markDelivered(n.questionId!, this.d.clock.now());
          this.spawnWork(next, () => this.resume(next, { kind: 'answer', text }));
        }
        return;
      }
      default:
        return;
    }
  }

  /**
   * A node at its limit before the reset, as the policy says (issue 14 § 11): wait; switch harness or model now (once
   * per limit: a node already on the target waits); or ask a person — wait, or switch — with a parked question.
   */
  private atLimit(n: EngineNode, due: number): void {
    const policy = this.d.atLimit?.(this.route(n)) ?? { then: 'wait', harness: null, model: null };
    if (policy.then === 'wait') return;
    const target = { harness: policy.harness ?? n.harness, model: policy.model ?? n.model };
    const already = target.harness === n.harness && target.model === n.model;
    if (already) return;
    const where = [policy.harness, policy.model].filter(Boolean).join(' / ');
    if (policy.then === 'ask') {
      // One question per stay at the limit: asked on entering it, its answer read on every round after.
      const asked = this.d.store.latestQuestion(n.routeKey, n.nodeId, n.enteredAt);
      const options = [`Wait for the reset at ${new Date(due).toISOString().slice(11, 16)} UTC: nothing more is spent meanwhile`, `Switch to ${where} now: it carries on from the worktree`];
      const qid = asked?.id ?? this.d.store.askQuestion(n.routeKey, n.nodeId, `${keyOf(n)} hit its usage limit. Wait for the reset, or switch to ${where}?`, this.d.clock.now(), options);
      const answer = this.d.store.answerTo(n.routeKey, n.nodeId, qid);
      if (answer === null) return;
      // Its answer is the engine's to act on, never the agent's to be handed at the end of a turn.
      this.d.store.markDelivered(qid, this.d.clock.now());
      if (answer.startsWith(options[0]!)) return;
    }
    const harnessChanged = target.harness !== n.harness;
    const next = this.step(n, { type: 'limit-reset' }, { harness: target.harness, model: target.model, ...(harnessChanged ? { sessionId: null } : {}) });
    if (!next) return;
    this.d.log.info(`${keyOf(n)}: at its limit — switched to ${where} (engine.at_limit)`);
    const text = harnessChanged
      ? `You take this node over from ${n.harness ?? 'another harness'}, which stopped at its usage limit. Its work so far is in this worktree (committed and uncommitted): read it, then carry on from there.`
      : `The usage limit of the last model stopped the run; you are ${target.model}. Carry on where it stopped.`;
    this.spawnWork(next, () => (harnessChanged ? this.startRun(next, null, { kind: 'continue', text }) : this.resume(next, { kind: 'continue', text })));
  }

  /** An answered overnight node resumes in a window (nightLetsResume) with a free slot; else it says what it waits for. */
  private nightSlotFor(n: EngineNode): boolean {
    const now = this.d.clock.now();
    if (!this.nightLetsResume(n, now)) return false;
    const w = this.d.night?.windowFor(this.route(n), now);
    if (w && this.workingNights(now) >= w.concurrency) {
      this.noteNight(n, 'answered; it resumes when a slot of the night is free');
      return false;
    }
    return true;
  }

  /** An overnight node past its wait goes on only inside a window, and only once its spend is under its cap. */
  private nightLetsResume(n: EngineNode, now: number): boolean {
    const night = this.d.night;
    if (!night) return false;
    const w = night.windowFor(this.route(n), now);
    if (!w || now < w.startMs) {
      this.noteNight(n, w ? `waits for the window at ${(this.d.formatTime ?? utcClock)(w.startMs)}` : 'its repository’s policy has no overnight window');
      return false;
    }
    const cap = capOf(n, w);
    const spent = night.spentMicros(n);
    if (spent >= cap) {
      this.noteNight(n, `still at its cap: ${cappedLine(spent, cap)}`);
      return false;
    }
    return true;
  }

  private route(n: EngineNode): EngineRoute {
    const r = this.d.store.route(n.routeKey);
    if (!r) throw new Error(`route '${n.routeKey}' is gone from the store`);
    return r;
  }

  /** PREPARING: the worktree from the merged tip of its dependencies, then the harness started on the pack. */
  private async prepare(n: EngineNode): Promise<void> {
    const route = this.route(n);
    const harness = this.d.harnesses.forNode(n);
    if (!harness.ok) {
      this.step(n, { type: 'lost', reason: harness.error });
      return;
    }
    let made: { path: string; branch: string; baseSha: string };
    try {
      const base = await this.d.worktrees.baseFor(route, n);
      made = await this.d.worktrees.create(route, n, base, this.slotOf(n));
    } catch (e) {
      this.step(n, { type: 'lost', reason: `the worktree could not be made: ${oneLineError(e)}` });
      return;
    }
    if (n.resumeFrom) {
      // An overnight job made at a wall resumes that session: its harness finds it by the cwd, the worktree's.
      if (!this.d.sessions) {
        this.step(n, { type: 'lost', reason: `session ${n.resumeFrom} cannot be resumed here: this engine places no sessions` });
        return;
      }
      try {
        await this.d.sessions.place(harness.adapter, n.resumeTranscript, made.path, harness.env);
      } catch (e) {
        this.step(n, { type: 'lost', reason: `session ${n.resumeFrom} could not be placed for its worktree: ${oneLineError(e)}` });
        return;
      }
    }
    const prepared = this.step(
      n,
      { type: 'prepared' },
      { worktree: made.path, branch: made.branch, baseSha: made.baseSha, harness: harness.adapter.id, ...(n.resumeFrom ? { sessionId: n.resumeFrom } : {}) },
    );
    if (!prepared) return;
    if (n.resumeFrom) await this.startRun(prepared, n.resumeFrom, { kind: 'continue', text: WALL_CONTINUATION });
    else await this.startRun(prepared, null, null);
  }

  /** A free port block per worktree: the node's place among this engine's nodes. */
  private slotOf(n: EngineNode): number {
    const held = this.d.store.activeNodes().filter((x) => x.leaseOwner === this.d.settings.owner).map(keyOf).sort();
    const i = held.indexOf(keyOf(n));
    return i < 0 ? held.length : i;
  }


  private async startRun(n: EngineNode, resumeSessionId: string | null, feedback: PackRequest['feedback']): Promise<void> {
    const harness = this.d.harnesses.forNode(n);
    if (!harness.ok) {
      this.step(n, { type: 'lost', reason: harness.error });
      return;
    }
    if (!n.worktree) throw new Error('it has no worktree');
    const route = this.route(n);
    const prompt = await this.d.packs.forNode({ route, node: n, feedback });
    const k = keyOf(n);
    const nodeDir = join(this.d.settings.runsDir, n.routeKey, n.nodeId);
    let env = harness.env;
    let harnessArgs: string[] = [];
    if (n.overnight) {
      // The half-price tier: the harness is pointed at the gateway with a batch-tier token for this node.
      const w = this.d.night?.windowFor(route, this.d.clock.now()) ?? null;
      const night = this.d.night ? await this.d.night.env(route, n, harness.adapter.id, w ? w.endMs : this.d.clock.now() + 12 * 3_600_000) : { ok: false as const, why: 'this engine has no overnight runner configured' };
      if (!night.ok) {
        this.step(n, { type: 'lost', reason: `the half-price tier could not be set up: ${night.why}` });
        return;
      }
      env = { ...env, ...night.env };
      harnessArgs = night.args;
    }
    const handle = this.d.runner.start({ adapter: harness.adapter, bin: harness.bin, cwd: n.worktree, prompt, model: n.model, resumeSessionId, nodeDir, env, harnessArgs, sledsMcp: harness.sledsMcp ?? null });
    this.handles.set(k, handle);
    this.d.store.patch(n.routeKey, n.nodeId, n.fencingToken, { pid: handle.pid, logPath: handle.logPath });
    this.d.log.info(`${k}: ${resumeSessionId ? `resumed session ${resumeSessionId}` : 'started'} in ${harness.adapter.displayName} (pid ${handle.pid})`);
  }

  private async resume(n: EngineNode, feedback: NonNullable<PackRequest['feedback']>): Promise<void> {
    const sessionId = n.sessionId ?? n.checkpoint?.sessionId ?? null;
    if (!sessionId) {
      this.step(n, { type: 'lost', reason: 'its session id is unknown, so it cannot be resumed' });
      return;
    }
    await this.ensureWorktree(n);
    await this.startRun(n, sessionId, feedback);
  }

  /** RUNNING: reads the stream; the run's state comes from its events, never from a screen. */
  private follow(n: EngineNode): void {
    const k = keyOf(n);
    let handle = this.handles.get(k) ?? null;
    if (handle === null) {
      // After a restart or a takeover: the same process if it still runs, else what it left.
      handle = this.reattach(n);
      if (handle === null) {
        const harness = this.d.harnesses.forNode(n);
        const runDir = n.logPath ? dirname(n.logPath) : null;
        const left = harness.ok && runDir ? this.d.runner.leftover(harness.adapter, runDir) : [];
        this.spawnWork(n, () => this.recoverRun(n, left));
        return;
      }
    }
    const ended = handle.ended();
    const events = handle.read();
    const outcome = this.apply(n, events);
    if (outcome === 'moved') {
      this.handles.delete(k);
      return;
    }
    if (!ended) this.checkpointWhileWorking(n, events);
    if (ended) {
      this.handles.delete(k);
      // It exited without completing its turn: resume it from its session, once; a second death needs a person.
      this.spawnWork(n, () => this.recoverRun(n, []));
    }
  }

  /** The harness process a node's run left running (after a restart or a takeover), kept as its handle; else null. */
  private reattach(n: EngineNode): RunHandle | null {
    const harness = this.d.harnesses.forNode(n);
    const runDir = n.logPath ? dirname(n.logPath) : null;
    if (!harness.ok || !runDir) return null;
    const handle = this.d.runner.reattach(harness.adapter, runDir);
    if (handle === null) return null;
    this.handles.set(keyOf(n), handle);
    this.d.log.info(`${keyOf(n)}: reattached to its running harness (pid ${handle.pid})`);
    return handle;
  }

  /**
   * Applies a run's events: the session id as soon as it is named, a limit, a question, the end of the turn. Returns
   * 'moved' once the node has left RUNNING.
   */
  private apply(n: EngineNode, events: HarnessEvent[]): 'moved' | 'running' {
    let sessionId = n.sessionId;
    for (const e of events) {
      if (e.kind === 'turn_started' && e.sessionId && e.sessionId !== sessionId) {
        sessionId = e.sessionId;
        this.d.store.patch(n.routeKey, n.nodeId, n.fencingToken, { sessionId });
      } else if (e.kind === 'rate_limited') {
        return this.stopped(this.step(n, { type: 'rate-limited', resetsAtMs: e.resetsAtMs }), 'at a usage limit');
      } else if (e.kind === 'question') {
        // The harness's own ask tool (Claude's AskUserQuestion): headless, nobody would answer it, so it is parked.
        const open = this.d.store.openQuestion(n.routeKey, n.nodeId);
        const questionId = open?.id ?? this.d.store.askQuestion(n.routeKey, n.nodeId, e.text, this.d.clock.now());
        return this.stopped(this.step(n, { type: 'question', questionId }, { lastError: open?.question ?? e.text }), 'waiting for an answer');
      } else if (e.kind === 'turn_completed') {
        const sid = e.sessionId ?? sessionId;
        if (!e.ok || !sid) {
          const next = this.step(n, { type: 'lost', reason: `the harness ended its turn with an error: ${e.text ?? 'no reason given'}` });
          return next ? 'moved' : 'running';
        }
        // Its agent parked a question (the MCP park verb) and stopped: it waits for the answer, its siblings go on. An
        // answer that came before the turn ended (a quick tap) is handed over on the next round, never dropped.
        const parked = this.d.store.openQuestion(n.routeKey, n.nodeId) ?? this.d.store.undeliveredAnswer(n.routeKey, n.nodeId);
        if (parked) {
          const next = this.step(n, { type: 'question', questionId: parked.id }, { lastError: parked.question, sessionId: sid });
          if (next) this.d.log.info(`${keyOf(n)}: waits for an answer — ${parked.question.slice(0, 120)} (sleds needs)`);
          return this.stopped(next, 'its turn ended on a question');
        }
        // The agent's last words, until verification adds what it changed: the PR and the nodes after it read them.
        const next = this.step(n, { type: 'turn-completed', sessionId: sid }, { sessionId: sid, summary: e.text ? e.text.trim().slice(0, SUMMARY_CHARS) : null });
        if (next) this.spawnWork(next, () => this.verify(next));
        return next ? 'moved' : 'running';
      }
    }
    return 'running';
  }

  /** A node that stopped to wait (a limit, a question): checkpointed where it stopped. */
  private stopped(next: EngineNode | null, why: string): 'moved' | 'running' {
    if (!next) return 'running';
    this.saveCheckpoint(next, why);
    return 'moved';
  }

  /** A run whose process is gone: finish what its stream says, else resume it from its session id, else a person. */
  private async recoverRun(n: EngineNode, left: HarnessEvent[]): Promise<void> {
    if (this.apply(n, left) === 'moved') return;
    const k = keyOf(n);
    if (this.resumedOnce.has(k) || !n.sessionId) {
      this.step(n, { type: 'lost', reason: n.sessionId ? 'its harness stopped twice without finishing its turn' : 'its harness stopped before it named a session' });
      return;
    }
    this.resumedOnce.add(k);
    await this.resume(n, { kind: 'continue', text: 'Your run was interrupted. Carry on where you stopped.' });
  }

  private resumedOnce = new Set<string>();

  /** VERIFYING: commit what the agent left, run the policy's checks; pass → push and open the PR; fail → back to it. */
  private async verify(n: EngineNode): Promise<void> {
    if (!n.worktree || !n.branch) throw new Error('it has no worktree to verify');
    const route = this.route(n);
    await this.d.worktrees.commitAll(n.worktree, `${n.nodeId}: ${n.title}`);
    await this.checkpoint(n, 'its turn ended');
    const report = await this.d.checks.run(route, n.worktree);
    if (!report.ok) {
      const failures = n.verifyFailures + 1;
      if (failures >= this.d.checks.maxAttempts(route)) {
        this.step(n, { type: 'lost', reason: `its checks failed ${failures} times (${report.summary})` }, { verifyFailures: failures });
        return;
      }
      const back = this.step(n, { type: 'verification-failed' }, { verifyFailures: failures });
      if (back) await this.resume(back, { kind: 'verify-failed', text: `The checks failed (${report.summary}). Fix this and finish:\n\n${report.failures}` });
      return;
    }
    const changed = await this.changedFiles(n);
    const said = n.summary?.split('\n\nChanged: ')[0] ?? '';
    const summary = [said, changed.length > 0 ? `Changed: ${changed.slice(0, 30).join(', ')}${changed.length > 30 ? ` and ${changed.length - 30} more` : ''}` : ''].filter(Boolean).join('\n\n') || null;
    const stepped = this.step(n, { type: 'verified', checks: report.summary.slice(0, 500) }, { lastError: null, summary });
    if (!stepped) return;
    // Its runtime is counted up to the verification (the step above): the receipt is made from the verified row.
    const verified = await this.landReceipt(route, stepped, changed.length);
    await this.d.worktrees.push(route, n.worktree, n.branch);
    if (verified.prNumber === null) {
      const pr = await this.d.prs.open(route, verified, await this.d.packs.prBody(route, verified, report.summary));
      this.d.store.patch(n.routeKey, n.nodeId, n.fencingToken, { prNumber: pr.number, prUrl: pr.url });
      this.d.log.info(`${keyOf(n)}: verified (${report.summary}); pull request #${pr.number} opened`);
    } else {
      // Back after a send-back: the PR's body carries the new receipt.
      await this.d.prs.updateBody(route, verified.prNumber, await this.d.packs.prBody(route, verified, report.summary));
      this.d.log.info(`${keyOf(n)}: verified (${report.summary}); pull request #${verified.prNumber} updated`);
    }
    await this.d.tracker?.changed(route);
  }

  /** What the node's branch changed since its base (none known without a worktree and a base). */
  private changedFiles(n: EngineNode): Promise<string[]> {
    return n.worktree && n.baseSha ? this.d.worktrees.changedFiles(n.worktree, n.baseSha) : Promise.resolve([]);
  }

  /** The node's signed receipt, kept on its row (a fenced patch); a receipt that cannot be made is logged, not fatal. */
  private async landReceipt(route: EngineRoute, n: EngineNode, filesTouched: number): Promise<EngineNode> {
    const harness = this.d.harnesses.forNode(n);
    if (!this.d.receipts || !harness.ok) return n;
    try {
      const made = await this.d.receipts.make({ route, node: n, adapter: harness.adapter, nodeDir: join(this.d.settings.runsDir, n.routeKey, n.nodeId), filesTouched });
      if (!this.d.store.patch(n.routeKey, n.nodeId, n.fencingToken, { receipt: made.receipt })) return n;
      this.d.log.info(`${keyOf(n)}: receipt ${made.line}`);
      return { ...n, receipt: made.receipt };
    } catch (e) {
      this.d.log.warn(`${keyOf(n)}: no receipt: ${oneLineError(e)}`);
      return n;
    }
  }

  /** AWAITING_MERGE: one round per repository; merged → COMPLETED (and the next wave becomes ready), closed → CANCELLED. */
  private async followPullRequests(nodes: EngineNode[]): Promise<void> {
    const byRepo = new Map<string, { route: EngineRoute; nodes: EngineNode[] }>();
    for (const n of nodes) {
      if (this.busy.has(keyOf(n))) continue;
      if (n.prNumber === null) {
        // Verified but its PR was not opened (GitHub was away): open it now.
        this.spawnWork(n, () => this.reopen(n));
        continue;
      }
      const route = this.route(n);
      const group = byRepo.get(route.repoRoot) ?? { route, nodes: [] };
      group.nodes.push(n);
      byRepo.set(route.repoRoot, group);
    }
    const now = this.d.clock.now();
    for (const [repo, { route, nodes: group }] of byRepo) {
      if ((this.prWaitUntil.get(repo) ?? 0) > now) continue;
      let round: Awaited<ReturnType<PullRequests['follow']>>;
      try {
        round = await this.d.prs.follow(route, group.map((n) => n.prNumber!));
      } catch (e) {
        this.report.errors.push(`pull requests of ${repo}: ${oneLineError(e)}`);
        this.d.log.warn(`could not read the pull requests of ${repo}: ${oneLineError(e)}`);
        continue;
      }
      if (round.retryAfterMs !== null) this.prWaitUntil.set(repo, now + round.retryAfterMs);
      for (const st of round.states) {
        const n = group.find((x) => x.prNumber === st.number);
        if (!n) continue;
        if (st.state === 'MERGED') {
          if (this.step(n, { type: 'merged' })) {
            this.d.log.info(`${keyOf(n)}: pull request #${st.number} merged — completed`);
            if (n.worktree) await this.d.worktrees.remove(route, n.worktree).catch((e: unknown) => this.d.log.warn(`${keyOf(n)}: its worktree was not removed: ${oneLineError(e)}`));
          }
        } else if (st.state === 'CLOSED') {
          this.step(n, { type: 'cancel', reason: `its pull request #${st.number} was closed without a merge` });
        } else if (st.sendBack && this.sentBackFor.get(keyOf(n)) !== st.sendBack.fingerprint) {
          this.sentBackFor.set(keyOf(n), st.sendBack.fingerprint);
          const back = this.step(n, { type: 'sent-back', why: `${st.sendBack.kind}: ${st.sendBack.text.slice(0, 200)}` });
          if (back) {
            const kind = st.sendBack.kind;
            const text = st.sendBack.text;
            this.spawnWork(back, () => this.resume(back, { kind, text }));
          }
        }
      }
      if (round.states.some((st) => st.state !== 'OPEN')) await this.d.tracker?.changed(route);
    }
  }

  private async reopen(n: EngineNode): Promise<void> {
    const route = this.route(n);
    // Pushed again first: a stop between the verification and the push leaves a branch the remote does not have, and
    // GitHub refuses its PR (422 "head invalid") for as long as it is not pushed. A branch already there is a no-op.
    if (n.worktree !== null && n.branch !== null) await this.d.worktrees.push(route, n.worktree, n.branch);
    // A stop between the verified step and its receipt leaves none: made now, so the PR carries it.
    const verified = n.receipt === null ? await this.landReceipt(route, n, (await this.changedFiles(n)).length) : n;
    const pr = await this.d.prs.open(route, verified, await this.d.packs.prBody(route, verified, 'verified'));
    this.d.store.patch(n.routeKey, n.nodeId, n.fencingToken, { prNumber: pr.number, prUrl: pr.url });
  }
}

export function oneLineError(e: unknown): string {
  const text = e instanceof Error ? e.message : String(e);
  return text.replace(/\s*\n\s*/g, ' ').trim().slice(0, 400) || 'an unknown error';
}
