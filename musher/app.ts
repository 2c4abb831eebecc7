import { isHandoffError } from '../core/handoff/errors.js';
import { resumeArgv } from '../harnesses/resume-plan.js';
import { storedHarness } from '../harnesses/registry.js';
import { shellLine } from '../core/shell-quote.js';
import { startOfZonedDay } from '../core/zoned-time.js';
import { cliCommand } from './package-root.js';
import { HookPayload, type HookAnswer } from '../core/wire.js';
import { parseSledPrompt, sledUsage, SLED_HELP } from '../core/sled-command.js';
import { barStatus, liveBars, renderStatusCard, type BarStatus, type StatusSnapshot } from '../core/status.js';
import { parseLimitText } from '../harnesses/claude-code/limit-text.js';
import type { PriceTable } from '../core/price-table.js';
import type { SledsPaths } from '../core/paths.js';
import type { Clock } from './clock.js';
import { CARRY_ON, blockWith } from './hook-answers.js';
import type { Log } from './log.js';
import { openStore, type Db } from './store/db.js';
import { routeQuestionVerbs } from './engine/route-questions-api.js';
import { ladderSources } from './engine/ladder-context.js';
import type { QuestionCardsPort, RouteQuestionVerbs } from './engine/route-questions-api.js';
import { RouteStore, type RouteMode } from './engine/route-store.js';
import { HookEventStore } from './store/hook-events.js';
import { SessionStore } from './store/sessions.js';
import { UsageStore } from './store/usage.js';
import { BarStore } from './store/bars.js';
import { Accounts } from './quota/accounts.js';
import type { Account } from '../core/account.js';
import { dirname } from 'node:path';
import { homedir } from 'node:os';
import { WallStore } from './store/walls.js';
import { OffsetStore } from './store/offsets.js';
import { HistoryStore } from './store/histories.js';
import { CreditStore } from './store/credits.js';
import { PlatformKeyStore } from './store/platform-key.js';
import type { UsageReadings } from '../core/usage-endpoint.js';
import { buildFollowers, type FollowerSource } from './usage-sources/followers.js';
import { StatuslineFeed } from './usage-sources/statusline-feed.js';
import { recordUsageEndpoint, UsageEndpointSource } from './usage-sources/usage-endpoint.js';
import { UsageSources } from './usage-sources/sources.js';
import { Forecaster, type ForecastSnapshot } from './forecast/forecaster.js';
import { SpoolDrain, type SpooledEvent } from './ingest/spool-drain.js';
import { WallBook } from './store/wall-book.js';
import { HandoffStore } from './store/handoffs.js';
import { RosterReader } from './roster/reader.js';
import type { HandoffService, PickedUpSession } from './handoff/service.js';
import { handOffSession, type HandedOff } from './handoff/session-handoff.js';
import { openInTmuxWindow } from './handoff/open-in-tmux.js';
import { pickedUpAnswer } from '../core/handoff/answer.js';
import { harnessWords } from './handoff/harness-words.js';
import type { WallKeeper } from './walls/wall-keeper.js';
import { buildWallKeeper, seatName, type WallWiring } from './walls/wiring.js';
import { OVERNIGHT_KIND } from './exits/overnight.js';
import { nightDigest, type DigestSettings, type NightDigest } from './engine/night-digest.js';
import { nightResume } from './engine/night-resume.js';
import { DIGEST_KIND, digestPoster } from './notify/digest-post.js';
import type { SlackMessageBody, SlackPostResult } from './notify/slack.js';
import { isValidTimeZone } from '../core/zoned-time.js';
import { formatClock } from '../core/format.js';
import type { JobHandler } from './scheduler/scheduler.js';

/** How often the morning digests are planned again (a policy edited, a route loaded elsewhere). */
const DIGEST_PLAN_MS = 10 * 60_000;

import type { ExitDeps } from './exits/deps.js';
import { NightJobs, type NightJobAnswer, type NightJobRequest } from './engine/night-jobs.js';
import { nodeBand } from '../core/routes/band.js';
import { formatShortTime } from '../core/exits/words.js';
import { formatUsdShort } from '../core/format.js';
import { legacyNightJob } from './engine/legacy-night-job.js';
import { parseCapWords } from '../core/overnight/night-job.js';
import type { Job } from './scheduler/job.js';
import type { WallRow } from './store/wall-book.js';
import { SnapshotStore } from './store/snapshots.js';
import { LifecycleEvents } from './store/lifecycle-events.js';
import { TaskStore } from './store/tasks.js';
import { DispatchedPromptStore } from './store/dispatched-prompts.js';
import { TaskService } from './tasks/service.js';
import { QuestionStore } from './store/questions.js';
import { QuestionService } from './questions/service.js';
import { carryOnWithContext } from './questions/hook-answer.js';
import { ReceiptStore } from './store/receipts.js';
import { EstimateService } from './estimate/service.js';
import { ReceiptHistory } from './estimate/history.js';
import { ReceiptService } from './receipts/service.js';
import type { SeatKeyPair } from './handoff/keys.js';
import { randomBytes } from 'node:crypto';
import { wallIdFrom, WALL_ID_LENGTH } from '../core/wall/wall-id.js';
import { renderOutcomeForPrompt } from '../core/exits/outcome.js';
import { estimatesPort, PickerService } from './picker/service.js';
import { HarnessReadiness } from './picker/harness-ready.js';
import { takeSnapshot, type SnapshotInput, type TakenSnapshot } from './snapshot/take.js';
import { listSnapshots, showSnapshot, type ApiAnswer, type SnapshotListAnswer } from './snapshot/api.js';
import { JobStore } from './store/jobs.js';
import { Scheduler, type Precheck } from './scheduler/scheduler.js';
import type { Timers } from './timers.js';
import { RESUME_KINDS } from './scheduler/api.js';
import { ResumeRunner } from './resume/runner.js';
import { harnessBinary, resumeJobHandler, type Binaries, type ResumeJobDeps } from './resume/resume-job.js';
import { findBinaries } from './resume/binaries.js';
import type { UsageSource } from './usage-sources/port.js';

export interface MusherOptions {
  paths: SledsPaths;
  clock: Clock;
  log: Log;
  prices: PriceTable;
  claudeConfigDir: string;
  /** Codex's rollouts: $CODEX_HOME/sessions. */
  codexSessionsDir: string;
  /** For the accounts' labels (`~/.claude`); default the OS home. */
  homeDir?: string;
  version: string;
  /** The database and the stores over it, opened first by the composition root (musher/compose.ts). */
  base: MusherBase;
  /** The wall's ports (policy, key, gateway, hand-offs), built by the composition root from the stores. */
  wall: WallWiring;
  /** Sources the daemon reads besides the followers and the statusline (the usage endpoint, the gateway's metering). */
  extraSources?: readonly UsageSource[];
  onBackfillProgress?: (done: number, total: number) => void;
  /** The scheduler's timer (tests pass a fake one); default real timers. */
  schedulerTimer?: Timers;
  /** Where resumes find claude, codex and tmux; the daemon's come from config.yml (musher/resume/binaries.ts); default PATH, the usual places. */
  binaries?: () => Binaries;
  /** The user's time zone, for times typed as "9am" and the day's spend: the composed config's. */
  timeZone: string;
  /** The seat's Ed25519 key that signs receipts (the daemon's: from the secret store); none: receipts are unsigned. */
  signingKey?: () => Promise<SeatKeyPair | null>;
  /** How long a task waits after its last session ended before it is receipted (a resume in between keeps it open). */
  taskQuietMs?: number;
  /** Slack's chat.postMessage with the bot token, for the morning digest; none: the digest is not posted (one log line). */
  postToSlack?: (channel: string, message: SlackMessageBody) => Promise<SlackPostResult>;
}

/** What musher stands on, opened before any service: one database, its stores, whose accounts the bars are. */
export interface MusherBase {
  db: Db;
  hookEvents: HookEventStore;
  sessions: SessionStore;
  usage: UsageStore;
  bars: BarStore;
  accounts: Accounts;
  walls: WallStore;
  offsets: OffsetStore;
  histories: HistoryStore;
  credits: CreditStore;
  platformKey: PlatformKeyStore;
  snapshots: SnapshotStore;
  wallBook: WallBook;
  handoffs: HandoffStore;
  roster: RosterReader;
}

/** Opens the database at `dbFile` and its stores: the first thing the composition root builds. */
export function openBase(o: { dbFile: string; claudeConfigDir: string; codexSessionsDir: string; homeDir?: string; log: Log }): MusherBase {
  const db = openStore(o.dbFile);
  return {
    db,
    hookEvents: new HookEventStore(db),
    sessions: new SessionStore(db),
    usage: new UsageStore(db),
    bars: new BarStore(db),
    accounts: new Accounts({ claudeConfigDir: o.claudeConfigDir, codexHome: dirname(o.codexSessionsDir), homeDir: o.homeDir ?? homedir(), log: o.log }),
    walls: new WallStore(db),
    offsets: new OffsetStore(db),
    histories: new HistoryStore(db),
    credits: new CreditStore(db),
    platformKey: new PlatformKeyStore(db),
    snapshots: new SnapshotStore(db),
    wallBook: new WallBook(db),
    handoffs: new HandoffStore(db),
    roster: new RosterReader(o.log),
  };
}

export interface HookDelivery extends SpooledEvent {
  viaSpool: boolean;
}

/** The job that ends a task once its sessions have stayed ended for the quiet period. */
const TASK_END_KIND = 'task-end';
const TASK_QUIET_MS = 30 * 60_000;

export { CARRY_ON } from './hook-answers.js';
/** The hook events whose answer the harness acts on; the others are answered "carry on" before they are recorded. */
const ANSWERED_EVENTS = new Set(['UserPromptSubmit']);
const PROVIDER = 'anthropic';

/** musher's state and decisions, without the socket: the HTTP layer (server.ts) only routes to this. */
export class Musher {
  readonly db: Db;
  readonly hookEvents: HookEventStore;
  readonly sessions: SessionStore;
  readonly usage: UsageStore;
  readonly bars: BarStore;
  /** Whose bars a reading is: a session's account from its files; musher's own by default. */
  readonly accounts: Accounts;
  readonly walls: WallStore;
  readonly offsets: OffsetStore;
  readonly credits: CreditStore;
  readonly platformKey: PlatformKeyStore;
  readonly snapshots: SnapshotStore;
  /** Every source of usage, through one port (musher/usage-sources/): the followers, the statusline, and the daemon's usage endpoint and gateway. */
  readonly sources: UsageSources;
  readonly transcripts: FollowerSource;
  readonly codex: FollowerSource;
  /** The statusline's render and its bookkeeping. */
  readonly statuslineFeed: StatuslineFeed;
  /** Routes a session file a hook named to the follower that reads it. */
  private readonly kickFollower: (path: string, harness: string) => void;
  readonly forecaster: Forecaster;
  readonly spool: SpoolDrain;
  readonly wallBook: WallBook;
  readonly handoffs: HandoffStore;
  /** The sender's history each pickup installed (its bytes are not this seat's: no wall, not today's spend). */
  readonly histories: HistoryStore;
  readonly roster: RosterReader;
  readonly tasks: TaskService;
  /** Parked questions (the MCP park tool, /sled answer). */
  readonly questions: QuestionService;
  /** Receipts as stored (the estimator's history). */
  readonly receiptStore: ReceiptStore;
  /** Bands for prompts and tasks: `POST /v1/estimate`, `/sled estimate`, a new task's band. */
  readonly estimates: EstimateService;
  /** Receipts: `musher.receipts.finishTask(id, reason)`, `musher.receipts.onReceipt(fn)`. */
  readonly receipts: ReceiptService;
  /** The dispatcher's picker: a task's rows, and taking a row's verb. */
  readonly picker: PickerService;
  /** Sealed hand-offs (null when this musher sends and receives none). */
  readonly handoff: HandoffService | null;
  readonly wallKeeper: WallKeeper;
  readonly jobs: JobStore;
  readonly resumeRunner: ResumeRunner;
  readonly scheduler: Scheduler;
  /** Asked before a scheduled job runs (the lead's: has the bar really dropped?); null: always go. */
  private jobPrecheck: Precheck | null = null;
  /** The environment a resumed harness gets (the lead's: the gateway URL and a local token); null: none. */
  private resumeEnvFor: ResumeJobDeps['envFor'] | null = null;
  readonly startedAt: number;
  /** The user's time zone: "9am" in `/sled 2 9am` is read in it. */
  readonly timeZone: string;

  /** The untracked files that look like secrets a folder's policy lets a snapshot keep (`handoff.allow_untracked`). */
  private allowUntracked: (cwd: string) => readonly string[] = () => [];
  /** Routes and their nodes (issue 14): the engine's store, and the mode of a route whose file names none. */
  /** A repository's overnight window at a time (in progress, else the next) with its cap and concurrency; null: none. */
  readonly nightOf: (dir: string, now: number) => { startMs: number; endMs: number; capMicros: number; concurrency: number } | null;
  /** Every run's, job's and wall's moves, for the logs that show them (`sleds queue`). */
  readonly lifecycle: LifecycleEvents;
  /** A repository's morning digest settings and the zone its overnight window's times are told in. */
  readonly digestSettingsOf: (dir: string) => DigestSettings;
  /** The last night's digest of each repository with overnight jobs (`sleds digest`, the digest job). */
  readonly nightDigest: NightDigest;
  /** `sleds resume` / `/sled resume`: a delivered overnight job pulled into a checkout (issue 15 § 6). */
  readonly nightResume: ReturnType<typeof nightResume>;
  /** Plans each repository's next morning digest (a scheduler job) — at start, and after each digest. */
  readonly planDigests: (now: number) => void;
  private digestPlanner: NodeJS.Timeout | null = null;
  readonly routes: RouteStore;
  /** Overnight jobs (issue 15 § 1): every source's job made a one-node overnight route here. */
  readonly nightJobs: NightJobs;
  /** Exit 3's port onto them: the wall's session and task as a job. */
  readonly wallNightJobs: ExitDeps['nightJobs'];
  routeDefaultMode: (dir: string) => RouteMode = () => 'approve';
  /** Route nodes' parked questions (issue 14 § 10): parked by the node's agent, answered from the CLI or Slack. */
  readonly routeQuestions: RouteQuestionVerbs;
  /** Where a parked question is shown to people (Slack's two-button message); bound by compose, null: the CLI only. */
  private questionCards: QuestionCardsPort | null = null;

  constructor(private readonly opts: MusherOptions) {
    // The digest job's handler, made once the stores it reads are (below); the scheduler only calls it after start().
    let digestHandler: JobHandler = { run: async () => ({ ok: false, summary: 'musher was still starting' }) };
    const b = opts.base;
    this.db = b.db;
    this.hookEvents = b.hookEvents;
    this.sessions = b.sessions;
    this.usage = b.usage;
    this.bars = b.bars;
    this.accounts = b.accounts;
    this.adoptUnkeyedBars();
    this.walls = b.walls;
    this.offsets = b.offsets;
    this.histories = b.histories;
    this.credits = b.credits;
    this.platformKey = b.platformKey;
    this.snapshots = b.snapshots;
    this.handoff = opts.wall.handoff;
    this.startedAt = opts.clock.now();
    this.timeZone = opts.timeZone;
    const followers = buildFollowers({
      db: this.db,
      offsets: this.offsets,
      sessions: this.sessions,
      usage: this.usage,
      walls: this.walls,
      bars: this.bars,
      credits: this.credits,
      histories: this.histories,
      accounts: this.accounts,
      prices: opts.prices,
      clock: opts.clock,
      log: opts.log,
      claudeConfigDir: opts.claudeConfigDir,
      codexSessionsDir: opts.codexSessionsDir,
      onBackfillProgress: opts.onBackfillProgress,
    });
    this.transcripts = followers.claude;
    this.codex = followers.codex;
    this.kickFollower = followers.kick;
    this.sources = new UsageSources([followers.claude, followers.codex]);
    this.forecaster = new Forecaster(this.bars, this.usage, opts.clock, this.timeZone, () => [this.accounts.defaultClaude().key, this.accounts.defaultCodex().key]);
    this.spool = new SpoolDrain(opts.paths.spoolDir, (e) => this.handleHook({ ...e, viaSpool: true }), opts.log);
    this.jobs = new JobStore(this.db);
    this.resumeRunner = new ResumeRunner({
      log: opts.log,
      clock: opts.clock,
      logDir: `${opts.paths.stateDir}/resume`,
      // A restarted pane gets its environment (the gateway token) from a 0600 file read by `sleds exec-env`.
      execEnv: { command: [...cliCommand(), 'exec-env'], dir: `${opts.paths.runtimeDir}/env` },
    });
    const resume = resumeJobHandler({
      runner: this.resumeRunner,
      log: opts.log,
      claudeConfigDir: opts.claudeConfigDir,
      binaries: opts.binaries ?? (() => findBinaries()),
      envFor: (job, target) => this.resumeEnvFor?.(job, target) ?? {},
    });
    this.scheduler = new Scheduler({
      store: this.jobs,
      clock: opts.clock,
      log: opts.log,
      timer: opts.schedulerTimer,
      handlers: {
        ...Object.fromEntries(RESUME_KINDS.map((k) => [k, resume])),
        // A job exit 3 or the picker put on the scheduler before jobs were route nodes: made a job route when due.
        [OVERNIGHT_KIND]: { run: (job) => this.legacyOvernight(job) },
        [TASK_END_KIND]: { run: async (job) => this.receipts.finishIfStillEnded(String(job.payload.taskId)) },
        [DIGEST_KIND]: { run: (job, ctx) => digestHandler.run(job, ctx) },
      },
      precheck: (job) => this.jobPrecheck?.(job) ?? { go: true },
      onFinished: (job) => {
        if (job.wallId && job.result && job.state !== 'cancelled') this.wallKeeper.finish(job.wallId, job.result.summary);
      },
    });
    // The wall last: it stands on the stores, the scheduler and the resume runner above.
    this.wallBook = b.wallBook;
    this.handoffs = b.handoffs;
    this.roster = b.roster;
    const wiring = opts.wall;
    this.allowUntracked = (cwd) => wiring.policy.forDirectory(cwd).handoffAllowUntracked;
    this.routeDefaultMode = (dir) => wiring.policy.forDirectory(dir).engine.mode;
    this.nightOf = (dir, now) => {
      const view = wiring.policy.forDirectory(dir);
      const window = view.overnightWindow(now, this.timeZone);
      return window && view.overnightLimits ? { ...window, ...view.overnightLimits } : null;
    };
    this.tasks = new TaskService({
      store: new TaskStore(this.db),
      sessions: this.sessions,
      clock: opts.clock,
      log: opts.log,
      worthLevels: (dir) => wiring.policy.forDirectory(dir).worthLevels,
      onCreated: (task) => this.estimates.priceLater(task),
      claimPrompt: (prompt) => this.picker.claimDispatched(prompt),
    });
    this.receiptStore = new ReceiptStore(this.db);
    this.routes = new RouteStore(this.db, opts.clock);
    this.nightJobs = new NightJobs({ routes: this.routes, nightOf: this.nightOf, clock: opts.clock, randomBytes: (n) => randomBytes(n) });
    this.wallNightJobs = {
      atWall: (wall, capMicros) => this.sessionNightJob(wall.sessionId, { capMicros, wall }),
      cancelForWall: (wallId, reason, keep) => this.nightJobs.cancelForWall(wallId, reason, keep),
    };
    this.lifecycle = new LifecycleEvents(this.db);
    this.digestSettingsOf = (dir) => {
      const view = wiring.policy.forDirectory(dir);
      const zone = view.overnightZone ?? this.timeZone;
      return { zone: isValidTimeZone(zone) ? zone : 'UTC', digest: view.overnightDigest ?? null };
    };
    this.nightResume = nightResume({ routes: this.routes, events: this.lifecycle, formatTime: (ms) => formatClock(ms, this.timeZone) });
    this.nightDigest = nightDigest({
      routes: this.routes,
      events: this.lifecycle,
      spend: this.platformKey,
      nightOf: this.nightOf,
      settingsOf: this.digestSettingsOf,
      clock: opts.clock,
      formatTime: (ms) => formatClock(ms, this.timeZone),
    });
    const poster = digestPoster({
      digest: this.nightDigest,
      repos: () => [...new Set(this.routes.routes().filter((r) => this.routes.nodes(r.key).some((n) => n.overnight)).map((r) => r.repoRoot))],
      settingsOf: this.digestSettingsOf,
      windowAt: (dir, ms) => this.nightOf(dir, ms),
      jobs: this.scheduler,
      post: () => opts.postToSlack ?? null,
      log: opts.log,
    });
    digestHandler = poster.handler(opts.clock);
    this.planDigests = (now) => {
      try {
        poster.plan(now);
      } catch (e) {
        opts.log.warn(`digest: not planned: ${(e as Error).message}`);
      }
    };
    this.routeQuestions = routeQuestionVerbs({
      store: this.routes,
      announce: (q, route, node) => this.questionCards?.announce(q, route, node),
      answered: (q) => this.questionCards?.answered(q),
      overnightOf: (dir) => wiring.policy.forDirectory(dir).overnightLadder ?? null,
      contextOf: (route, node) => ladderSources(node, route),
      escalate: (q, route, node) => this.questionCards?.escalate?.(q, route, node),
      parked: (q, waitedMs) => this.questionCards?.parked?.(q, waitedMs),
      // No Slack bound (no bot token, or cards not started): an escalation would reach nobody.
      unreachable: (dir, onCall) => (this.questionCards ? (this.questionCards.unreachable?.(dir, onCall) ?? null) : 'Slack is not set up for question cards — sleds slack set-token'),
    });
    const history = new ReceiptHistory(this.receiptStore, opts.log);
    this.estimates = new EstimateService({
      history: (q) => history.of(q),
      tasks: this.tasks.store,
      sessions: this.sessions,
      usage: this.usage,
      prices: opts.prices,
      clock: opts.clock,
      get seat() {
        return seatName();
      },
      log: opts.log,
    });
    this.receipts = new ReceiptService({
      store: this.receiptStore,
      tasks: this.tasks.store,
      sessions: this.sessions,
      usage: this.usage,
      platformKey: this.platformKey,
      hookEvents: this.hookEvents,
      clock: opts.clock,
      log: opts.log,
      seatFor: (repo, signer) => this.rosterHandle(repo, signer) ?? seatName(),
      signingKey: opts.signingKey ?? (async () => null),
      newId: () => wallIdFrom(randomBytes(WALL_ID_LENGTH)),
      transaction: (fn) => this.db.transaction(fn)(),
      // A held, deferred or legacy job of the session, or an overnight job that will resume it: its task goes on.
      workPending: (sessionId) => this.jobs.inState('scheduled').some((j) => j.sessionId === sessionId) || this.routes.nightJobResumes(sessionId),
      bandOf: (taskId) => this.estimates.bandOf(taskId),
    });
    this.questions = new QuestionService({ store: new QuestionStore(this.db), tasks: this.tasks, clock: opts.clock, log: opts.log });
    const wall = buildWallKeeper(this, wiring, opts);
    this.wallKeeper = wall.keeper;
    this.resumeEnvFor = wall.resumeEnvFor;
    this.jobPrecheck = wall.jobPrecheck;
    const readiness = new HarnessReadiness({ clock: opts.clock, binaries: () => this.binaries() });
    this.picker = new PickerService({
      clock: opts.clock,
      log: opts.log,
      timeZone: this.timeZone,
      get seat() {
        return seatName();
      },
      tasks: this.tasks.store,
      sessions: this.sessions,
      dispatched: new DispatchedPromptStore(this.db),
      prices: opts.prices,
      policy: wiring.policy,
      estimate: estimatesPort(this.estimates, seatName()),
      // The picker prices the running session's seat: its own account's bars (musher's when none runs).
      forecast: (sessionId) => {
        const snap = this.forecaster.refresh();
        const running = this.accountOfSession(sessionId).key;
        const claude = running.startsWith('codex-') ? this.accounts.defaultClaude().key : running;
        const seat = new Set([claude, this.accounts.defaultCodex().key]);
        return { ...snap, walls: snap.walls.filter((w) => seat.has(w.account)) };
      },
      keyConfigured: (provider) => wiring.key.configured(provider),
      rosterAt: (dir) => this.roster.rosterAt(dir),
      handoffReady: async () => (wiring.handoff ? wiring.handoff.ready() : false),
      nightJobs: this.nightJobs,
      wallOf: (sessionId) => this.wallKeeper.current(sessionId),
      handOff: (wall, handle) => this.wallKeeper.take(wall, 'handoff', handle, 'user', null),
      harnessMissing: (harness) => readiness.why(harness),
    });
    this.statuslineFeed = new StatuslineFeed({
      clock: opts.clock,
      log: opts.log,
      timeZone: this.timeZone,
      accounts: this.accounts,
      bars: this.bars,
      walls: this.walls,
      sessions: this.sessions,
      usage: this.usage,
      forecaster: this.forecaster,
      wall: this.wallKeeper,
      kickTranscript: (path, harness) => this.kickTranscript(path, harness),
    });
    this.sources.add(this.statuslineFeed);
    for (const source of opts.extraSources ?? []) this.sources.add(source);
    this.walls.onRecorded((signal) => {
      this.wallKeeper.onSignal(signal).catch((e: Error) => opts.log.error(`wall for ${signal.sessionId}: ${e.message}`));
    });
  }

  /** The roster's handle of the seat whose key signs (its Ed25519 key listed in the repository's roster). */
  /** Shows route nodes' parked questions in Slack from now on (compose binds it when Slack is set up). */
  bindQuestionCards(cards: QuestionCardsPort): void {
    this.questionCards = cards;
  }

  private rosterHandle(repo: string | null, signer: string | null): string | null {
    if (!repo || !signer) return null;
    return this.roster.rosterAt(repo)?.teammates.find((t) => t.keys?.ed25519 === signer)?.handle ?? null;
  }

  /** Starts the sources. Resolves when the transcript watcher has listed what exists (reading goes on after). */
  async start(): Promise<void> {
    const drained = await this.spool.start();
    if (drained > 0) this.opts.log.info(`drained ${drained} spooled hook event(s)`);
    await this.sources.start();
    // The morning digests: planned before the scheduler starts, so one due while musher was off is posted now; and
    // again every ten minutes, for a policy that gained a digest or a route loaded by another musher.
    this.planDigests(this.opts.clock.now());
    this.scheduler.start();
    this.digestPlanner = setInterval(() => this.planDigests(this.opts.clock.now()), DIGEST_PLAN_MS);
    this.digestPlanner.unref();
    // Hand-offs a stopped musher left half-sent or half-picked-up: sent again or undone, in the background.
    this.handoff?.recover().catch((e: Error) => this.opts.log.error(`hand-off recovery: ${e.message}`));
  }

  /**
   * Snapshots a session at a wall (musher/snapshot/take.ts). Never throws: what could not be kept is a note in the
   * snapshot, and a snapshot that could not be stored at all is logged and gives null — the wall goes on either way.
   */
  async takeSnapshot(input: SnapshotInput): Promise<TakenSnapshot | null> {
    try {
      return await takeSnapshot(input, { paths: this.opts.paths, store: this.snapshots, clock: this.opts.clock, log: this.opts.log, allowUntracked: this.allowUntracked });
    } catch (e) {
      this.opts.log.error((e as Error).message);
      return null;
    }
  }

  snapshotList(): SnapshotListAnswer {
    return listSnapshots(this.snapshots);
  }

  snapshotShow(idOrPrefix: string): Promise<ApiAnswer> {
    return showSnapshot(this.snapshots, this.opts.paths, idOrPrefix);
  }

  async close(): Promise<void> {
    if (this.digestPlanner) clearInterval(this.digestPlanner);
    this.scheduler.stop();
    this.spool.stop();
    await this.sources.stop();
    this.db.close();
  }

  /** `/sled pickup <id>` typed in a session: pick it up into a worktree of this repository and say how to go on. */
  private async pickup(id: string | null, sessionId: string, harness: string): Promise<string> {
    if (!id) return 'sled: which hand-off? e.g. /sled pickup jd7k2m9qa45p (the id is in the message you got)';
    // The harness the pickup was typed in decides how the work resumes: one sleds does not know is reported first.
    const typedIn = storedHarness(harness);
    if (!typedIn.ok) return `sled: ${typedIn.error} — run \`${shellLine(['sleds', 'pickup', id])}\` in a terminal instead`;
    const cwd = this.sessions.get(sessionId)?.cwd;
    if (!cwd) return `sled: this session's folder is not known yet — run \`${shellLine(['sleds', 'pickup', id])}\` in a checkout of the repository`;
    const r = await this.pickupHandoff(id, cwd);
    if ('error' in r) return `sled: ${r.error}`;
    const here = typedIn.id;
    // A second pickup opens no second window: two harnesses on one transcript would interleave it.
    return pickedUpAnswer(r.picked, here, r.picked.harness === here && !r.picked.again ? await this.resumeBeside(r.picked, sessionId) : null, harnessWords);
  }

  /** In tmux, the picked-up session resumes in a new window beside the session the pickup was typed in; its name, or null. */
  private async resumeBeside(picked: PickedUpSession, typedIn: string): Promise<string | null> {
    const pane = this.sessions.pane(typedIn);
    const bins = this.binaries();
    const harness = harnessBinary(bins, picked.harness);
    if (!pane || !bins.tmux || !harness) return null;
    let argv: string[];
    try {
      argv = resumeArgv({ harness: picked.harness, bin: harness, sessionId: picked.sessionId, headless: false, prompt: null });
    } catch (e) {
      this.opts.log.warn(`pickup ${picked.id}: ${(e as Error).message}`);
      return null;
    }
    const opened = await openInTmuxWindow(bins.tmux, pane, picked.dir, argv, `sled-${picked.id}`);
    if (!opened.ok) this.opts.log.warn(`pickup ${picked.id}: tmux could not open a window: ${opened.why}`);
    return opened.ok ? opened.window : null;
  }

  /** Hands a session to a teammate now: at its wall as exit 5, else from a snapshot taken now. */
  handOffSession(sessionId: string, to: string | null): Promise<HandedOff> {
    return handOffSession(
      {
        handoff: this.handoff,
        session: (id) => this.sessions.get(id),
        wallOf: (id) => this.wallKeeper.current(id),
        takeAtWall: async (wall, handle) => {
          const taken = await this.wallKeeper.take(wall, 'handoff', handle, 'user', null);
          if (!taken.ok) return taken;
          // The exit's outcome in the prompt's words, without the card's "5 Hand off to Dana." (who chose it).
          const settled = taken.settled;
          const id = taken.outcome.exit === 'handoff' ? taken.outcome.handoffId : undefined;
          return { ok: true, line: `sled: ${renderOutcomeForPrompt(taken.outcome)}`, after: taken.after, ...(settled ? { settled: () => `sled: ${renderOutcomeForPrompt(settled())}` } : {}), said: () => renderOutcomeForPrompt(settled?.() ?? taken.outcome), outcome: () => settled?.() ?? taken.outcome, ...(id ? { id } : {}) };
        },
        snapshot: async (s) => {
          const harness = storedHarness(s.harness);
          if (!harness.ok) return { id: null, note: harness.error };
          const account = this.accountOfSession(s.sessionId).key;
          const bars = this.barsNow().bars.filter((b) => b.account === account).map((b) => ({ provider: b.provider, window: b.window, usedPct: b.usedPct, resetsAtMs: b.resetsAt, observedAtMs: b.observedAt, source: b.source }));
          const taken = await this.takeSnapshot({
            sessionId: s.sessionId,
            harness: harness.id,
            harnessVersion: null,
            model: s.model,
            cwd: s.cwd!,
            transcriptPath: s.transcriptPath,
            wallId: null,
            bars,
            bindingWindow: null,
          });
          return taken ? { id: taken.id, note: taken.row.note ?? null } : { id: null, note: null };
        },
        ownerFor: (cwd) => this.roster.ownerFor(cwd, seatName()),
        log: this.opts.log,
      },
      sessionId,
      to,
    );
  }

  /** Picks a hand-off up into a worktree of the repository `cwd` is in; one line when it cannot. */
  async pickupHandoff(id: string, cwd: string): Promise<{ picked: PickedUpSession } | { error: string; kind?: string; handle?: string }> {
    if (!this.handoff) return { error: 'hand-offs are not set up on this machine' };
    try {
      return { picked: await this.handoff.pickup(id, cwd) };
    } catch (e) {
      this.opts.log.warn(`pickup ${id}: ${(e as Error).message}`);
      // A refusal's kind and the teammate it names, for a caller that can ask (the CLI on a terminal).
      if (isHandoffError(e)) return { error: e.message, kind: e.kind, ...(e.handle ? { handle: e.handle } : {}) };
      return { error: (e as Error).message };
    }
  }

  /** The harness and tmux binaries, looked up when needed (an upgrade is picked up). */
  binaries(): Binaries {
    return (this.opts.binaries ?? (() => findBinaries()))();
  }

  get clock(): Clock {
    return this.opts.clock;
  }

  answers(event: string): boolean {
    return ANSWERED_EVENTS.has(event);
  }

  /**
   * A hook event: recorded, and answered when the harness acts on the answer. `after` runs once the answer has
   * been sent (an exit that restarts the session's pane must not kill the hook that asked).
   */
  async handleHook(d: HookDelivery & { resumedFor?: string | null; tmux?: { socket: string; pane: string } | null }): Promise<{ answer: HookAnswer; after?: () => Promise<void> }> {
    return this.hookAnswer(d);
  }

  private async hookAnswer(d: HookDelivery & { resumedFor?: string | null; tmux?: { socket: string; pane: string } | null }): Promise<{ answer: HookAnswer; after?: () => Promise<void> }> {
    let json: unknown;
    try {
      json = JSON.parse(d.raw);
    } catch {
      this.opts.log.error(`hook ${d.event}: malformed JSON (${d.raw.length} bytes, starts ${JSON.stringify(d.raw.slice(0, 40))}) — ignored`);
      return { answer: CARRY_ON };
    }
    const parsed = HookPayload.safeParse(json);
    if (!parsed.success) {
      this.opts.log.error(`hook ${d.event}: ${parsed.error.issues.map((i) => `${i.path.join('.') || 'payload'} ${i.message}`).join('; ')} — ignored`);
      return { answer: CARRY_ON };
    }
    const p = parsed.data;
    const fresh = this.hookEvents.record({
      eventId: d.eventId,
      event: d.event,
      sessionId: p.session_id,
      receivedAt: d.receivedAt,
      viaSpool: d.viaSpool,
      payload: json,
    });
    if (!fresh) return { answer: CARRY_ON }; // delivered before: a spooled copy
    this.sessions.touch({
      sessionId: p.session_id,
      harness: d.harness,
      at: d.receivedAt,
      cwd: p.cwd ?? null,
      transcriptPath: p.transcript_path ?? null,
      model: d.event === 'SessionStart' ? (p.model ?? null) : null,
    });
    if (d.tmux) this.sessions.setPane(p.session_id, d.tmux.socket, d.tmux.pane);
    if (p.transcript_path) this.kickTranscript(p.transcript_path, d.harness);
    switch (d.event) {
      case 'UserPromptSubmit':
        return d.viaSpool ? { answer: CARRY_ON } : this.answerPrompt(p.prompt ?? '', p.session_id, d.harness, d.resumedFor ?? null);
      case 'StopFailure':
        if (p.error === 'rate_limit') this.recordStopFailureWall(d, p);
        return { answer: CARRY_ON };
      case 'SessionEnd':
        this.sessions.end(p.session_id, p.reason ?? 'other', d.receivedAt);
        this.scheduleTaskEnd(p.session_id);
        return { answer: CARRY_ON };
      default:
        return { answer: CARRY_ON };
    }
  }

  /** Reads a session file's new lines now, with the adapter that owns it (both share the offsets, keyed by path). */
  private kickTranscript(path: string, harness: string): void {
    this.kickFollower(path, harness);
  }

  private async answerPrompt(prompt: string, sessionId: string, harness: string, resumedFor: string | null): Promise<{ answer: HookAnswer; after?: () => Promise<void> }> {
    const command = parseSledPrompt(prompt);
    if (!command && !resumedFor) this.noteTaskPrompt(sessionId, prompt);
    const atWall = await this.wallKeeper.answerPrompt({ sessionId, harness, prompt, command, resumedFor });
    if (atWall) return atWall;
    switch (command?.verb) {
      case 'status':
        return { answer: blockWith(renderStatusCard(this.status(), sessionId, this.timeZone), harness) };
      case 'help':
        return { answer: blockWith(SLED_HELP, harness) };
      case 'unknown':
        return { answer: blockWith(sledUsage(command.word), harness) };
      case 'pickup':
        return { answer: blockWith(await this.pickup(command.id, sessionId, harness), harness) };
      case 'resume':
        return { answer: await this.resumeNightJob(command.job, sessionId, harness) };
      case 'handoff': {
        const r = await this.handOffSession(sessionId, command.to);
        return { answer: blockWith(r.line, harness), after: r.after };
      }
      case 'worth':
        return { answer: blockWith(this.tasks.setWorth(sessionId, command.level), harness) };
      case 'task':
        return { answer: blockWith(this.tasks.startFromVerb(sessionId, command.title), harness) };
      case 'type':
        return { answer: blockWith(this.tasks.setTypeFromVerb(sessionId, command.label), harness) };
      case 'answer':
        return { answer: this.questions.answerFromVerb(sessionId, command.id, command.choice, harness) };
      case 'estimate':
        return { answer: blockWith(this.estimates.answerVerb(sessionId), harness) };
      case 'done':
        return { answer: blockWith(await this.receipts.answerDone(sessionId), harness) };
      case 'overnight':
        return { answer: blockWith(await this.overnightVerb(sessionId, command.cap), harness) };
      default:
        return { answer: command ? CARRY_ON : this.answersForPrompt(sessionId, harness) };
    }
  }

  /**
   * `/sled resume [<job>]`: the delivered job's branch fetched into the session's checkout and what it did and decided
   * handed to the agent beside the prompt (the person sees a line); a job not delivered is refused with why.
   */
  private async resumeNightJob(job: string | null, sessionId: string, harness: string): Promise<HookAnswer> {
    const cwd = this.sessions.get(sessionId)?.cwd ?? null;
    if (!cwd) return blockWith('sled: this session has no working directory on record yet — run sleds resume in the repository instead', harness);
    const r = await this.nightResume.resume({ job: job ?? undefined, cwd });
    const body = r.body as { error?: string; job?: string; branch?: string; context?: string };
    if (r.status !== 200 || !body.context) return blockWith(`sled: ${body.error ?? 'the job could not be resumed'}`, harness);
    return carryOnWithContext(body.context, `sled: overnight job ${body.job} (branch ${body.branch}) and what it did and decided are in this session now`, harness);
  }

  /**
   * The session's task as an overnight job: its title and request, its band on the session's model, the session's
   * harness and folder. At a wall (exit 3) the job's node resumes the session from its transcript; else
   * (`/sled overnight`) it starts fresh from the task's request.
   */
  private async sessionNightJob(sessionId: string, o: { capMicros: number | null; wall: WallRow | null }): Promise<NightJobAnswer> {
    const task = this.tasks.forSession(sessionId);
    if (!task) return { ok: false, line: 'refused: no task yet in this session — type your request first, or /sled task <title>' };
    const session = this.sessions.get(sessionId);
    const kept = this.estimates.bandOf(task.id);
    const req: NightJobRequest = {
      cwd: task.repo ?? session?.cwd ?? null,
      title: task.title,
      brief: this.tasks.store.promptOf(task.id) ?? task.title,
      harness: session?.harness ?? o.wall?.harness ?? null,
      model: session?.model ?? this.estimates.taskModel(task.id),
      band: kept ? nodeBand({ band: kept, prior: null }) : null,
      capMicros: o.capMicros,
      resume: o.wall ? { sessionId, transcript: session?.transcriptPath ?? null, workDir: session?.cwd ?? task.repo } : null,
      from: o.wall ? `exit 3 at wall ${o.wall.wallId}` : `/sled overnight in session ${sessionId}`,
      raise: o.wall ? '/sled 3 cap' : '/sled overnight cap',
      wallId: o.wall?.wallId ?? null,
    };
    return this.nightJobs.queue(req);
  }

  /** `/sled overnight [cap $N]`: the session's task queued as an overnight job, answered without a model call. */
  private async overnightVerb(sessionId: string, cap: string | null): Promise<string> {
    const parsed = cap === null ? null : parseCapWords(cap);
    if (parsed && !parsed.ok) return `sled: ${parsed.error}`;
    const task = this.tasks.forSession(sessionId);
    const made = await this.sessionNightJob(sessionId, { capMicros: parsed ? parsed.capMicros : null, wall: null });
    if (!made.ok) return `sled: ${made.line}`;
    const span = `${formatShortTime(made.window.startMs, this.timeZone)}–${formatShortTime(made.window.endMs, this.timeZone)}`;
    const band = `${formatUsdShort(Math.round(made.band.lowUsd * 1e6))}–${formatUsdShort(Math.round(made.band.highUsd * 1e6)).slice(1)}`;
    return (
      `sled: queued task ${task?.id ?? ''} as overnight job ${made.job} for the window (${span}) on the batch tier at ½ price: ${band}, cap ${formatUsdShort(made.capMicros)}. ` +
      `It starts fresh from the task's request in its own worktree. 'sleds queue' shows it; 'sleds queue cancel ${made.job}' undoes it.`
    );
  }

  /** A scheduler job of the old overnight kind, due: made a job route now (or why not), its wall closed as it ran. */
  private async legacyOvernight(job: Job): Promise<{ ok: boolean; summary: string }> {
    const req = legacyNightJob(job, {
      session: (id) => this.sessions.get(id),
      task: (id) => this.tasks.store.get(id),
      taskOfSession: (id) => this.tasks.forSession(id),
      promptOf: (id) => this.tasks.store.promptOf(id),
      band: (taskId) => {
        const b = this.estimates.bandOf(taskId);
        return b ? nodeBand({ band: b, prior: null }) : null;
      },
      wall: (id) => this.wallBook.get(id),
    });
    if (!req.ok) return { ok: false, summary: req.why };
    const made = await this.nightJobs.queue(req.request);
    if (!made.ok) return { ok: false, summary: `its overnight job was not made: ${made.line}` };
    return { ok: true, summary: `became overnight job ${made.job} ('sleds queue' shows it; 'sleds engine' runs it in the window)` };
  }

  /** An ordinary prompt in a session whose parked question was answered elsewhere: the answer goes with it. */
  private answersForPrompt(sessionId: string, harness: string): HookAnswer {
    try {
      const context = this.questions.contextFor(sessionId);
      return context ? carryOnWithContext(context, null, harness) : CARRY_ON;
    } catch (e) {
      this.opts.log.error(`answers for ${sessionId}: ${(e as Error).message}`);
      return CARRY_ON;
    }
  }

  /**
   * Every session of the task has ended: its receipt is written after a quiet period, unless a session is resumed
   * by then (one job per task, moved by each later end).
   */
  private scheduleTaskEnd(sessionId: string): void {
    const taskId = this.receipts.endedTask(sessionId);
    if (!taskId) return;
    for (const j of this.jobs.inState('scheduled')) if (j.kind === TASK_END_KIND && j.payload.taskId === taskId) this.scheduler.cancel(j.id, 'moved: another session of the task ended');
    this.scheduler.schedule({ kind: TASK_END_KIND, runAt: this.opts.clock.now() + (this.opts.taskQuietMs ?? TASK_QUIET_MS), payload: { taskId } });
  }

  /** An ordinary prompt: the session's first starts its task, the others count as its turns. Never fails the hook. */
  private noteTaskPrompt(sessionId: string, prompt: string): void {
    try {
      this.tasks.onPrompt(sessionId, prompt);
    } catch (e) {
      this.opts.log.error(`task for ${sessionId}: ${(e as Error).message}`);
    }
  }

  private recordStopFailureWall(d: HookDelivery, p: HookPayload): void {
    const text = p.last_assistant_message ?? '';
    const limit = parseLimitText(text, d.receivedAt);
    this.walls.record({
      source: 'hook:StopFailure',
      dedupKey: `hook:${d.eventId}`,
      sessionId: p.session_id,
      timestampMs: d.receivedAt,
      window: limit.window,
      resetsAtMs: limit.resetsAtMs,
      message: text || 'rate_limit',
    });
    this.opts.log.warn(`wall: session ${p.session_id} hit ${limit.window ?? 'a usage limit'} (StopFailure)`);
  }

  /** Renders the statusline (musher/usage-sources/statusline-feed.ts): the line, and the bookkeeping to run once it is sent. */
  statusline(raw: string, color: boolean): { line: string; record: () => void } {
    return this.statuslineFeed.render(raw, color);
  }

  /** A good answer of Claude's usage endpoint: its bars (per-model weekly ones too) and the seat's credits. */
  recordUsageEndpoint(r: UsageReadings): void {
    recordUsageEndpoint({ db: this.db, bars: this.bars, credits: this.credits, account: () => this.accounts.defaultClaude() }, r);
  }

  /** The usage-endpoint source, when the daemon added one: doctor shows its poller's state. */
  get usagePoller(): UsageEndpointSource | null {
    const s = this.sources.get('usage-endpoint');
    return s instanceof UsageEndpointSource ? s : null;
  }

  /** Every bar's forecast, fresh: `sleds walls`. */
  wallForecasts(): ForecastSnapshot {
    return this.forecaster.refresh();
  }

  /** One line on the usage endpoint for doctor and status: polling, backing off, or why not. */
  usagePollerLine(): string {
    return this.usagePoller?.describe() ?? 'usage endpoint: not polled by this musher';
  }

  /** The account whose bars a session reads (musher's own when the session is not known or names no file). */
  accountOfSession(sessionId: string | null): Account {
    const row = sessionId ? this.sessions.get(sessionId) : null;
    if (!row) return this.accounts.defaultClaude();
    return this.accounts.forSession(row.harness, row.transcriptPath);
  }

  /** Every account's live bars, musher's own accounts' first (the card and `sleds bars` list them in this order). */
  private liveBarsOwnFirst(now: number): BarStatus[] {
    const own = new Set([this.accounts.defaultClaude().key, this.accounts.defaultCodex().key]);
    const rows = [...this.bars.all()].sort((a, b) => Number(!own.has(a.account)) - Number(!own.has(b.account)));
    return liveBars(rows.map((b) => barStatus(b, now)), now);
  }

  /** Bars kept before they had an account were read for musher's own ones. */
  private adoptUnkeyedBars(): void {
    const claude = this.accounts.defaultClaude();
    const codex = this.accounts.defaultCodex();
    this.bars.adoptUnkeyed(PROVIDER, claude.key, claude.label);
    this.bars.adoptUnkeyed('openai', codex.key, codex.label);
  }

  /** Every bar still in its window, with source and age. */
  barsNow(): { now: number; bars: BarStatus[] } {
    const now = this.opts.clock.now();
    return { now, bars: this.liveBarsOwnFirst(now) };
  }

  status(): StatusSnapshot {
    const now = this.opts.clock.now();
    const since = startOfZonedDay(now, this.timeZone);
    const byModel = this.usage.spendByModel(since, now + 86_400_000);
    const offsets = this.offsets.summary();
    const progress = this.sources.progress();
    return {
      now,
      musher: { pid: process.pid, version: this.opts.version, startedAt: this.startedAt },
      bars: this.liveBarsOwnFirst(now),
      today: {
        since,
        costMicros: byModel.reduce((a, m) => a + m.costMicros, 0),
        unpricedRecords: byModel.reduce((a, m) => a + m.unpricedRecords, 0),
        byModel,
      },
      sessions: this.sessions.recent(50).map((s) => {
        const spend = this.usage.sessionSpend(s.sessionId);
        return {
          sessionId: s.sessionId,
          harness: s.harness,
          cwd: s.cwd,
          model: s.model,
          firstSeenAt: s.firstSeenAt,
          lastSeenAt: s.lastSeenAt,
          endedAt: s.endedAt,
          costMicros: spend.costMicros,
          unpricedRecords: spend.unpricedRecords,
          usageRecords: spend.records,
          models: spend.models,
        };
      }),
      walls: this.walls.recent(20).map((w) => ({
        source: w.source,
        sessionId: w.sessionId,
        at: w.timestampMs,
        window: w.window,
        resetsAt: w.resetsAtMs,
        message: w.message,
      })),
      wallBook: this.wallBook.recent(20).map((w) => ({
        wallId: w.wallId,
        sessionId: w.sessionId,
        window: w.window,
        hitAt: w.hitAtMs,
        resetsAt: w.resetsAtMs,
        state: w.state,
        choice: w.choice,
        chosenBy: w.chosenBy,
        outcome: w.outcome,
        snapshotId: w.snapshotId,
      })),
      handoffs: this.handoffs.list(10).map((h) => ({ id: h.id, direction: h.direction, peer: h.peer, state: h.state, pickedUpBy: h.pickedUpBy, pickedUpAt: h.pickedUpAt, createdAt: h.createdAt })),
      ingest: { files: offsets.files, bytesRead: offsets.bytes, pendingBytes: progress.pendingBytes, backfilling: progress.backfilling },
      totals: (({ records, ...rest }) => ({ usageRecords: records, ...rest }))(this.usage.totals()),
      hookEvents: this.hookEvents.countsByEvent(),
      usageEndpoint: this.usagePollerLine(),
      credits: this.credits.latest(),
      platformKey: (() => {
        const bySeatModel = this.platformKey.spend(since, now + 86_400_000);
        return {
          todayMicros: bySeatModel.reduce((a, r) => a + r.costMicros, 0),
          unpricedRecords: bySeatModel.reduce((a, r) => a + r.unpricedRecords, 0),
          bySeatModel,
        };
      })(),
      nextWall: (() => {
        const snap = this.forecaster.refresh();
        const b = snap.binding;
        if (!b || b.kind !== 'wall') return null;
        const w = snap.walls.find((x) => x.provider === b.provider && x.window === b.window);
        return { name: w?.name ?? b.window, provider: b.provider, window: b.window, atMs: b.atMs, dollarsToWallMicros: w?.dollarsToWallMicros ?? null };
      })(),
    };
  }
}
