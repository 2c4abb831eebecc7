import { DispatchRequest } from '../../core/picker/row.js';
import type { ApiAnswer } from '../scheduler/api.js';
import type { TaskStore } from '../store/tasks.js';
import type { Task } from '../../core/task/task.js';
import type { PickerService } from './service.js';

/** GET /v1/tasks/<id>/picker and POST /v1/tasks/<id>/dispatch, as functions of the request: server.ts only routes here. */

function findTask(store: TaskStore, idOrPrefix: string): { task: Task; answer?: undefined } | { task?: undefined; answer: ApiAnswer } {
  const found = store.lookup(idOrPrefix);
  return 'task' in found ? { task: found.task } : { answer: { status: found.status, body: { error: found.error } } };
}

export async function showPicker(picker: PickerService, store: TaskStore, idOrPrefix: string): Promise<ApiAnswer> {
  const found = findTask(store, idOrPrefix);
  if (!found.task) return found.answer!;
  return { status: 200, body: await picker.picker(found.task) };
}

export async function dispatchTask(picker: PickerService, store: TaskStore, idOrPrefix: string, raw: string): Promise<ApiAnswer> {
  const found = findTask(store, idOrPrefix);
  if (!found.task) return found.answer!;
  let json: unknown;
  try {
    json = JSON.parse(raw || '{}');
  } catch {
    return { status: 400, body: { error: 'the body is not JSON — send {row: <number>} or {verb: "Dispatch"|"Switch"|"Queue"|"Hand off"|"Offer"}' } };
  }
  const parsed = DispatchRequest.safeParse(json);
  if (!parsed.success) return { status: 400, body: { error: 'send {row: <number>} (the row of sleds pick) or {verb: "Dispatch"|"Switch"|"Queue"|"Hand off"|"Offer"}' } };
  return { status: 200, body: await picker.dispatch(found.task, parsed.data) };
}
