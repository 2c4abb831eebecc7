import { formatMegabytes } from '../../core/format.js';
import type { PriceTable } from '../../core/price-table.js';
import type { Clock } from '../clock.js';
import { ClaudeTranscriptSource } from '../ingest/claude-transcripts.js';
import { CODEX_HARNESS, CodexRolloutSource, type CodexSeatReading } from '../ingest/codex-rollouts.js';
import { FileFollower } from '../ingest/file-follower.js';
import type { Log } from '../log.js';
import type { Accounts } from '../quota/accounts.js';
import type { BarStore } from '../store/bars.js';
import type { CreditStore } from '../store/credits.js';
import type { Db } from '../store/db.js';
import type { HistoryStore } from '../store/histories.js';
import type { OffsetStore } from '../store/offsets.js';
import type { SessionStore } from '../store/sessions.js';
import type { UsageStore } from '../store/usage.js';
import type { WallStore } from '../store/walls.js';
import type { KickHint, SourceProgress, UsageSource } from './port.js';

/**
 * The two file followers as usage sources: Claude Code's transcripts and Codex's rollouts (the reading itself is in
 * musher/ingest/). They share one FileFollower, so one table of byte offsets keyed by path; a kick names the file a
 * hook or the statusline pointed at.
 */
export interface FollowerDeps {
  db: Db;
  offsets: OffsetStore;
  sessions: SessionStore;
  usage: UsageStore;
  walls: WallStore;
  bars: BarStore;
  credits: CreditStore;
  histories: HistoryStore;
  accounts: Accounts;
  prices: PriceTable;
  clock: Clock;
  log: Log;
  claudeConfigDir: string;
  /** Codex's rollouts: $CODEX_HOME/sessions. */
  codexSessionsDir: string;
  onBackfillProgress?: (done: number, total: number) => void;
}

/** A JSONL follower (what both ingest adapters are) seen through the port. */
interface Follower {
  detect(): boolean;
  start(): Promise<void>;
  stop(): Promise<void>;
  kick(path: string): void;
  progress(): SourceProgress;
  idle(): Promise<void>;
}

export class FollowerSource implements UsageSource {
  private stopped: Promise<void> | null = null;

  constructor(
    readonly id: string,
    /** "claude transcripts", for the describe line. */
    private readonly what: string,
    private readonly dir: string,
    private readonly follower: Follower,
  ) {}

  detect(): boolean {
    return this.follower.detect();
  }

  /** Started whatever detect says: a harness installed later is read from its first session. */
  start(): Promise<void> {
    return this.follower.start();
  }

  kick(hint?: KickHint): void {
    if (hint?.path) this.follower.kick(hint.path);
  }

  progress(): SourceProgress {
    return this.follower.progress();
  }

  stop(): Promise<void> {
    this.stopped ??= this.follower.stop();
    return this.stopped;
  }

  /** Resolves once every file known so far has been read (the first start's "history read"). */
  idle(): Promise<void> {
    return this.follower.idle();
  }

  describe(): string {
    if (!this.detect()) return `${this.what}: ${this.dir} does not exist (not on this machine)`;
    const p = this.progress();
    return p.backfilling ? `${this.what}: reading the history in ${this.dir} (${formatMegabytes(p.pendingBytes)} to go)` : `${this.what}: following ${this.dir}`;
  }
}

export interface Followers {
  claude: FollowerSource;
  codex: FollowerSource;
  /** Which follower reads a session file a hook named: Codex's owns its rollouts (under any CODEX_HOME). */
  kick(path: string, harness: string): void;
}

export function buildFollowers(deps: FollowerDeps): Followers {
  // One follower for both adapters: they share the byte offsets, keyed by path.
  const follower = new FileFollower(deps.db, deps.offsets, deps.clock, deps.log);
  const projectsDir = `${deps.claudeConfigDir}/projects`;
  const transcripts = new ClaudeTranscriptSource({
    projectsDir,
    follower,
    sessions: deps.sessions,
    usage: deps.usage,
    walls: deps.walls,
    histories: deps.histories,
    prices: deps.prices,
    clock: deps.clock,
    log: deps.log,
    onProgress: deps.onBackfillProgress,
  });
  const credits = codexCreditsRecorder(deps.credits);
  const rollouts = new CodexRolloutSource({
    sessionsDir: deps.codexSessionsDir,
    follower,
    sessions: deps.sessions,
    usage: deps.usage,
    walls: deps.walls,
    bars: deps.bars,
    accountOf: (path) => deps.accounts.forRollout(path),
    histories: deps.histories,
    prices: deps.prices,
    clock: deps.clock,
    log: deps.log,
    onSeat: (seat) => credits(seat),
  });
  return {
    claude: new FollowerSource('claude-transcripts', 'claude transcripts', projectsDir, transcripts),
    codex: new FollowerSource('codex-rollouts', 'codex rollouts', deps.codexSessionsDir, rollouts),
    kick: (path, harness) => {
      if (harness === CODEX_HARNESS || rollouts.owns(path)) rollouts.kick(path);
      else transcripts.kick(path);
    },
  };
}

/** Codex's credit balance, from a rollout's rate-limit snapshot, recorded when it changes. */
function codexCreditsRecorder(store: CreditStore): (seat: CodexSeatReading) => void {
  let last = '';
  return (seat) => {
    const c = seat.credits;
    if (!c) return;
    const key = JSON.stringify(c);
    if (key === last) return;
    last = key;
    // "12.34" is kept exactly: integer minor units and the digits after the point.
    const m = c.balance !== null ? /^(-?\d+)(?:\.(\d+))?$/.exec(c.balance.trim()) : null;
    const exponent = m?.[2]?.length ?? 0;
    store.record({
      provider: 'openai',
      observedAt: seat.observedAt,
      enabled: c.hasCredits,
      unlimited: c.unlimited,
      currency: null,
      exponent,
      usedMinor: null,
      limitMinor: null,
      balanceMinor: m ? Number(`${m[1]}${m[2] ?? ''}`) : null,
      utilizationPct: null,
      disabledReason: null,
      source: seat.source,
    });
  };
}
