import { builtInHarness } from '../../harnesses/registry.js';
import { randomBytes } from 'node:crypto';
import type { PriceTable } from '../../core/price-table.js';
import type { WallHost } from './wall-host.js';
import type { ResumeJobDeps } from '../resume/resume-job.js';
import type { Precheck } from '../scheduler/scheduler.js';
import type { Clock } from '../clock.js';
import { makeExits } from '../exits/index.js';
import { foregroundOnKey } from '../exits/on-key.js';
import type { ExitDeps, LivePane } from '../exits/deps.js';
import type { Log } from '../log.js';
import { findLiveSessions } from '../resume/find-pane.js';
import type { Job } from '../scheduler/job.js';
import type { PrecheckAnswer } from '../scheduler/scheduler.js';
import { WallKeeper } from './wall-keeper.js';
import type { WallRow } from '../store/wall-book.js';
import { seatHandle } from '../handoff/keys.js';
import type { HandoffService } from '../handoff/service.js';
import type { KeyPort, PolicyPort, SnapshotPort } from './ports.js';

/** What the daemon plugs into the wall: the policy, the platform key, and the gateway. */
export interface WallWiring {
  policy: PolicyPort;
  key: KeyPort;
  gateway: ExitDeps['gateway'];
  handoff: HandoffService | null;
}

/**
 * This seat's handle now (SLEDS_SEAT, else config.yml's handle:, else the OS user), as the roster and hand-offs spell
 * it; 'me' when none is a handle. Read on each use, never kept: `sleds keys init --handle` needs no restart.
 */
export function seatName(): string {
  return seatHandle() ?? 'me';
}

/** How long after a "not yet" the scheduler asks again whether the bar has dropped. */
const RECHECK_MS = 5 * 60_000;

/** The wall keeper, and the two hooks the scheduler's resumes take from the wall (musher keeps them). */
export interface WallParts {
  keeper: WallKeeper;
  /** A resumed session's environment: which wall it is the exit of. */
  resumeEnvFor: ResumeJobDeps['envFor'];
  /** Before a held or deferred session resumes: has its bar really dropped? */
  jobPrecheck: Precheck;
}

export function buildWallKeeper(m: WallHost, w: WallWiring, o: { clock: Clock; log: Log; prices: PriceTable; claudeConfigDir: string }): WallParts {
  const timeZone = m.timeZone;
  const exitDeps: ExitDeps = {
    clock: o.clock,
    log: o.log,
    timeZone,
    get seat() {
      return seatName();
    },
    gateway: w.gateway,
    handoff: w.handoff,
    nightJobs: m.wallNightJobs,
    scheduler: m.scheduler,
    resume: { livePane: (id) => livePane(m, o.claudeConfigDir, id), binaries: () => m.binaries(), runner: m.resumeRunner },
    sessionCwd: (id) => m.sessions.get(id)?.cwd ?? null,
    sessionTranscript: (id) => m.sessions.get(id)?.transcriptPath ?? null,
  };
  const keeper = new WallKeeper({
    clock: o.clock,
    log: o.log,
    timeZone,
    get seat() {
      return seatName();
    },
    prices: o.prices,
    sessions: m.sessions,
    usage: m.usage,
    book: m.wallBook,
    policy: w.policy,
    key: w.key,
    snapshot: snapshotPort(m),
    exits: makeExits(exitDeps),
    randomBytes: (n) => randomBytes(n),
    goCommand: w.gateway ? (wall) => foregroundOnKey(exitDeps, wall) : undefined,
    onResetMoved: (wallId, resetsAtMs) => moveJobsToReset(m, wallId, resetsAtMs),
    roster: m.roster,
    worthOf: (id) => m.tasks.worthOf(id),
    remainingOf: (id) => m.estimates.remainingFor(id),
    handoffReady: w.handoff ? () => w.handoff!.ready() : undefined,
    barBackUnderFull: (wall) => barBackUnderFull(m, wall),
  });
  return {
    keeper,
    // A resumed session's hooks say which wall they are the exit of, so its prompts are not blocked by it.
    resumeEnvFor: (job: Job): Record<string, string> => (job.wallId ? { SLEDS_WALL: job.wallId } : {}),
    jobPrecheck: (job: Job) => barDropped(m, o.clock, job),
  };
}

/** A hold or defer set for "the reset" follows the reset when it becomes known more exactly. */
function moveJobsToReset(m: WallHost, wallId: string, resetsAtMs: number): void {
  const wall = m.wallBook.get(wallId);
  if (!wall || wall.choiceArg) return; // a time the user gave stays
  for (const job of m.scheduler.cancelForWall(wallId, 'moved to the exact reset')) {
    m.scheduler.schedule({ kind: job.kind, wallId, sessionId: job.sessionId, runAt: resetsAtMs, payload: job.payload });
  }
}

/**
 * A live pane of the session: Claude Code's own record of its live processes (pid checked), with the tmux server's
 * socket from there or, failing that, from the session's hooks (which forward $TMUX).
 */
function livePane(m: WallHost, claudeConfigDir: string, sessionId: string): LivePane | null {
  const live = findLiveSessions(claudeConfigDir, sessionId).find((s) => s.pane !== null);
  if (!live) return null;
  const fromHooks = m.sessions.pane(sessionId);
  const socket = live.tmuxSocket ?? (fromHooks && fromHooks.pane === live.pane ? fromHooks.socket : null);
  return { pane: live.pane!, socket, claudeConfigDirEnv: live.claudeConfigDirEnv };
}

/**
 * The wall's bar has moved since the wall and now reads under 100%. Its value must have changed after the hit (a
 * figure held from before it, re-sent unchanged, is no news). A wall whose window no signal named is left to its reset.
 */
function barBackUnderFull(m: WallHost, wall: WallRow): boolean {
  if (wall.window === null) return false;
  const provider = builtInHarness(wall.harness).provider;
  // The wall's own account's bar: another account's reading under 100% says nothing of this one.
  const account = m.accountOfSession(wall.sessionId).key;
  const bar = m.bars.forAccount(provider, account).find((b) => b.window === wall.window);
  return bar !== undefined && bar.changedAt > wall.hitAtMs && bar.usedPct < 100;
}

/** Before a held or deferred session resumes: has its bar really dropped? The reset passing is enough. */
function barDropped(m: WallHost, clock: Clock, job: Job): PrecheckAnswer {
  if (!job.wallId) return { go: true };
  const wall = m.wallBook.get(job.wallId);
  if (!wall || wall.resetsAtMs === null) return { go: true };
  const now = clock.now();
  if (now >= wall.resetsAtMs) return { go: true };
  const account = m.accountOfSession(wall.sessionId).key;
  const bar = m.bars.all().find((b) => b.account === account && b.window === wall.window && b.observedAt > wall.hitAtMs);
  if (bar && bar.usedPct < 100) return { go: true };
  return { go: false, retryAtMs: Math.min(wall.resetsAtMs, now + RECHECK_MS), why: `the ${wall.window ?? 'plan'} bar is still full until its reset` };
}

/** The wall's snapshot: the session's transcript, git state and brief, with the bars as they stood. */
export function snapshotPort(m: WallHost): SnapshotPort {
  return {
    take: async (wall, s) => {
      if (!s.cwd) return { id: null, note: "the session's folder is not known" };
      const account = m.accountOfSession(wall.sessionId).key;
      const bars = m.barsNow().bars.filter((b) => b.account === account).map((b) => ({ provider: b.provider, window: b.window, usedPct: b.usedPct, resetsAtMs: b.resetsAt, observedAtMs: b.observedAt, source: b.source }));
      const taken = await m.takeSnapshot({
        sessionId: wall.sessionId,
        harness: wall.harness,
        harnessVersion: s.version,
        model: s.model,
        cwd: s.cwd,
        transcriptPath: s.transcriptPath,
        wallId: wall.wallId,
        bars,
        bindingWindow: wall.window,
      });
      return taken ? { id: taken.id, note: taken.row.note ?? null } : { id: null, note: 'the snapshot could not be stored (the musher log says why)' };
    },
  };
}
