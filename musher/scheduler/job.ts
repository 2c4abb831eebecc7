/**
 * A job: something musher does at a time (resume a held session, run a deferred one at the reset, …). This file is
 * the shape the API and `sleds jobs` share; musher/store/jobs.ts keeps them.
 *
 * States: scheduled → running → done | failed, or scheduled → cancelled, or scheduled → failed (gave up at the
 * precheck). Every move is one conditional UPDATE, so a job runs at most once, also across a musher restart
 * (core/lifecycle/job.ts, SPEC.md § job).
 */
import type { JobLifeState } from '../../core/lifecycle/job.js';

export type JobState = JobLifeState;
/** 'hold' (exit 2 moved), 'defer' (exit 6), 'resume' (now); open to more. */
export type JobKind = string;

export interface JobResult {
  ok: boolean;
  /** One line for `sleds jobs` and the next prompt: what happened. */
  summary: string;
  /** Anything else worth keeping (the resume outcome: result text, log file, exit code). Never secrets. */
  detail?: Record<string, unknown>;
}

export interface Job {
  id: string;
  kind: JobKind;
  wallId: string | null;
  sessionId: string | null;
  runAt: number;
  state: JobState;
  /** What to do (for resumes, harnesses/resume-plan.ts ResumeJob). Never secrets. */
  payload: Record<string, unknown>;
  result: JobResult | null;
  /** What finds a running job again after a restart (a headless run's pid and files). */
  handle: Record<string, unknown> | null;
  /** How many times the precheck said "not yet". */
  attempts: number;
  /** Why the precheck last said "not yet". */
  lastCheck: string | null;
  createdAt: number;
  updatedAt: number;
  startedAt: number | null;
  finishedAt: number | null;
  /** When the result was shown to the user (at a prompt); null until then. */
  reportedAt: number | null;
}

export interface NewJob {
  kind: JobKind;
  wallId?: string | null;
  sessionId?: string | null;
  runAt: number;
  payload: Record<string, unknown>;
}
