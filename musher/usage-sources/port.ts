/**
 * One port for every source of usage musher reads (shared/ARCHITECTURE.md, "Every source of usage is an adapter with the
 * same life cycle"): the Claude transcript follower, the Codex rollout follower, the statusline feed, Claude's
 * usage endpoint and the gateway's metering of the platform key. musher holds them in one list (sources.ts) and
 * asks each the same questions: status's ingest progress is their sum, stopping musher stops them all, and the
 * lines doctor and status show come from `describe`.
 */
export interface SourceProgress {
  /** Still reading what was there before musher started (a first start's history). */
  backfilling: boolean;
  /** Bytes known and not read yet (0 for a source that is pushed to, or polls). */
  pendingBytes: number;
}

/** What a kick may say: the file a hook or a statusline named (followers read it now); none: "look again". */
export interface KickHint {
  path?: string;
}

export interface UsageSource {
  /** Stable and unique in the list: `claude-transcripts`, `codex-rollouts`, `statusline`, `usage-endpoint`, `gateway`. */
  readonly id: string;
  /** Is there anything on this machine for it to read (a harness's folder, a login, a push channel)? Local checks only. */
  detect(): boolean;
  /** Begins reading (watching, polling, listening). Resolves once it is under way; the reading goes on after. Once. */
  start(): Promise<void>;
  /** Something may have changed: read it soon. Never throws; a hint it cannot use is ignored. */
  kick(hint?: KickHint): void;
  progress(): SourceProgress;
  /** Stops; resolves once what it had in hand is committed. Safe to call twice, and before start. */
  stop(): Promise<void>;
  /** One line for doctor and status: what it reads and how it stands. */
  describe(): string;
}

export const NO_PROGRESS: SourceProgress = Object.freeze({ backfilling: false, pendingBytes: 0 });
