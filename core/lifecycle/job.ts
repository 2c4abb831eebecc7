import { z } from 'zod';
import { illegal, targetOf, type LifeCycle, type StepResult } from './machine.js';

/**
 * A scheduled job (SPEC.md § job): scheduled → running → done | failed; scheduled → cancelled; scheduled → failed
 * (the precheck said "not yet" once too often); scheduled → scheduled (the precheck said "not yet": a later run).
 */
export const JOB_STATES = ['scheduled', 'running', 'done', 'failed', 'cancelled'] as const;
export type JobLifeState = (typeof JOB_STATES)[number];

export const JOB_EVENTS = ['claim', 'retry', 'give-up', 'finish', 'fail', 'cancel'] as const;
export type JobEventType = (typeof JOB_EVENTS)[number];

export const JobLifeEvent = z.discriminatedUnion('type', [
  z.object({ type: z.literal('retry'), runAt: z.number(), why: z.string() }),
  z.object({ type: z.enum(['claim', 'give-up', 'finish', 'fail', 'cancel']) }),
]);
export type JobLifeEvent = z.infer<typeof JobLifeEvent>;

export interface JobLife {
  state: JobLifeState;
  runAt: number;
  attempts: number;
}

/** A job claimed is handed to its kind's handler; one given a later time is looked at again then. */
export type JobEffect = { type: 'run' } | { type: 'wake-at'; at: number };

export const JOB_CYCLE: LifeCycle<JobLifeState, JobEventType> = {
  kind: 'job',
  states: JOB_STATES,
  events: JOB_EVENTS,
  terminal: ['done', 'failed', 'cancelled'],
  table: {
    scheduled: { claim: 'running', retry: 'scheduled', 'give-up': 'failed', cancel: 'cancelled' },
    running: { finish: 'done', fail: 'failed' },
    done: {},
    failed: {},
    cancelled: {},
  },
};

const HINTS: Partial<Record<JobLifeState, string>> = {
  running: 'it is running; only a scheduled job can be cancelled or run',
  done: 'it ran already',
  failed: 'it is over; schedule another',
  cancelled: 'it was cancelled',
};

export function stepJob(s: JobLife, e: JobLifeEvent, now: number): StepResult<JobLife, JobEffect> {
  const to = targetOf(JOB_CYCLE, s.state, e.type);
  if (to === null) return illegal('job', s.state, e.type, HINTS[s.state]);
  if (e.type === 'claim' && s.runAt > now) return { ok: false, error: `a job due at ${new Date(s.runAt).toISOString()} cannot be claimed before then` };
  if (e.type === 'retry') return { ok: true, state: { ...s, state: to, runAt: e.runAt, attempts: s.attempts + 1 }, effects: [{ type: 'wake-at', at: e.runAt }] };
  if (e.type === 'give-up') return { ok: true, state: { ...s, state: to, attempts: s.attempts + 1 }, effects: [] };
  return { ok: true, state: { ...s, state: to }, effects: e.type === 'claim' ? [{ type: 'run' }] : [] };
}
