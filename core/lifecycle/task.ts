import { z } from 'zod';
import { TASK_STATES, type TaskState } from '../task/task.js';
import { illegal, targetOf, type LifeCycle, type StepResult } from './machine.js';

/**
 * A task (SPEC.md § task): open (being worked on) ⇄ parked (waiting for the answer to a question), and either ends
 * done (its receipt written). A done task stays done: its receipt is judged against the band it had.
 */
export const TASK_LIFE_STATES = TASK_STATES;
export type TaskLifeState = TaskState;

export const TASK_EVENTS = ['park', 'resume', 'finish'] as const;
export type TaskEventType = (typeof TASK_EVENTS)[number];

export const TaskLifeEvent = z.object({ type: z.enum(TASK_EVENTS) });
export type TaskLifeEvent = z.infer<typeof TaskLifeEvent>;

export interface TaskLife {
  state: TaskLifeState;
  endedAt: number | null;
}

export const TASK_CYCLE: LifeCycle<TaskLifeState, TaskEventType> = {
  kind: 'task',
  states: TASK_LIFE_STATES,
  events: TASK_EVENTS,
  terminal: ['done'],
  table: {
    open: { park: 'parked', finish: 'done' },
    parked: { resume: 'open', finish: 'done' },
    done: {},
  },
};

/** The event that moves a task to the state a client asked for (`POST /v1/tasks/<id> {state}`). */
export function taskEventFor(target: TaskLifeState): TaskEventType {
  return target === 'parked' ? 'park' : target === 'done' ? 'finish' : 'resume';
}

const HINTS: Record<TaskLifeState, string> = {
  open: 'it is being worked on already',
  parked: 'it waits on a question: answer it with /sled answer <id> A|B',
  done: 'its receipt is written; start another with /sled task <title>',
};

export function stepTask(s: TaskLife, e: TaskLifeEvent, now: number): StepResult<TaskLife, never> {
  const to = targetOf(TASK_CYCLE, s.state, e.type);
  if (to === null) return illegal('task', s.state, e.type, HINTS[s.state]);
  return { ok: true, state: { state: to, endedAt: to === 'done' ? (s.endedAt ?? now) : null }, effects: [] };
}
