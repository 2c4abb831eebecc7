import { randomInt } from 'node:crypto';
import type { Db } from './db.js';
import type { Job, JobResult, JobState, NewJob } from '../scheduler/job.js';
import { stepJob, type JobLife, type JobLifeEvent } from '../../core/lifecycle/job.js';
import { LifecycleEvents } from './lifecycle-events.js';

/**
 * The jobs table. Every state change is a conditional UPDATE (… WHERE state = 'scheduled'): of two callers racing
 * for one job — two ticks, a tick and a cancel, a musher and its successor — exactly one wins, so nothing runs twice.
 * Each move is a step of core/lifecycle/job.ts (SPEC.md § job), appended to lifecycle_events in its transaction.
 */

/** Job ids: short, and no 0/o/1/l to misread. */
const ALPHABET = '23456789abcdefghijkmnpqrstuvwxyz';
const ID_LENGTH = 8;

function newId(): string {
  let id = '';
  for (let i = 0; i < ID_LENGTH; i++) id += ALPHABET[randomInt(ALPHABET.length)];
  return id;
}

interface Row {
  id: string;
  kind: string;
  wall_id: string | null;
  session_id: string | null;
  run_at: number;
  state: JobState;
  payload: string;
  result: string | null;
  handle: string | null;
  attempts: number;
  last_check: string | null;
  created_at: number;
  updated_at: number;
  started_at: number | null;
  finished_at: number | null;
  reported_at: number | null;
}

function parseJson<T>(text: string | null): T | null {
  if (text === null) return null;
  try {
    return JSON.parse(text) as T;
  } catch {
    // A column musher wrote as JSON that does not parse: read as absent.
    return null;
  }
}

function toJob(r: Row): Job {
  return {
    id: r.id,
    kind: r.kind,
    wallId: r.wall_id,
    sessionId: r.session_id,
    runAt: r.run_at,
    state: r.state,
    payload: parseJson<Record<string, unknown>>(r.payload) ?? {},
    result: parseJson<JobResult>(r.result),
    handle: parseJson<Record<string, unknown>>(r.handle),
    attempts: r.attempts,
    lastCheck: r.last_check,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    startedAt: r.started_at,
    finishedAt: r.finished_at,
    reportedAt: r.reported_at,
  };
}

export class JobStore {
  private readonly insertStmt;
  private readonly getStmt;
  private readonly listStmt;
  private readonly dueStmt;
  private readonly nextStmt;
  private readonly inStateStmt;
  private readonly claimStmt;
  private readonly retryStmt;
  private readonly giveUpStmt;
  private readonly finishStmt;
  private readonly cancelStmt;
  private readonly forWallStmt;
  private readonly handleStmt;
  private readonly unreportedStmt;
  private readonly reportedStmt;
  private readonly lifecycle: LifecycleEvents;

  constructor(private readonly db: Db) {
    this.lifecycle = new LifecycleEvents(db);
    this.insertStmt = db.prepare(
      `INSERT INTO jobs (id, kind, wall_id, session_id, run_at, state, payload, attempts, created_at, updated_at)
       VALUES (@id, @kind, @wallId, @sessionId, @runAt, 'scheduled', @payload, 0, @now, @now)`,
    );
    this.getStmt = db.prepare(`SELECT * FROM jobs WHERE id = ?`);
    this.listStmt = db.prepare(`SELECT * FROM jobs ORDER BY (state IN ('scheduled', 'running')) DESC, run_at DESC LIMIT ?`);
    this.dueStmt = db.prepare(`SELECT * FROM jobs WHERE state = 'scheduled' AND run_at <= ? ORDER BY run_at, created_at`);
    this.nextStmt = db.prepare(`SELECT id, run_at FROM jobs WHERE state = 'scheduled' ORDER BY run_at LIMIT ?`);
    this.inStateStmt = db.prepare(`SELECT * FROM jobs WHERE state = ? ORDER BY run_at`);
    this.claimStmt = db.prepare(
      `UPDATE jobs SET state = 'running', started_at = @now, updated_at = @now WHERE id = @id AND state = 'scheduled' AND run_at <= @now`,
    );
    this.retryStmt = db.prepare(
      `UPDATE jobs SET run_at = @runAt, attempts = attempts + 1, last_check = @why, updated_at = @now WHERE id = @id AND state = 'scheduled'`,
    );
    this.giveUpStmt = db.prepare(
      `UPDATE jobs SET state = 'failed', attempts = attempts + 1, last_check = @why, result = @result, finished_at = @now, updated_at = @now
       WHERE id = @id AND state = 'scheduled'`,
    );
    this.finishStmt = db.prepare(
      `UPDATE jobs SET state = @state, result = @result, finished_at = @now, updated_at = @now WHERE id = @id AND state = 'running'`,
    );
    this.cancelStmt = db.prepare(
      `UPDATE jobs SET state = 'cancelled', result = @result, finished_at = @now, updated_at = @now WHERE id = @id AND state = 'scheduled'`,
    );
    this.forWallStmt = db.prepare(`SELECT id FROM jobs WHERE wall_id = ? AND state = 'scheduled'`);
    this.handleStmt = db.prepare(`UPDATE jobs SET handle = @handle, updated_at = @now WHERE id = @id AND state = 'running'`);
    this.unreportedStmt = db.prepare(
      `SELECT * FROM jobs WHERE state IN ('done', 'failed') AND reported_at IS NULL AND (@sessionId IS NULL OR session_id = @sessionId)
       ORDER BY finished_at`,
    );
    this.reportedStmt = db.prepare(`UPDATE jobs SET reported_at = @now WHERE id = @id AND reported_at IS NULL`);
  }

  insert(job: NewJob, now: number): Job {
    for (;;) {
      const id = newId();
      try {
        this.db.transaction(() => {
          this.insertStmt.run({
            id,
            kind: job.kind,
            wallId: job.wallId ?? null,
            sessionId: job.sessionId ?? null,
            runAt: job.runAt,
            payload: JSON.stringify(job.payload),
            now,
          });
          this.lifecycle.created('job', id, 'scheduled', job.wallId ?? id, now, { kind: job.kind, runAt: job.runAt });
        })();
        return this.get(id)!;
      } catch (e) {
        if ((e as { code?: string }).code !== 'SQLITE_CONSTRAINT_PRIMARYKEY') throw e;
        // an id drawn twice: draw again
      }
    }
  }

  get(id: string): Job | null {
    const r = this.getStmt.get(id) as Row | undefined;
    return r ? toJob(r) : null;
  }

  /** Scheduled and running first, then the newest. */
  list(limit = 50): Job[] {
    return (this.listStmt.all(limit) as Row[]).map(toJob);
  }

  due(now: number): Job[] {
    return (this.dueStmt.all(now) as Row[]).map(toJob);
  }

  /** The earliest run time among scheduled jobs, skipping the given ids (those already being looked at). */
  nextRunAt(skip: ReadonlySet<string> = new Set()): number | null {
    const rows = this.nextStmt.all(skip.size + 1) as Array<{ id: string; run_at: number }>;
    return rows.find((r) => !skip.has(r.id))?.run_at ?? null;
  }

  inState(state: JobState): Job[] {
    return (this.inStateStmt.all(state) as Row[]).map(toJob);
  }

  /** scheduled → running, when due. False: someone else took it, it was cancelled, or it is not due. */
  claim(id: string, now: number): boolean {
    return this.move(id, { type: 'claim' }, now, () => this.claimStmt.run({ id, now }).changes);
  }

  /** The precheck said "not yet": try again at runAt. */
  retryAt(id: string, runAt: number, why: string, now: number): boolean {
    return this.move(id, { type: 'retry', runAt, why }, now, () => this.retryStmt.run({ id, runAt, why, now }).changes);
  }

  /** The precheck said "not yet" once too often: scheduled → failed. */
  giveUp(id: string, why: string, result: JobResult, now: number): boolean {
    return this.move(id, { type: 'give-up' }, now, () => this.giveUpStmt.run({ id, why, result: JSON.stringify(result), now }).changes);
  }

  /** running → done | failed. */
  finish(id: string, result: JobResult, now: number): boolean {
    return this.move(id, { type: result.ok ? 'finish' : 'fail' }, now, (_, to) => this.finishStmt.run({ id, state: to.state, result: JSON.stringify(result), now }).changes);
  }

  /** scheduled → cancelled. False when it already ran, runs, or was cancelled. */
  cancel(id: string, why: string, now: number): boolean {
    return this.move(id, { type: 'cancel' }, now, () => this.cancelStmt.run({ id, result: JSON.stringify({ ok: false, summary: why } satisfies JobResult), now }).changes);
  }

  /**
   * One step of the job's life cycle: the reducer decides, the statement (conditional on the state it leaves)
   * writes, the event is appended; false when any of them says no.
   */
  private move(id: string, event: JobLifeEvent, now: number, write: (from: JobLife, to: JobLife) => number): boolean {
    const read = (): (JobLife & { wallId: string | null }) | null => {
      const job = this.get(id);
      return job ? { state: job.state, runAt: job.runAt, attempts: job.attempts, wallId: job.wallId } : null;
    };
    return this.lifecycle.apply({ kind: 'job', id, correlationId: read()?.wallId ?? id, event, at: now, read, step: stepJob, write }).ok;
  }

  scheduledForWall(wallId: string): string[] {
    return (this.forWallStmt.all(wallId) as Array<{ id: string }>).map((r) => r.id);
  }

  setHandle(id: string, handle: Record<string, unknown>, now: number): boolean {
    return this.handleStmt.run({ id, handle: JSON.stringify(handle), now }).changes === 1;
  }

  /** Finished jobs whose result nobody has been shown yet (of one session, or all). */
  unreported(sessionId: string | null = null): Job[] {
    return (this.unreportedStmt.all({ sessionId }) as Row[]).map(toJob);
  }

  markReported(id: string, now: number): boolean {
    return this.reportedStmt.run({ id, now }).changes === 1;
  }
}
