import type { EstimateRequest } from '../../protocol/requests.js';
import type { Band } from '../../core/estimate/band.js';
import { describeEstimate } from '../../core/estimate/describe.js';
import { formatBand } from '../../core/estimate/format.js';
import { estimateBand, type EstimateQuery, type ReceiptFeatures } from '../../core/estimate/estimator.js';
import { priorBand } from '../../core/estimate/prior.js';
import { remainingFromBand } from '../../core/estimate/remaining.js';
import { activeMinutes } from '../../core/receipt/activity.js';
import type { RemainingWork } from '../../core/exits/types.js';
import type { PriceTable } from '../../core/price-table.js';
import type { Task } from '../../core/task/task.js';
import type { Clock } from '../clock.js';
import type { Log } from '../log.js';
import type { SessionStore } from '../store/sessions.js';
import type { TaskStore } from '../store/tasks.js';
import type { UsageStore } from '../store/usage.js';

/** The wire answer of `POST /v1/estimate` (and of `/sled estimate`, as its `text`). */
export interface EstimateAnswer {
  band: Band | null;
  prior: Band | null;
  similar: number;
  text: string;
}

/** `POST /v1/estimate`'s body: the protocol's schema (protocol/requests.ts), the same for the clients. */
export { EstimateRequest } from '../../protocol/requests.js';

export interface EstimateServiceDeps {
  /** The past receipts of a query's repository, newest first: the estimator's history (core/estimate picks the similar). */
  history(q: EstimateQuery): ReceiptFeatures[];
  tasks: TaskStore;
  sessions: SessionStore;
  usage: UsageStore;
  prices: PriceTable;
  clock: Clock;
  /** The seat whose fit is asked for. */
  seat: string;
  /** Files the task's sessions changed so far (a feature once work has started). */
  filesTouched?(taskId: string): number;
  log?: Log;
  /** Runs `fn` once the request at hand has been answered; default: the next turn of the event loop. */
  later?(fn: () => void): void;
}

/** Sizes prompts and tasks from the receipts (core/estimate), with a labelled prior when too few are similar. */
export class EstimateService {
  /** Tasks created and not priced yet (priceLater). */
  private readonly unpriced = new Set<string>();
  private drainArmed = false;
  constructor(private readonly d: EstimateServiceDeps) {}

  /** The band (or "no band yet" and a prior) for a query; `priorModel` prices the prior when the query names no model. */
  estimate(q: EstimateQuery, priorModel: string | null = q.model): EstimateAnswer {
    const { band, similar } = estimateBand(this.d.history(q), q);
    const row = priorModel ? this.d.prices.lookup(priorModel, this.d.clock.now()) : null;
    const prior = band ? null : priorBand(q.promptChars, row?.base ?? null);
    return { band, prior, similar: similar.length, text: describeEstimate({ band, prior, similar: similar.length, query: q, priorModel }) };
  }

  /** The model a task runs on: its latest session's (from SessionStart or its last priced call). */
  taskModel(taskId: string): string | null {
    for (const sid of [...this.d.tasks.sessionsOf(taskId)].reverse()) {
      const model = this.d.sessions.get(sid)?.model ?? this.d.usage.lastCall(sid)?.model ?? null;
      if (model) return model;
    }
    return null;
  }

  /** The model this machine used last: what a prior is priced on when nothing else names one. */
  private recentModel(): string | null {
    for (const s of this.d.sessions.recent(20)) {
      const model = s.model ?? this.d.usage.lastCall(s.sessionId)?.model ?? null;
      if (model && model !== '<synthetic>') return model;
    }
    return null;
  }

  /** A route node's band before it runs: its brief's size on its model (else the one this machine used last). */
  forRouteNode(node: { brief: string; model: string | null }): EstimateAnswer {
    return this.estimate({ type: null, repo: null, model: node.model, promptChars: node.brief.length, seat: this.d.seat }, node.model ?? this.recentModel());
  }

  /** A task's estimate as it stands now (its type, repository, model, size, and files and turns so far). */
  forTask(task: Task): EstimateAnswer {
    const model = this.taskModel(task.id);
    const started = task.turns > 1;
    return this.estimate(
      {
        type: task.type,
        repo: task.repo,
        model,
        promptChars: task.promptChars,
        filesTouched: started ? (this.d.filesTouched?.(task.id) ?? null) : null,
        turns: started ? task.turns : null,
        seat: this.d.seat,
      },
      model ?? this.recentModel(),
    );
  }

  /**
   * The band a task keeps (its receipt is judged against it): set when it is created, a prior upgraded to a
   * measured band once one exists; a measured band is never replaced.
   */
  priceTask(task: Task): EstimateAnswer {
    this.unpriced.delete(task.id);
    const answer = this.forTask(task);
    const kept = this.d.tasks.band(task.id);
    if (kept?.basis !== 'receipts') {
      const next = answer.band ?? answer.prior;
      if (next) this.d.tasks.setBand(task.id, next);
    }
    return answer;
  }

  /**
   * A new task's band, kept off the request that created it (a session's first prompt answers without waiting on the
   * receipts): priced once that request has been answered — the hook's answer is sent in the same turn of the event
   * loop as the task is created, the pricing runs on the next — or by the first reader of its band before then.
   */
  priceLater(task: Task): void {
    this.unpriced.add(task.id);
    if (this.drainArmed) return;
    this.drainArmed = true;
    (this.d.later ?? setImmediate)(() => {
      this.drainArmed = false;
      this.pricePending();
    });
  }

  /** Prices every task still waiting for its band. */
  pricePending(): void {
    for (const id of [...this.unpriced]) this.priceIfWaiting(id);
  }

  /** A reader is about to read the task's band: a task still waiting for it is priced now. Never throws. */
  private priceIfWaiting(taskId: string): void {
    if (!this.unpriced.has(taskId)) return;
    this.unpriced.delete(taskId);
    try {
      const task = this.d.tasks.get(taskId);
      if (task) this.priceTask(task);
    } catch (e) {
      this.d.log?.error(`the band of task ${taskId}: ${(e as Error).message}`);
    }
  }

  /** The band the task keeps (measured or prior; null: none), priced first if it is still waiting for one. */
  bandOf(taskId: string): Band | null {
    this.priceIfWaiting(taskId);
    return this.d.tasks.band(taskId);
  }

  /** The task's band as it was kept, when measured (the wall's remaining work stands on it). */
  keptBand(taskId: string): Band | null {
    const band = this.bandOf(taskId);
    return band?.basis === 'receipts' ? band : null;
  }

  /**
   * The wall card's remaining work for a session: its task's kept band less what the task has spent and taken so
   * far; null without a measured band (the card shows the session's burn instead).
   */
  remainingFor(sessionId: string): Omit<RemainingWork, 'burnPerHourMicros'> | null {
    const task = this.d.tasks.forSession(sessionId);
    if (!task) return null;
    const band = this.keptBand(task.id);
    if (!band) return null;
    const sessions = this.d.tasks.sessionsOf(task.id);
    const spent = sessions.reduce((a, s) => a + this.d.usage.sessionSpend(s).costMicros, 0);
    return remainingFromBand(band, spent, activeMinutes(this.d.usage.callTimes(sessions)));
  }

  /** `/sled estimate`: the band of the session's task, one paragraph. */
  answerVerb(sessionId: string): string {
    const task = this.d.tasks.forSession(sessionId);
    if (!task) return 'sled: no task yet in this session — type your request first, or /sled task <title>';
    const answer = this.priceTask(task);
    const kept = this.keptBand(task.id);
    const head = `sled: task ${task.id} (${task.title})`;
    if (kept && JSON.stringify(kept) !== JSON.stringify(answer.band)) return `${head}: ${formatBand(kept)}, the band it was given when it started. As it stands now: ${answer.text}`;
    return `${head}: ${answer.text}`;
  }

  /** `POST /v1/estimate`. */
  request(r: EstimateRequest): { status: number; body: EstimateAnswer | { error: string } } {
    if (r.taskId) {
      const found = this.d.tasks.lookup(r.taskId);
      return 'task' in found ? { status: 200, body: this.priceTask(found.task) } : { status: found.status, body: { error: found.error } };
    }
    if (r.text === undefined || r.text.trim() === '') return { status: 400, body: { error: 'nothing to estimate — send {text} (the request) or {taskId}' } };
    const model = r.model ?? null;
    return {
      status: 200,
      body: this.estimate({ type: r.type ?? null, repo: r.repo ?? null, model, promptChars: r.text.length, seat: this.d.seat }, model ?? this.recentModel()),
    };
  }
}
