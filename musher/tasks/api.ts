import type { Band } from '../../core/estimate/band.js';
import { TASK_STATES, TaskIntake, TaskUpdate, type Task } from '../../core/task/task.js';
import type { ApiAnswer } from '../scheduler/api.js';
import { parseBody } from '../api/parse-body.js';
import type { TaskStore } from '../store/tasks.js';
import { TaskError, type TaskService } from './service.js';

/** The tasks routes, as functions of the request: server.ts only routes here. */

export interface TaskList {
  now: number;
  tasks: Task[];
}

export function listTasks(store: TaskStore, now: number, query: URLSearchParams): ApiAnswer {
  const state = query.get('state');
  if (state !== null && !(TASK_STATES as readonly string[]).includes(state)) return { status: 400, body: { error: `state is one of ${TASK_STATES.join(', ')}` } };
  const tasks = store.list({ limit: Number(query.get('limit')) || 50, state: (state as Task['state'] | null) ?? undefined });
  return { status: 200, body: { now, tasks } satisfies TaskList };
}

/**
 * One task, its sessions and the band it was given (`bandOf`: the estimator's, which prices a task not priced yet;
 * default as stored); `more` adds what other parts know of it (its receipt).
 */
export function showTask(
  store: TaskStore,
  idOrPrefix: string,
  more?: (task: Task) => Record<string, unknown>,
  bandOf: (taskId: string) => Band | null = (id) => store.band(id),
): ApiAnswer {
  const found = store.lookup(idOrPrefix);
  if (!('task' in found)) return { status: found.status, body: { error: found.error } };
  const task = found.task;
  return { status: 200, body: { task, sessions: store.sessionsOf(task.id), band: bandOf(task.id), ...more?.(task) } };
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
  const lookup = store.lookup(idOrPrefix);
  if (!('task' in lookup)) return { status: lookup.status, body: { error: lookup.error } };
  const found = lookup.task;
  const body = parseBody(raw, TaskUpdate, '{title?, worth?, type?, state?}');
  if (!body.ok) return body.answer;
  try {
    return { status: 200, body: { task: service.update(found.id, body.value) } };
  } catch (e) {
    if (e instanceof TaskError) return { status: e.status, body: { error: e.message } };
    throw e;
  }
}
