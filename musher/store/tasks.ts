import type { Db } from './db.js';
import type { Task, TaskSource, TaskState, TaskUpdate } from '../../core/task/task.js';
import { Band } from '../../core/estimate/band.js';
import { stepTask, taskEventFor, type TaskLife } from '../../core/lifecycle/task.js';
import { LifecycleEvents, TransitionRefused } from './lifecycle-events.js';

export interface NewTask {
  id: string;
  title: string;
  worth?: string | null;
  type?: string | null;
  repo?: string | null;
  source: TaskSource;
  sourceRef?: string | null;
  promptChars?: number;
  /** The request it started from, when there is more than the title (a session's first prompt, intake's prompt). */
  prompt?: string | null;
  at: number;
}

/**
 * Tasks and which session works on which. The only writer of `tasks` and `task_sessions`. A task's state moves only
 * through core/lifecycle/task.ts (SPEC.md § task): a conditional UPDATE and a row in lifecycle_events, or a refusal.
 */
export class TaskStore {
  private readonly insertStmt;
  private readonly getStmt;
  private readonly forSessionStmt;
  private readonly attachStmt;
  private readonly lifecycle: LifecycleEvents;
  constructor(private readonly db: Db) {
    this.lifecycle = new LifecycleEvents(db);
    this.insertStmt = db.prepare(
      `INSERT INTO tasks (id, title, worth, type, repo, source, source_ref, state, prompt_chars, prompt, turns, created_at, updated_at)
       VALUES (@id, @title, @worth, @type, @repo, @source, @sourceRef, 'open', @promptChars, @prompt, 0, @at, @at)`,
    );
    this.getStmt = db.prepare(`SELECT * FROM tasks WHERE id = ?`);
    this.forSessionStmt = db.prepare(`SELECT t.* FROM tasks t JOIN task_sessions s ON s.task_id = t.id WHERE s.session_id = ?`);
    this.attachStmt = db.prepare(
      `INSERT INTO task_sessions (session_id, task_id, attached_at) VALUES (?, ?, ?)
       ON CONFLICT(session_id) DO UPDATE SET task_id = excluded.task_id, attached_at = excluded.attached_at`,
    );
  }

  /** Creates a task; false when the id is taken (the caller draws another). */
  create(t: NewTask): boolean {
    try {
      this.db.transaction(() => {
        this.insertStmt.run({
        id: t.id,
        title: t.title,
        worth: t.worth ?? null,
        type: t.type ?? null,
        repo: t.repo ?? null,
        source: t.source,
        sourceRef: t.sourceRef ?? null,
        promptChars: t.promptChars ?? 0,
        prompt: t.prompt ?? null,
        at: t.at,
        });
        this.lifecycle.created('task', t.id, 'open', t.id, t.at, { source: t.source });
      })();
      return true;
    } catch (e) {
      if ((e as { code?: string }).code === 'SQLITE_CONSTRAINT_PRIMARYKEY') return false;
      throw e;
    }
  }

  get(id: string): Task | null {
    const r = this.getStmt.get(id) as Record<string, unknown> | undefined;
    return r ? toTask(r) : null;
  }

  /** The request the task started from; null when it had only a title. */
  promptOf(id: string): string | null {
    const r = this.db.prepare(`SELECT prompt FROM tasks WHERE id = ?`).get(id) as { prompt: string | null } | undefined;
    return r?.prompt ?? null;
  }

  /** A tracker item's or client's task, by where it came from. */
  bySource(source: TaskSource, sourceRef: string): Task | null {
    const r = this.db.prepare(`SELECT * FROM tasks WHERE source = ? AND source_ref = ?`).get(source, sourceRef) as Record<string, unknown> | undefined;
    return r ? toTask(r) : null;
  }

  /** The task the session works on now, if any. */
  forSession(sessionId: string): Task | null {
    const r = this.forSessionStmt.get(sessionId) as Record<string, unknown> | undefined;
    return r ? toTask(r) : null;
  }

  /** The sessions that worked on a task, oldest first. */
  sessionsOf(taskId: string): string[] {
    return (this.db.prepare(`SELECT session_id FROM task_sessions WHERE task_id = ? ORDER BY attached_at, session_id`).all(taskId) as Array<{ session_id: string }>).map((r) => r.session_id);
  }

  /** The session works on this task from now on (a session has one task at a time). */
  attach(sessionId: string, taskId: string, at: number): void {
    this.attachStmt.run(sessionId, taskId, at);
  }

  /**
   * Changes a task's fields and moves its state (the event that leads there: park, resume, finish). Asking for the
   * state it is in changes nothing. Throws TransitionRefused (one line) for a move SPEC.md does not have.
   */
  update(id: string, u: TaskUpdate, at: number): Task | null {
    return this.db.transaction(() => {
      const current = this.get(id);
      if (!current) return null;
      if (u.state !== undefined && u.state !== current.state) {
        const moved = this.lifecycle.apply({
          kind: 'task',
          id,
          correlationId: id,
          event: { type: taskEventFor(u.state) },
          at,
          read: (): TaskLife | null => {
            const t = this.get(id);
            return t ? { state: t.state, endedAt: t.endedAt } : null;
          },
          step: stepTask,
          write: (from, to) => this.db.prepare(`UPDATE tasks SET state = ?, ended_at = ? WHERE id = ? AND state = ?`).run(to.state, to.endedAt, id, from.state).changes,
        });
        if (!moved.ok) throw new TransitionRefused(moved.error);
      }
      const sets: string[] = [];
      const params: Record<string, unknown> = { id, at };
      for (const key of ['title', 'worth', 'type'] as const) {
        if (u[key] !== undefined) {
          sets.push(`${key} = @${key}`);
          params[key] = u[key];
        }
      }
      if (sets.length > 0 || u.state !== undefined) this.db.prepare(`UPDATE tasks SET ${[...sets, 'updated_at = @at'].join(', ')} WHERE id = @id`).run(params);
      return this.get(id);
    })();
  }

  setState(id: string, state: TaskState, at: number): Task | null {
    return this.update(id, { state }, at);
  }

  /** One more prompt typed in the task's sessions. */
  countTurn(id: string, at: number): void {
    this.db.prepare(`UPDATE tasks SET turns = turns + 1, updated_at = @at WHERE id = @id`).run({ id, at });
  }

  /** The band the task was given when it was created (kept: its receipt is judged against it). */
  setBand(id: string, band: Band | null): void {
    this.db.prepare(`UPDATE tasks SET band = ? WHERE id = ?`).run(band ? JSON.stringify(band) : null, id);
  }

  band(id: string): Band | null {
    const r = this.db.prepare(`SELECT band FROM tasks WHERE id = ?`).get(id) as { band: string | null } | undefined;
    if (!r?.band) return null;
    const parsed = Band.safeParse(JSON.parse(r.band));
    return parsed.success ? parsed.data : null;
  }

  list(opts: { limit?: number; state?: TaskState } = {}): Task[] {
    const rows = opts.state
      ? this.db.prepare(`SELECT * FROM tasks WHERE state = ? ORDER BY created_at DESC, id LIMIT ?`).all(opts.state, opts.limit ?? 50)
      : this.db.prepare(`SELECT * FROM tasks ORDER BY created_at DESC, id LIMIT ?`).all(opts.limit ?? 50);
    return (rows as Array<Record<string, unknown>>).map(toTask);
  }

  /** `find`, with the one line (and HTTP status) to answer when there is no such task or the prefix is ambiguous. */
  lookup(idOrPrefix: string): { task: Task } | { status: 404 | 409; error: string } {
    const task = this.find(idOrPrefix);
    if (task === 'ambiguous') return { status: 409, error: `'${idOrPrefix}' matches more than one task — type more of its id` };
    if (!task) return { status: 404, error: `no task ${idOrPrefix} — sleds tasks lists them` };
    return { task };
  }

  /** A task by its id or an unambiguous prefix of it (ids are typed by hand). */
  find(idOrPrefix: string): Task | null | 'ambiguous' {
    const exact = this.get(idOrPrefix);
    if (exact) return exact;
    if (idOrPrefix.length < 4) return null;
    const rows = this.db.prepare(`SELECT * FROM tasks WHERE id LIKE ? ESCAPE '\\' LIMIT 2`).all(`${idOrPrefix.replace(/[%_\\]/g, '\\$&')}%`) as Array<Record<string, unknown>>;
    if (rows.length > 1) return 'ambiguous';
    return rows[0] ? toTask(rows[0]) : null;
  }
}

function toTask(r: Record<string, unknown>): Task {
  return {
    id: r.id as string,
    title: r.title as string,
    worth: (r.worth as string | null) ?? null,
    type: (r.type as string | null) ?? null,
    repo: (r.repo as string | null) ?? null,
    source: r.source as TaskSource,
    sourceRef: (r.source_ref as string | null) ?? null,
    state: r.state as TaskState,
    promptChars: r.prompt_chars as number,
    turns: r.turns as number,
    createdAt: r.created_at as number,
    updatedAt: r.updated_at as number,
    endedAt: (r.ended_at as number | null) ?? null,
  };
}
