import type { Db } from './db.js';
import type { Choice, Question, QuestionState } from '../../core/question/question.js';

export interface NewQuestion {
  id: string;
  taskId: string;
  sessionId: string | null;
  question: string;
  options: [string, string];
  at: number;
}

/** Parked questions. The only writer of `questions`. */
export class QuestionStore {
  constructor(private readonly db: Db) {}

  /** Records a question; false when the id is taken (the caller draws another). */
  create(q: NewQuestion): boolean {
    try {
      this.db
        .prepare(
          `INSERT INTO questions (id, task_id, session_id, question, option_a, option_b, state, asked_at)
           VALUES (?, ?, ?, ?, ?, ?, 'open', ?)`,
        )
        .run(q.id, q.taskId, q.sessionId, q.question, q.options[0], q.options[1], q.at);
      return true;
    } catch (e) {
      if ((e as { code?: string }).code === 'SQLITE_CONSTRAINT_PRIMARYKEY') return false;
      throw e;
    }
  }

  get(id: string): Question | null {
    const r = this.db.prepare(`SELECT * FROM questions WHERE id = ?`).get(id) as Record<string, unknown> | undefined;
    return r ? toQuestion(r) : null;
  }

  /** A question by its id or an unambiguous prefix of it (ids are typed by hand). */
  find(idOrPrefix: string): Question | null | 'ambiguous' {
    const exact = this.get(idOrPrefix);
    if (exact) return exact;
    if (idOrPrefix.length < 4) return null;
    const rows = this.db.prepare(`SELECT * FROM questions WHERE id LIKE ? ESCAPE '\\' LIMIT 2`).all(`${idOrPrefix.replace(/[%_\\]/g, '\\$&')}%`) as Array<Record<string, unknown>>;
    if (rows.length > 1) return 'ambiguous';
    return rows[0] ? toQuestion(rows[0]) : null;
  }

  /** A task's questions, oldest first. */
  forTask(taskId: string): Question[] {
    return (this.db.prepare(`SELECT * FROM questions WHERE task_id = ? ORDER BY asked_at, id`).all(taskId) as Array<Record<string, unknown>>).map(toQuestion);
  }

  list(opts: { state?: QuestionState; limit?: number } = {}): Question[] {
    const rows = opts.state
      ? this.db.prepare(`SELECT * FROM questions WHERE state = ? ORDER BY asked_at DESC, id LIMIT ?`).all(opts.state, opts.limit ?? 50)
      : this.db.prepare(`SELECT * FROM questions ORDER BY asked_at DESC, id LIMIT ?`).all(opts.limit ?? 50);
    return (rows as Array<Record<string, unknown>>).map(toQuestion);
  }

  /** Records the answer of an open question; false when it was answered already. */
  answer(id: string, choice: Choice, by: string, at: number): boolean {
    return this.db.prepare(`UPDATE questions SET state = 'answered', choice = ?, answered_by = ?, answered_at = ? WHERE id = ? AND state = 'open'`).run(choice, by, at, id).changes === 1;
  }

  /** The answer went back into a session's context. */
  markDelivered(id: string, at: number): void {
    this.db.prepare(`UPDATE questions SET delivered_at = COALESCE(delivered_at, ?) WHERE id = ?`).run(at, id);
  }

  /** Answered questions of a task whose answer no session has been given yet. */
  undelivered(taskId: string): Question[] {
    return (this.db.prepare(`SELECT * FROM questions WHERE task_id = ? AND state = 'answered' AND delivered_at IS NULL ORDER BY answered_at, id`).all(taskId) as Array<Record<string, unknown>>).map(toQuestion);
  }
}

function toQuestion(r: Record<string, unknown>): Question {
  return {
    id: r.id as string,
    taskId: r.task_id as string,
    sessionId: (r.session_id as string | null) ?? null,
    question: r.question as string,
    options: [r.option_a as string, r.option_b as string],
    state: r.state as QuestionState,
    choice: (r.choice as Choice | null) ?? null,
    answeredBy: (r.answered_by as string | null) ?? null,
    askedAt: r.asked_at as number,
    answeredAt: (r.answered_at as number | null) ?? null,
    deliveredAt: (r.delivered_at as number | null) ?? null,
  };
}
