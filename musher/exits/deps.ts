import type { Clock } from '../clock.js';
import type { Log } from '../log.js';
import type { Binaries } from '../resume/resume-job.js';
import type { ResumeRunner } from '../resume/runner.js';
import type { Scheduler } from '../scheduler/scheduler.js';
import type { HandoffService } from '../handoff/service.js';
import type { NightJobAnswer } from '../engine/night-jobs.js';
import type { WallRow } from '../store/wall-book.js';

/** Where a live harness process of a session runs in tmux: enough to restart it in place. */
export interface LivePane {
  pane: string;
  socket: string | null;
  /** The process's own CLAUDE_CONFIG_DIR, carried into the restarted pane. */
  claudeConfigDirEnv: string | null;
}

/** The machinery the exits stand on: the gateway, resuming a session, and the scheduler. */
export interface ExitDeps {
  clock: Clock;
  log: Log;
  timeZone: string;
  seat: string;
  gateway: {
    /** A local token for one resumed session, and the base URL the harness should use. */
    mint(req: { seat: string; project: string | null; sessionId: string; wallId: string; ttlMs: number }): Promise<{ token: string; baseUrl: string; openaiBaseUrl: string }>;
  } | null;
  scheduler: Pick<Scheduler, 'schedule' | 'cancelForWall'>;
  /** Exit 3's overnight jobs: the wall's session made a job that resumes it; null when this musher makes none. */
  nightJobs: {
    /** The wall's session as a job, with its own cap (`/sled 3 cap $30`) or the policy's (null). */
    atWall(wall: WallRow, capMicros: number | null): Promise<NightJobAnswer>;
    /** Cancels the jobs queued at the wall that have not started (but `keep`): the ids cancelled. */
    cancelForWall(wallId: string, reason: string, keep?: string): string[];
  } | null;
  /** Sealed hand-offs to a teammate; null when this musher cannot send them. */
  handoff: Pick<HandoffService, 'send'> | null;
  resume: {
    livePane(sessionId: string): LivePane | null;
    binaries(): Binaries;
    runner: Pick<ResumeRunner, 'run' | 'paneLauncher'>;
  };
  sessionCwd(sessionId: string): string | null;
  /** The session's transcript (Claude) or rollout (Codex). */
  sessionTranscript(sessionId: string): string | null;
}
