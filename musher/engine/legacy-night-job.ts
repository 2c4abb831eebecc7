import { z } from 'zod';
import type { RouteBand } from '../../core/routes/band.js';
import type { Task } from '../../core/task/task.js';
import type { Job } from '../scheduler/job.js';
import type { SessionRow } from '../store/sessions.js';
import type { WallRow } from '../store/wall-book.js';
import type { NightJobRequest } from './night-jobs.js';

/**
 * A scheduler job of the old overnight kind (exit 3 and the picker's Queue put them there before overnight jobs were
 * route nodes) read as an overnight job's request, so one still in a user's store runs when it comes due instead of
 * saying "not installed". A wall's job resumes its session (it is exit 3's); a picker's starts fresh from its prompt.
 */

/** What the two sources wrote in the payload (tolerant: the fields are read, nothing else is required). */
const LegacyPayload = z.looseObject({
  taskId: z.string().optional(),
  harness: z.string().nullable().optional(),
  model: z.string().nullable().optional(),
  cwd: z.string().nullable().optional(),
  prompt: z.string().optional(),
  from: z.string().optional(),
});

export interface LegacyLookups {
  session(id: string): SessionRow | null;
  task(id: string): Task | null;
  taskOfSession(sessionId: string): Task | null;
  promptOf(taskId: string): string | null;
  /** The task's kept band at standard prices; null: none. */
  band(taskId: string): RouteBand | null;
  wall(id: string): WallRow | null;
}

export function legacyNightJob(job: Job, l: LegacyLookups): { ok: true; request: NightJobRequest } | { ok: false; why: string } {
  const parsed = LegacyPayload.safeParse(job.payload);
  if (!parsed.success) return { ok: false, why: 'its payload is not one sleds wrote: it cannot become an overnight job — queue the task again (/sled overnight)' };
  const p = parsed.data;
  const session = job.sessionId ? l.session(job.sessionId) : null;
  const task = p.taskId ? l.task(p.taskId) : job.sessionId ? l.taskOfSession(job.sessionId) : null;
  const atWall = job.wallId !== null && job.sessionId !== null;
  const cwd = p.cwd ?? task?.repo ?? session?.cwd ?? null;
  const brief = p.prompt ?? (task ? l.promptOf(task.id) : null) ?? task?.title ?? null;
  if (!brief) return { ok: false, why: 'it names no task or prompt: there is nothing to run — queue the task again (/sled overnight)' };
  const wall = job.wallId ? l.wall(job.wallId) : null;
  return {
    ok: true,
    request: {
      cwd,
      title: task?.title ?? brief.split('\n')[0]!.slice(0, 80),
      brief,
      harness: p.harness ?? session?.harness ?? wall?.harness ?? null,
      model: p.model ?? session?.model ?? null,
      band: task ? l.band(task.id) : null,
      capMicros: null,
      resume: atWall ? { sessionId: job.sessionId!, transcript: session?.transcriptPath ?? null, workDir: session?.cwd ?? cwd } : null,
      from: `scheduler job ${job.id} (${atWall ? 'exit 3 at a wall' : (p.from ?? 'queued')})`,
      raise: '/sled overnight cap',
      wallId: job.wallId,
    },
  };
}
