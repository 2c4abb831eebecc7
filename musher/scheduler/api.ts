import { NewJobRequest } from '../../protocol/requests.js';
import { parseWhen } from '../../core/when.js';
import { ResumeJob } from '../../harnesses/resume-plan.js';
import type { Clock } from '../clock.js';
import type { Job } from './job.js';
import type { Scheduler } from './scheduler.js';

/** The jobs routes, as functions of the request body: server.ts only routes here. */

export interface ApiAnswer {
  status: number;
  body: unknown;
}

/** The kinds that resume a session: their payload is a ResumeJob. */
export const RESUME_KINDS = ['hold', 'defer', 'resume'] as const;

export interface JobsList {
  now: number;
  jobs: Job[];
}

export function listJobs(scheduler: Scheduler, clock: Clock, limit = 50): ApiAnswer {
  return { status: 200, body: { now: clock.now(), jobs: scheduler.list(limit) } satisfies JobsList };
}

export function cancelJob(scheduler: Scheduler, id: string): ApiAnswer {
  const r = scheduler.cancel(id, 'cancelled by the user');
  if (r.ok) return { status: 200, body: { ok: true, job: r.job } };
  return { status: scheduler.get(id) ? 409 : 404, body: { error: r.error } };
}

export function createJob(scheduler: Scheduler, clock: Clock, raw: string, timeZone: string): ApiAnswer {
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    return { status: 400, body: { error: 'the body is not JSON' } };
  }
  const parsed = NewJobRequest.safeParse(json);
  if (!parsed.success) return { status: 400, body: { error: parsed.error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; ') } };
  const b = parsed.data;
  let runAt = b.runAt;
  if (runAt === undefined) {
    if (b.when === undefined) return { status: 400, body: { error: 'say when: runAt (epoch ms) or when (e.g. "+2h", "9am")' } };
    const w = parseWhen(b.when, clock.now(), timeZone);
    if (!w.ok) return { status: 400, body: { error: w.error } };
    runAt = w.atMs;
  }
  let payload: Record<string, unknown> = b.payload;
  if ((RESUME_KINDS as readonly string[]).includes(b.kind)) {
    const p = ResumeJob.safeParse(b.payload);
    if (!p.success) return { status: 400, body: { error: `payload: ${p.error.issues.map((i) => `${i.path.join('.')} ${i.message}`).join('; ')}` } };
    payload = p.data;
  }
  try {
    const job = scheduler.schedule({ kind: b.kind, runAt, wallId: b.wallId ?? null, sessionId: b.sessionId ?? (payload.sessionId as string | undefined) ?? null, payload });
    return { status: 201, body: { job } };
  } catch (e) {
    return { status: 400, body: { error: (e as Error).message } };
  }
}
