import { randomBytes } from 'node:crypto';
import { titleFromPrompt, type Task, type TaskIntake, type TaskUpdate } from '../../core/task/task.js';
import { wallIdFrom, WALL_ID_LENGTH } from '../../core/wall/wall-id.js';
import type { Clock } from '../clock.js';
import type { Log } from '../log.js';
import { findRepoRoot } from '../policy/repo-root.js';
import type { SessionStore } from '../store/sessions.js';
import type { TaskStore } from '../store/tasks.js';
import { TransitionRefused } from '../store/lifecycle-events.js';

export interface TaskServiceDeps {
  store: TaskStore;
  sessions: SessionStore;
  clock: Clock;
  log: Log;
  /** The worth levels the policy of a folder's repository knows (high, normal, low by default). */
  worthLevels(cwd: string | null): string[];
  /**
   * A prompt a seat was dispatched with (`sleds pick`): the task it belongs to, so the new session joins that task
   * instead of starting another. Null: an ordinary first prompt.
   */
  claimPrompt?(prompt: string): string | null;
  /** Called once a task is created (the estimator prices it, a tracker comments). */
  onCreated?(task: Task): void;
}

/** A change refused, in one line that says what to do: 400 a bad value, 409 a move the task's life cycle refuses. */
export class TaskError extends Error {
  constructor(
    message: string,
    readonly status: 400 | 409 = 400,
  ) {
    super(message);
  }
}

/**
 * Tasks, as the prompts, verbs and tools see them: a session's first prompt starts one, `/sled task` starts
 * another, intake (MCP, tracker) creates one, and worth and type are set on the task the session works on.
 */
export class TaskService {
  constructor(private readonly d: TaskServiceDeps) {}

  /** The store, for reads (lists, lookups by prefix). */
  get store(): TaskStore {
    return this.d.store;
  }

  /** An ordinary prompt typed in a session: its first starts the session's task; later ones count as turns. */
  onPrompt(sessionId: string, prompt: string): Task {
    const current = this.d.store.forSession(sessionId);
    const now = this.d.clock.now();
    if (current && current.state !== 'done') {
      this.d.store.countTurn(current.id, now);
      return this.d.store.get(current.id)!;
    }
    const claimed = this.d.claimPrompt?.(prompt) ?? null;
    const dispatched = claimed ? this.d.store.get(claimed) : null;
    if (dispatched && dispatched.state !== 'done') {
      this.d.store.attach(sessionId, dispatched.id, now);
      this.d.store.countTurn(dispatched.id, now);
      return this.d.store.get(dispatched.id)!;
    }
    const task = this.create({ title: titleFromPrompt(prompt), prompt, source: 'prompt', sessionId });
    this.d.store.countTurn(task.id, now);
    return this.d.store.get(task.id)!;
  }

  /** A new task, attached to the session when one is named. Intake with a known sourceRef gives the task it made before. */
  create(intake: TaskIntake): Task {
    const now = this.d.clock.now();
    const source = intake.source ?? 'mcp';
    if (intake.sourceRef) {
      const known = this.d.store.bySource(source, intake.sourceRef);
      if (known) {
        if (intake.sessionId) this.d.store.attach(intake.sessionId, known.id, now);
        return known;
      }
    }
    const cwd = intake.sessionId ? (this.d.sessions.get(intake.sessionId)?.cwd ?? null) : null;
    const repo = intake.repo ?? (cwd ? (findRepoRoot(cwd) ?? cwd) : null);
    if (intake.worth) this.checkWorth(intake.worth, repo ?? cwd);
    for (;;) {
      const id = wallIdFrom(randomBytes(WALL_ID_LENGTH));
      const created = this.d.store.create({
        id,
        title: intake.title,
        worth: intake.worth ?? null,
        type: intake.type ?? null,
        repo,
        source,
        sourceRef: intake.sourceRef ?? null,
        promptChars: (intake.prompt ?? intake.title).length,
        prompt: intake.prompt ?? null,
        at: now,
      });
      if (!created) continue; // an id drawn twice: draw again
      if (intake.sessionId) this.d.store.attach(intake.sessionId, id, now);
      const task = this.d.store.get(id)!;
      this.d.log.info(`task ${id} (${source}): ${task.title}`);
      try {
        this.d.onCreated?.(task);
      } catch (e) {
        this.d.log.error(`task ${id}: ${(e as Error).message}`);
      }
      return task;
    }
  }

  forSession(sessionId: string): Task | null {
    return this.d.store.forSession(sessionId);
  }

  /** Changes a task's fields; an unknown worth level is refused with the levels that exist. */
  update(id: string, u: TaskUpdate): Task {
    const task = this.d.store.get(id);
    if (!task) throw new TaskError(`no task ${id} — sleds tasks lists them`);
    if (u.worth) this.checkWorth(u.worth, task.repo);
    try {
      return this.d.store.update(id, u, this.d.clock.now())!;
    } catch (e) {
      if (e instanceof TransitionRefused) throw new TaskError(e.message, 409);
      throw e;
    }
  }

  private checkWorth(level: string, dir: string | null): void {
    const levels = this.d.worthLevels(dir);
    if (!levels.includes(level)) throw new TaskError(`'${level}' is not a worth level here — use ${[...levels, 'none'].join('|')}`);
  }

  /** `/sled task <title>`: the session starts a new task (the previous one stays as it was). */
  startFromVerb(sessionId: string, title: string | null): string {
    if (!title) {
      const t = this.forSession(sessionId);
      return t
        ? `sled: this session works on task ${t.id}: ${t.title} (worth ${t.worth ?? 'not set'}, type ${t.type ?? 'not set'}) — /sled task <title> starts another`
        : 'sled: no task yet — /sled task <title> starts one (your first prompt does too)';
    }
    const task = this.create({ title, source: 'verb', sessionId });
    return `sled: task ${task.id} started: ${task.title}. Set its worth with /sled worth high|normal|low and its kind with /sled type <label>.`;
  }

  /** `/sled type <label>` on the session's task. */
  setTypeFromVerb(sessionId: string, label: string | null): string {
    const task = this.forSession(sessionId);
    if (!task) return 'sled: no task yet in this session — type your request first, or /sled task <title>';
    if (!label) return `sled: task ${task.id} is of type ${task.type ?? 'not set'} — set it with /sled type <label> (e.g. bugfix, feature, refactor)`;
    const type = label.trim().toLowerCase();
    if (!/^[a-z0-9][a-z0-9._-]{0,59}$/.test(type)) return `sled: '${label}' is not a type label — one word of letters, digits, '-' or '_' (e.g. bugfix)`;
    this.d.store.update(task.id, { type }, this.d.clock.now());
    return `sled: task ${task.id} is now of type ${type}: its band comes from past ${type} tasks.`;
  }

  /**
   * `/sled worth <level>` sets the worth of the session's task (the session's own, before it has a task). Returns
   * the line to answer with.
   */
  setWorth(sessionId: string, level: string | null): string {
    const session = this.d.sessions.get(sessionId);
    const task = this.forSession(sessionId);
    const levels = this.d.worthLevels(task?.repo ?? session?.cwd ?? null);
    const choices = [...levels, 'none'].join('|');
    const current = this.worthOf(sessionId);
    if (level === null) return `sled: this task's worth is ${current ?? 'not set'} — set it with /sled worth ${choices}`;
    if (level !== 'none' && !levels.includes(level)) return `sled: '${level}' is not a worth level here — use /sled worth ${choices}`;
    const worth = level === 'none' ? null : level;
    if (task) this.d.store.update(task.id, { worth }, this.d.clock.now());
    else this.d.sessions.setWorth(sessionId, worth);
    return `sled: this task's worth is now ${level}. The policy reads it at the wall.`;
  }

  /** The worth the wall's policy reads for a session: its task's, or the session's own while it has no task. */
  worthOf(sessionId: string): string | null {
    const task = this.forSession(sessionId);
    return task ? task.worth : this.d.sessions.worth(sessionId);
  }
}
