import { z } from 'zod';
import { TASK_STATES, TaskIntake, TaskUpdate, type Task } from '../../core/task/task.js';
import type { ApiAnswer } from '../scheduler/api.js';
import type { TaskStore } from '../store/tasks.js';
import { TaskError, type TaskService } from './service.js';

/** The tasks routes, as functions of the request: server.ts only routes here. */

export interface TaskList {
  now: number;
  tasks: Task[];
}

function parseBody<T>(raw: string, schema: z.ZodType<T>, shape: string): { ok: true; value: T } | { ok: false; answer: ApiAnswer } {
  let json: unknown;
  try {
    json = JSON.parse(raw || '{}');
  } catch {
    return { ok: false, answer: { status: 400, body: { error: `the body is not JSON — send ${shape}` } } };
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) return { ok: false, answer: { status: 400, body: { error: parsed.error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; ') } } };
  return { ok: true, value: parsed.data };
}

export function listTasks(store: TaskStore, now: number, query: URLSearchParams): ApiAnswer {
  const state = query.get('state');
  if (state !== null && !(TASK_STATES as readonly string[]).includes(state)) return { status: 400, body: { error: `state is one of ${TASK_STATES.join(', ')}` } };
  const tasks = store.list({ limit: Number(query.get('limit')) || 50, state: (state as Task['state'] | null) ?? undefined });
  return { status: 200, body: { now, tasks } satisfies TaskList };
}

/** One task, its sessions and the band it was given; `more` adds what other parts know of it (its receipt). */
export function showTask(store: TaskStore, idOrPrefix: string, more?: (task: Task) => Record<string, unknown>): ApiAnswer {
  const task = store.find(idOrPrefix);
  if (task === 'ambiguous') return { status: 409, body: { error: `'${idOrPrefix}' matches more than one task — type more of its id` } };
  if (!task) return { status: 404, body: { error: `no task ${idOrPrefix} — sleds tasks lists them` } };
  return { status: 200, body: { task, sessions: store.sessionsOf(task.id), band: store.band(task.id), ...more?.(task) } };
}

export function createTask(service: TaskService, raw: string): ApiAnswer {
  const body = parseBody(raw, TaskIntake, '{title, prompt?, worth?, type?, repo?, source?, sourceRef?, sessionId?}');
  if (!body.ok) return body.answer;
  try {
    return { status: 201, body: { task: service.create(body.value) } };
  } catch (e) {
    if (e instanceof TaskError) return { status: 400, body: { error: e.message } };
    throw e;
  }
}

export function updateTask(service: TaskService, store: TaskStore, idOrPrefix: string, raw: string): ApiAnswer {
  const found = store.find(idOrPrefix);
  if (found === 'ambiguous') return { status: 409, body: { error: `'${idOrPrefix}' matches more than one task — type more of its id` } };
  if (!found) return { status: 404, body: { error: `no task ${idOrPrefix} — sleds tasks lists them` } };
  const body = parseBody(raw, TaskUpdate, '{title?, worth?, type?, state?}');
  if (!body.ok) return body.answer;
  try {
    return { status: 200, body: { task: service.update(found.id, body.value) } };
  } catch (e) {
    if (e instanceof TaskError) return { status: 400, body: { error: e.message } };
    throw e;
  }
}
