import type { Account } from '../../core/account.js';
import type { BarStatus } from '../../core/status.js';
import type { EstimateService } from '../estimate/service.js';
import type { ResumeRunner } from '../resume/runner.js';
import type { Binaries } from '../resume/resume-job.js';
import type { RosterReader } from '../roster/reader.js';
import type { Scheduler } from '../scheduler/scheduler.js';
import type { SnapshotInput, TakenSnapshot } from '../snapshot/take.js';
import type { BarStore } from '../store/bars.js';
import type { SessionStore } from '../store/sessions.js';
import type { UsageStore } from '../store/usage.js';
import type { WallBook } from '../store/wall-book.js';
import type { TaskService } from '../tasks/service.js';
import type { ExitDeps } from '../exits/deps.js';

/**
 * What the wall's wiring takes from musher: its stores and the few services the exits stand on. A port, so the
 * wiring never imports musher/app.ts (which builds it): no import circle.
 */
export interface WallHost {
  readonly timeZone: string;
  readonly sessions: SessionStore;
  readonly usage: UsageStore;
  readonly bars: BarStore;
  readonly wallBook: WallBook;
  readonly scheduler: Scheduler;
  readonly resumeRunner: ResumeRunner;
  readonly roster: RosterReader;
  readonly tasks: TaskService;
  readonly estimates: EstimateService;
  /** Exit 3's overnight jobs (musher/engine/night-jobs.ts, bound to the wall's session and task). */
  readonly wallNightJobs: ExitDeps['nightJobs'];
  binaries(): Binaries;
  accountOfSession(sessionId: string | null): Account;
  barsNow(): { now: number; bars: BarStatus[] };
  takeSnapshot(input: SnapshotInput): Promise<TakenSnapshot | null>;
}
