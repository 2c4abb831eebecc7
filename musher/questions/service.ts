import { randomBytes } from 'node:crypto';
import {
  ANSWER_USAGE,
  answerContext,
  answeredLine,
  parkedText,
  parseChoice,
  type Choice,
  type ParkRequest,
  type Question,
} from '../../core/question/question.js';
import type { Task } from '../../core/task/task.js';
import type { HookAnswer } from '../../core/wire.js';
import { wallIdFrom, WALL_ID_LENGTH } from '../../core/wall/wall-id.js';
import type { Clock } from '../clock.js';
import { blockWith } from '../hook-answers.js';
import type { Log } from '../log.js';
import type { QuestionStore } from '../store/questions.js';
import type { TaskService } from '../tasks/service.js';
import { carryOnWithContext } from './hook-answer.js';

export interface QuestionServiceDeps {
  store: QuestionStore;
  tasks: TaskService;
  clock: Clock;
  log: Log;
}

/** A request refused: the HTTP status it maps to and one line that says what to do. */
export class QuestionError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Parked questions: `park` puts a task on hold behind a question with two answers; `answer` (typed, or the MCP
 * tool) records the choice, opens the task again and hands the answer back to the session that works on it.
 */
export class QuestionService {
  constructor(private readonly d: QuestionServiceDeps) {}

  get store(): QuestionStore {
    return this.d.store;
  }

  private task(idOrPrefix: string): Task {
    const found = this.d.tasks.store.lookup(idOrPrefix);
    if (!('task' in found)) throw new QuestionError(found.status, found.error);
    return found.task;
  }

  /** Parks the task behind the question. One open question per task: the person answers one thing at a time. */
  park(taskIdOrPrefix: string, req: ParkRequest): { question: Question; task: Task; text: string } {
    const task = this.task(taskIdOrPrefix);
    if (task.state === 'done') throw new QuestionError(409, `task ${task.id} is done — park a question on an open task (intake starts one)`);
    const waiting = this.d.store.forTask(task.id).find((q) => q.state === 'open');
    if (waiting) throw new QuestionError(409, `task ${task.id} already waits on question ${waiting.id} — it must be answered first (/sled answer ${waiting.id} A|B)`);
    const now = this.d.clock.now();
    for (;;) {
      const id = wallIdFrom(randomBytes(WALL_ID_LENGTH));
      if (!this.d.store.create({ id, taskId: task.id, sessionId: req.sessionId ?? null, question: req.question, options: req.options, at: now })) continue;
      const parked = this.d.tasks.update(task.id, { state: 'parked' });
      const question = this.d.store.get(id)!;
      this.d.log.info(`task ${task.id} parked on question ${id}`);
      return { question, task: parked, text: parkedText(question, parked.title) };
    }
  }

  /** Records the answer; the task is open again once no question of it waits. */
  answer(idOrPrefix: string, choice: Choice, by: string): { question: Question; task: Task; text: string } {
    const found = this.d.store.find(idOrPrefix);
    if (found === 'ambiguous') throw new QuestionError(409, `'${idOrPrefix}' matches more than one question — type more of its id`);
    if (!found) throw new QuestionError(404, `no question ${idOrPrefix} — the id is in the parked question's text`);
    if (found.state === 'answered') throw new QuestionError(409, `question ${found.id} was answered ${found.choice} already — park a new one to ask again`);
    const now = this.d.clock.now();
    if (!this.d.store.answer(found.id, choice, by, now)) throw new QuestionError(409, `question ${found.id} was answered meanwhile — nothing changed`);
    const stillWaiting = this.d.store.forTask(found.taskId).some((q) => q.state === 'open');
    let task = this.d.tasks.store.get(found.taskId)!;
    if (!stillWaiting && task.state === 'parked') task = this.d.tasks.update(task.id, { state: 'open' });
    const question = this.d.store.get(found.id)!;
    this.d.log.info(`question ${question.id} answered ${choice} (${by}); task ${task.id} ${task.state}`);
    return { question, task, text: answeredLine(question) };
  }

  /**
   * `/sled answer <id> A|B` typed in a session. When that session works on the question's task, the prompt goes
   * through with the answer as context, so the agent carries on at once; otherwise the answer is recorded, the
   * prompt is answered in place, and the asking session gets the answer with its next prompt.
   */
  answerFromVerb(sessionId: string, id: string | null, choiceText: string | null, harness: string): HookAnswer {
    if (!id || !choiceText) return blockWith(ANSWER_USAGE, harness);
    const choice = parseChoice(choiceText);
    if (!choice) return blockWith(`sled: '${choiceText}' is not an answer — /sled answer ${id} A or /sled answer ${id} B`, harness);
    let answered: { question: Question };
    try {
      answered = this.answer(id, choice, 'verb');
    } catch (e) {
      if (e instanceof QuestionError) return blockWith(`sled: ${e.message}`, harness);
      throw e;
    }
    const q = answered.question;
    if (this.d.tasks.forSession(sessionId)?.id === q.taskId) {
      this.d.store.markDelivered(q.id, this.d.clock.now());
      return carryOnWithContext(answerContext(q), `${answeredLine(q)} The session carries on with it.`, harness);
    }
    return blockWith(`${answeredLine(q)} The session that works on it gets the answer with its next prompt.`, harness);
  }

  /** Answers given elsewhere (the MCP tool, another session) that the session's task has not seen yet; marks them given. */
  contextFor(sessionId: string): string | null {
    const task = this.d.tasks.forSession(sessionId);
    if (!task) return null;
    const pending = this.d.store.undelivered(task.id);
    if (pending.length === 0) return null;
    const now = this.d.clock.now();
    for (const q of pending) this.d.store.markDelivered(q.id, now);
    return pending.map(answerContext).join('\n');
  }
}
