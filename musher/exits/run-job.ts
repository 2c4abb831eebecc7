import type { WallBook } from '../store/wall-book.js';
import { CONTINUE_PROMPT, type ExitDeps, type ScheduledJob } from './deps.js';

export interface JobOutcome {
  ok: boolean;
  line: string;
}

/**
 * A wall's scheduled exit, at its time: a defer runs the session headless on the seat; a moved hold resumes it in
 * its pane (else headless). The result closes the wall and is shown at the session's next prompt.
 */
export async function runWallJob(d: ExitDeps, book: WallBook, job: ScheduledJob, finish: (wallId: string, line: string) => void): Promise<JobOutcome> {
  const wall = book.get(job.wallId);
  if (!wall) return { ok: false, line: `wall ${job.wallId} is gone` };
  if (job.kind === 'overnight') {
    const line = 'the overnight runner is not installed yet: the job stays queued in the record, nothing ran';
    finish(wall.wallId, line);
    return { ok: false, line };
  }
  const pane = job.kind === 'hold' ? d.resume.livePane(wall.sessionId) : null;
  const cmd = d.resume.plan({
    harness: wall.harness,
    sessionId: wall.sessionId,
    cwd: d.sessionCwd(wall.sessionId) ?? process.cwd(),
    model: null,
    prompt: CONTINUE_PROMPT,
    env: { SLEDS_WALL: wall.wallId },
    mode: pane ? 'tmux' : 'headless',
    tmux: pane,
  });
  const r = await d.resume.run(cmd, pane ? 'tmux' : 'headless', `wall ${wall.wallId}`);
  const what = job.kind === 'defer' ? 'deferred run' : 'held session';
  const line = r.ok ? `${what} resumed: ${r.line}` : `${what} failed: ${r.line}`;
  finish(wall.wallId, line);
  return { ok: r.ok, line };
}
