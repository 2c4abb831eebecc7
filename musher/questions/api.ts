import { AnswerRequest, ParkRequest, QUESTION_STATES, type QuestionState } from '../../core/question/question.js';
import type { ApiAnswer } from '../scheduler/api.js';
import { parseBody } from '../api/parse-body.js';
import type { TaskService } from '../tasks/service.js';
import { QuestionError, type QuestionService } from './service.js';

/** The parked-question routes, as functions of the request: server.ts only routes here. */

function refused(e: unknown): ApiAnswer {
  if (e instanceof QuestionError) return { status: e.status, body: { error: e.message } };
  throw e;
}

/** POST /v1/tasks/<id>/park {question, options: [A, B], sessionId?} → 201 {question, task, text}. */
export function parkQuestion(service: QuestionService, taskIdOrPrefix: string, raw: string): ApiAnswer {
  const body = parseBody(raw, ParkRequest, '{question, options: [A, B], sessionId?}');
  if (!body.ok) return body.answer;
  try {
    return { status: 201, body: service.park(taskIdOrPrefix, body.value) };
  } catch (e) {
    return refused(e);
  }
}

/** POST /v1/questions/<id>/answer {choice: A|B, by?} → 200 {question, task, text}. */
export function answerQuestion(service: QuestionService, idOrPrefix: string, raw: string): ApiAnswer {
  const body = parseBody(raw, AnswerRequest, '{choice: "A" | "B"}');
  if (!body.ok) return body.answer;
  try {
    return { status: 200, body: service.answer(idOrPrefix, body.value.choice, body.value.by ?? 'api') };
  } catch (e) {
    return refused(e);
  }
}

/** GET /v1/questions[?state=open|answered][&task=<id>] → {questions}. */
export function listQuestions(service: QuestionService, query: URLSearchParams): ApiAnswer {
  const state = query.get('state');
  if (state !== null && !(QUESTION_STATES as readonly string[]).includes(state)) return { status: 400, body: { error: `state is one of ${QUESTION_STATES.join(', ')}` } };
  const task = query.get('task');
  const questions = task
    ? service.store.forTask(task).filter((q) => state === null || q.state === state)
    : service.store.list({ state: (state as QuestionState | null) ?? undefined, limit: Number(query.get('limit')) || 50 });
  return { status: 200, body: { questions } };
}

/** GET /v1/questions/<id> → {question}. */
export function showQuestion(service: QuestionService, idOrPrefix: string): ApiAnswer {
  const q = service.store.find(idOrPrefix);
  if (q === 'ambiguous') return { status: 409, body: { error: `'${idOrPrefix}' matches more than one question — type more of its id` } };
  if (!q) return { status: 404, body: { error: `no question ${idOrPrefix}` } };
  return { status: 200, body: { question: q } };
}

/** GET /v1/sessions/<id>/task → {task: Task | null, questions: its open ones}: what a tool called from that session works on. */
export function sessionTask(tasks: TaskService, service: QuestionService, sessionId: string): ApiAnswer {
  const task = tasks.forSession(sessionId);
  return { status: 200, body: { task, questions: task ? service.store.forTask(task.id).filter((q) => q.state === 'open') : [] } };
}
