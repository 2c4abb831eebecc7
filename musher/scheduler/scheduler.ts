import { realTimers, type Timers } from '../timers.js';
import type { Clock } from '../clock.js';
import type { Log } from '../log.js';
import type { JobStore } from '../store/jobs.js';
import type { Job, JobResult, NewJob } from './job.js';

/**
 * Runs jobs at their time. Time and the timer are injected: tests move a test clock and call `tick(now)` (or fire the
 * fake timer) instead of sleeping. The real driver sleeps until the next due job, never longer than a minute (so a
 * suspended laptop or a changed clock is noticed soon after), and is re-armed whenever a job is scheduled, cancelled
 * or finishes.
 *
 * Before a job runs, `precheck(job)` may say "not yet" (the lead's: has the bar really dropped?); the job then moves
 * to the time it names, and after `maxChecks` refusals it fails with the last reason. A job runs at most once: the
 * move to `running` is a conditional UPDATE, and a job found `running` at start is followed to its end (a headless run
 * has a handle) or marked failed, never started again.
 */


export type PrecheckAnswer = { go: true } | { go: false; retryAtMs: number; why: string };
export type Precheck = (job: Job) => PrecheckAnswer | Promise<PrecheckAnswer>;

export interface JobContext {
  /** Stores what finds this run again after a restart (a headless run's pid and files). */
  setHandle(handle: Record<string, unknown>): void;
}

export interface JobHandler {
  run(job: Job, ctx: JobContext): Promise<JobResult>;
  /** A job found `running` when musher starts: follow it to its end, or null when it cannot be followed. */
  recover?(job: Job): Promise<JobResult> | null;
}

export interface SchedulerOptions {
  store: JobStore;
  clock: Clock;
  log: Log;
  /** One handler per job kind. */
  handlers: Record<string, JobHandler>;
  timer?: Timers;
  precheck?: Precheck;
  /** Precheck refusals before the job fails; default 12. */
  maxChecks?: number;
  /** The longest the driver sleeps; default 60 s. */
  maxSleepMs?: number;
  /** Every job that reached done or failed (for a notification). */
  onFinished?: (job: Job) => void;
}

export type CancelAnswer = { ok: true; job: Job } | { ok: false; error: string };

const DEFAULT_MAX_CHECKS = 12;
const MAX_SLEEP_MS = 60_000;
/** A precheck that names a time in the past is asked again no sooner than this. */
const MIN_RETRY_MS = 1_000;

export class Scheduler {
  private readonly store: JobStore;
  private readonly clock: Clock;
  private readonly log: Log;
  private readonly timer: Timers;
  private readonly inFlight = new Set<string>();
  private readonly running = new Set<Promise<void>>();
  private armed: unknown = null;
  private armedDelay: number | null = null;
  private started = false;
  private stopped = false;

  constructor(private readonly opts: SchedulerOptions) {
    this.store = opts.store;
    this.clock = opts.clock;
    this.log = opts.log;
    this.timer = opts.timer ?? realTimers;
  }

  /** Follows the jobs a previous musher left running, then arms the timer (an overdue job runs at once). */
  start(): void {
    this.started = true;
    for (const job of this.store.inState('running')) this.track(job.id, () => this.recover(job));
    this.arm();
  }

  /** Stops the timer. Runs under way go on (a headless run is its own process); a later musher follows them. */
  stop(): void {
    this.stopped = true;
    if (this.armed !== null) this.timer.clearTimeout(this.armed);
    this.armed = null;
    this.armedDelay = null;
  }

  schedule(input: NewJob): Job {
    if (!this.opts.handlers[input.kind]) throw new Error(`no handler for jobs of kind '${input.kind}'`);
    const job = this.store.insert(input, this.clock.now());
    this.log.info(`job ${job.id}: ${job.kind} scheduled for ${new Date(job.runAt).toISOString()}${job.sessionId ? ` (session ${job.sessionId})` : ''}`);
    this.arm();
    return job;
  }

  cancel(id: string, why = 'cancelled'): CancelAnswer {
    const job = this.store.get(id);
    if (!job) return { ok: false, error: `no job '${id}' — 'sleds jobs' lists them` };
    if (!this.store.cancel(id, why, this.clock.now())) {
      const now = this.store.get(id)!;
      return { ok: false, error: `job ${id} is ${now.state}, so it cannot be cancelled — only a scheduled job can` };
    }
    this.log.info(`job ${id}: cancelled (${why})`);
    this.arm();
    return { ok: true, job: this.store.get(id)! };
  }

  /** Cancels every scheduled job of a wall (the work went elsewhere); returns them. */
  cancelForWall(wallId: string, why = 'cancelled: the wall was answered another way'): Job[] {
    const out: Job[] = [];
    for (const id of this.store.scheduledForWall(wallId)) {
      const r = this.cancel(id, why);
      if (r.ok) out.push(r.job);
    }
    return out;
  }

  list(limit?: number): Job[] {
    return this.store.list(limit);
  }

  get(id: string): Job | null {
    return this.store.get(id);
  }

  /** Runs every job due at `now` (precheck, claim, run) and resolves when they have finished. */
  async tick(now: number): Promise<void> {
    const due = this.store.due(now).filter((j) => !this.inFlight.has(j.id));
    await Promise.all(due.map((job) => this.track(job.id, () => this.process(job, now))));
    this.arm();
  }

  /** Resolves when nothing is running (tests; a graceful stop). */
  async idle(): Promise<void> {
    while (this.running.size > 0) await Promise.all([...this.running]);
  }

  /** How long the driver sleeps now (null: nothing scheduled, or stopped). */
  sleepingForMs(): number | null {
    return this.armedDelay;
  }

  private track(id: string, work: () => Promise<void>): Promise<void> {
    this.inFlight.add(id);
    const p = work()
      .catch((e) => this.log.error(`job ${id}: ${(e as Error).message}`))
      .finally(() => {
        this.inFlight.delete(id);
        this.running.delete(p);
        this.arm();
      });
    this.running.add(p);
    return p;
  }

  private async process(job: Job, now: number): Promise<void> {
    const answer = await this.precheck(job);
    if (!answer.go) {
      const checks = job.attempts + 1;
      const max = this.opts.maxChecks ?? DEFAULT_MAX_CHECKS;
      if (checks >= max) {
        const summary = `gave up after ${checks} checks: ${answer.why}`;
        if (this.store.giveUp(job.id, answer.why, { ok: false, summary }, this.clock.now())) {
          this.log.warn(`job ${job.id}: ${summary}`);
          this.finished(job.id);
        }
      } else {
        const at = Math.max(answer.retryAtMs, now + MIN_RETRY_MS);
        if (this.store.retryAt(job.id, at, answer.why, this.clock.now())) {
          this.log.info(`job ${job.id}: not yet (${answer.why}); next check ${new Date(at).toISOString()}`);
        }
      }
      return;
    }
    if (!this.store.claim(job.id, now)) return; // cancelled meanwhile, or another musher took it
    const handler = this.opts.handlers[job.kind];
    const fresh = this.store.get(job.id)!;
    this.log.info(`job ${job.id}: ${job.kind} running`);
    let result: JobResult;
    if (!handler) result = { ok: false, summary: `no handler for jobs of kind '${job.kind}' in this musher` };
    else {
      try {
        result = await handler.run(fresh, { setHandle: (h) => void this.store.setHandle(job.id, h, this.clock.now()) });
      } catch (e) {
        result = { ok: false, summary: `failed: ${(e as Error).message}` };
      }
    }
    this.finish(job.id, result);
  }

  private async recover(job: Job): Promise<void> {
    const following = this.opts.handlers[job.kind]?.recover?.(job) ?? null;
    if (!following) {
      this.finish(job.id, {
        ok: false,
        summary: 'musher stopped while this job was starting; not started again so it cannot run twice — resume the session by hand',
      });
      return;
    }
    this.log.info(`job ${job.id}: following the run a previous musher started`);
    let result: JobResult;
    try {
      result = await following;
    } catch (e) {
      result = { ok: false, summary: `failed: ${(e as Error).message}` };
    }
    this.finish(job.id, result);
  }

  private finish(id: string, result: JobResult): void {
    try {
      if (this.store.finish(id, result, this.clock.now())) {
        this.log[result.ok ? 'info' : 'warn'](`job ${id}: ${result.ok ? 'done' : 'failed'} — ${result.summary}`);
        this.finished(id);
      }
    } catch (e) {
      // The store closed under a run that outlived this musher: the next one follows the run by its handle.
      this.log.warn(`job ${id}: finished after musher stopped (${(e as Error).message}); the next musher records it`);
    }
  }

  private finished(id: string): void {
    const job = this.store.get(id);
    if (job && this.opts.onFinished) {
      try {
        this.opts.onFinished(job);
      } catch (e) {
        this.log.error(`job ${id}: onFinished: ${(e as Error).message}`);
      }
    }
  }

  private async precheck(job: Job): Promise<PrecheckAnswer> {
    if (!this.opts.precheck) return { go: true };
    try {
      return await this.opts.precheck(job);
    } catch (e) {
      return { go: false, retryAtMs: this.clock.now() + MAX_SLEEP_MS, why: `precheck failed: ${(e as Error).message}` };
    }
  }

  private arm(): void {
    if (this.stopped || !this.started) return;
    if (this.armed !== null) this.timer.clearTimeout(this.armed);
    this.armed = null;
    this.armedDelay = null;
    const next = this.store.nextRunAt(this.inFlight);
    if (next === null) return;
    const delay = Math.min(Math.max(next - this.clock.now(), 0), this.opts.maxSleepMs ?? MAX_SLEEP_MS);
    this.armedDelay = delay;
    this.armed = this.timer.setTimeout(() => {
      this.armed = null;
      this.armedDelay = null;
      void this.tick(this.clock.now());
    }, delay);
  }
}
