import { closeSync, existsSync, mkdirSync, openSync, readSync } from 'node:fs';
import { basename, dirname, resolve, sep } from 'node:path';
import { codexAccount, codexHomeOfRollout } from '../../core/account.js';
import {
  CODEX_PROVIDER,
  CODEX_ROLLOUT_SOURCE,
  CodexRolloutReader,
  UNKNOWN_CODEX_MODEL,
  isRolloutFileName,
  parseCodexRolloutLine,
  threadIdFromRolloutPath,
  type CodexCredits,
  type CodexLimits,
} from '../../harnesses/codex/rollout.js';
import { priceUsage } from '../../core/pricing.js';
import type { PriceTable } from '../../core/price-table.js';
import type { Clock } from '../clock.js';
import type { Log } from '../log.js';
import type { BarStore } from '../store/bars.js';
import type { HistoryStore } from '../store/histories.js';
import type { SessionStore } from '../store/sessions.js';
import { backlogStaging, type UsageEntry, type UsageStore } from '../store/usage.js';
import type { WallStore } from '../store/walls.js';
import { MAX_LINE_BYTES, type FileFollower, type Line } from './file-follower.js';
import { JsonlSource } from './jsonl-source.js';
import { sourceHarnessId } from '../source-harness.js';

/**
 * The Codex CLI rollout adapter: detect (`$CODEX_HOME/sessions`) → load (follow each `rollout-*.jsonl` for new
 * bytes) → parse (harnesses/codex/rollout) → record (usage priced, plan bars, seat state, sessions, walls). The bytes a
 * pickup installed are the sender's history: read for what they tell the reader (thread, model), their usage
 * recorded as the sender's seat's, and their bars, seat state and limits — the sender's plan — not recorded here.
 */
export interface CodexRolloutDeps {
  /** `$CODEX_HOME/sessions` (harnesses/codex/rollout `codexSessionsDir`). */
  sessionsDir: string;
  follower: FileFollower;
  sessions: SessionStore;
  usage: UsageStore;
  walls: WallStore;
  bars: BarStore;
  /** Whose bars a rollout's readings are (musher's Accounts); default: this source's own Codex home. */
  accountOf?: (rolloutPath: string) => { key: string; label: string };
  /** The bytes pickups installed: the sender's history, read as such. */
  histories: HistoryStore;
  prices: PriceTable;
  clock: Clock;
  log: Log;
  /** Called as backfill progresses (bytes read so far, bytes known in all). */
  onProgress?: (done: number, total: number) => void;
  /** Every snapshot's seat state (plan type, credits, limit reached), with its time and source. */
  onSeat?: (reading: CodexSeatReading) => void;
}

/** What one rate-limit snapshot says about the seat beyond its bars. */
export interface CodexSeatReading {
  provider: typeof CODEX_PROVIDER;
  source: typeof CODEX_ROLLOUT_SOURCE;
  /** The snapshot's own time (its rollout line's timestamp), epoch ms. */
  observedAt: number;
  sessionId: string;
  limitId: string;
  planType: string | null;
  credits: CodexCredits | null;
  limitReached: string | null;
}

export const CODEX_HARNESS = sourceHarnessId(CODEX_ROLLOUT_SOURCE);

/** Cheap test before JSON.parse: only these records can carry anything we record. */
function mayMatter(text: string): boolean {
  return (
    text.includes('"token_count"') ||
    text.includes('"turn_context"') ||
    text.includes('"session_meta"') ||
    text.includes('"codex_error_info"') ||
    text.includes('hit your usage limit')
  );
}

/** `<CODEX_HOME>/sessions/YYYY/MM/DD/rollout-….jsonl`. */
const CODEX_LAYOUT_RE = /[\\/]sessions[\\/]\d{4}[\\/]\d{2}[\\/]\d{2}[\\/]rollout-[^\\/]*\.jsonl$/i;

/** How deep a fork family is followed up to its root. */
const MAX_LINEAGE_DEPTH = 32;

interface Touch {
  first: number;
  at: number;
  cwd: string | null;
  model: string | null;
}

export class CodexRolloutSource {
  private readonly source: JsonlSource;
  private readonly root: string;
  /** Each followed file's reader, holding what its earlier lines said. */
  private readonly readers = new Map<string, CodexRolloutReader>();
  /** Thread id → its rollout, from the file names seen. */
  private readonly pathById = new Map<string, string>();
  /** Thread id → the thread it was forked from (null: none), from session_meta lines read. */
  private readonly parentById = new Map<string, string | null>();
  private readonly unpricedLogged = new Set<string>();
  private latestSeat: CodexSeatReading | null = null;
  /** Other CODEX_HOMEs hooks pointed at (one log line each). */
  private readonly foreignHomes = new Set<string>();

  constructor(private readonly deps: CodexRolloutDeps) {
    this.root = resolve(deps.sessionsDir);
    this.source = new JsonlSource({
      dir: deps.sessionsDir,
      follower: deps.follower,
      log: deps.log,
      what: 'rollout',
      accepts: (path) => this.owns(path),
      record: (path, lines) => this.record(path, lines),
      onFile: (path) => {
        const id = threadIdFromRolloutPath(path);
        if (id !== null) this.pathById.set(id, path);
      },
      // Oldest first (the names sort by date and local time): a fork's parent is read before the fork.
      orderBacklog: (paths) => [...paths].sort(),
      onProgress: deps.onProgress,
      staging: backlogStaging(deps.usage),
    });
  }

  /** Codex CLI is on this machine when its home (the sessions folder's parent) exists. */
  detect(): boolean {
    return existsSync(this.deps.sessionsDir) || existsSync(dirname(this.deps.sessionsDir));
  }

  /**
   * Is this a rollout this source reads? A `rollout-*.jsonl` under the sessions folder, or one laid out the way Codex
   * lays them out (`…/sessions/YYYY/MM/DD/rollout-…-<uuid>.jsonl`) under another CODEX_HOME: a Codex hook's
   * `transcript_path` when Codex runs with a CODEX_HOME musher was not started with. Route hook paths with it.
   */
  owns(path: string): boolean {
    if (!isRolloutFileName(basename(path))) return false;
    const full = resolve(path);
    return full.startsWith(this.root + sep) || (CODEX_LAYOUT_RE.test(full) && threadIdFromRolloutPath(full) !== null);
  }

  /** Starts watching. Resolves when what exists has been listed (reading goes on after, oldest file first). */
  start(): Promise<void> {
    // Codex makes the folder on its first session; make it early only where Codex is installed.
    if (!existsSync(this.deps.sessionsDir) && existsSync(dirname(this.deps.sessionsDir))) {
      mkdirSync(this.deps.sessionsDir, { recursive: true });
    }
    return this.source.start();
  }

  /** Stops watching and reading; resolves after the chunk in hand is committed (offsets make the rest resumable). */
  stop(): Promise<void> {
    return this.source.stop();
  }

  /** Reads a rollout's new lines soon (a Codex hook's `transcript_path`, or the watcher saw a change). */
  kick(path: string): void {
    if (this.owns(path) && !resolve(path).startsWith(this.root + sep)) {
      const home = resolve(path).replace(/[\\/]sessions[\\/]\d{4}[\\/].*$/, '');
      if (!this.foreignHomes.has(home)) {
        this.foreignHomes.add(home);
        this.deps.log.warn(`codex rollout under ${home}, not ${dirname(this.root)}: read when a hook names it, not watched (is CODEX_HOME set for musher?)`);
      }
    }
    this.source.kick(path);
  }

  progress(): { backfilling: boolean; pendingBytes: number } {
    return this.source.progress();
  }

  /** Resolves once every file known so far has been read. */
  idle(): Promise<void> {
    return this.source.idle();
  }

  /** The newest seat state seen (plan type, credits, limit reached), or null. */
  seat(): CodexSeatReading | null {
    return this.latestSeat;
  }

  /**
   * The reader of a file. The first time a file is read in this process from a stored offset (musher restarted), its
   * first line is read again for the thread and the fork, and the session's last model comes from the store: the
   * turn_contexts before the offset are not re-read.
   */
  private readerFor(path: string, firstOffset: number): CodexRolloutReader {
    const known = this.readers.get(path);
    if (known !== undefined) return known;
    const reader = new CodexRolloutReader(path);
    if (firstOffset > 0) {
      const head = readFirstLineSync(path);
      if (head !== null) {
        const parsed = reader.read(head);
        if (parsed.kind === 'session' && parsed.from === 'session_meta') this.learnLineage(reader, parsed);
      }
      const sessionId = reader.state.sessionId;
      const model = sessionId !== null ? (this.deps.sessions.get(sessionId)?.model ?? null) : null;
      reader.state = { ...reader.state, model };
    }
    this.readers.set(path, reader);
    return reader;
  }

  private record(path: string, lines: Line[]): void {
    const reader = this.readerFor(path, lines[0]?.offset ?? 0);
    const before = reader.state;
    try {
      this.recordLines(path, lines, reader);
    } catch (e) {
      // The chunk's transaction rolls back and the chunk is read again: so is what the reader learnt from it.
      reader.state = before;
      throw e;
    }
  }

  private recordLines(path: string, lines: Line[], reader: CodexRolloutReader): void {
    const touches = new Map<string, Touch>();
    const touch = (sessionId: string, at: number, cwd: string | null, model: string | null): void => {
      const t = touches.get(sessionId) ?? { first: at, at, cwd: null, model: null };
      t.first = Math.min(t.first, at);
      t.at = Math.max(t.at, at);
      t.cwd = cwd ?? t.cwd;
      t.model = model ?? t.model;
      touches.set(sessionId, t);
    };

    const history = this.deps.histories.of(path);
    const entries: UsageEntry[] = [];
    for (const line of lines) {
      if (!line.text.trimEnd().endsWith('}')) {
        this.deps.log.error(`${path}:${line.offset}: truncated or malformed record (${line.text.length} bytes) — skipped`);
        continue;
      }
      if (!mayMatter(line.text)) continue;
      const sendersSeat = history !== null && line.offset < history.bytes ? history.seat : null;
      const parsed = reader.read(line.text);
      // Live: this seat's own, as it happens (not a fork's copy of its parent, not a picked-up history).
      const live = !('replayed' in parsed && parsed.replayed) && sendersSeat === null;
      switch (parsed.kind) {
        case 'session':
          if (parsed.from === 'session_meta') this.learnLineage(reader, parsed);
          if (!parsed.replayed) touch(parsed.sessionId, parsed.timestampMs, sendersSeat === null ? parsed.cwd : null, parsed.model ?? null);
          break;
        case 'usage': {
          const { usage } = parsed;
          const cost = priceUsage(this.deps.prices, usage);
          entries.push({ usage, cost, seat: sendersSeat });
          if (!cost.priced && !this.unpricedLogged.has(usage.model)) {
            this.unpricedLogged.add(usage.model);
            this.deps.log.error(`${path}:${line.offset}: ${cost.reason} — recorded as unpriced, not $0 (add it under prices/effective/)`);
          }
          if (parsed.limitsProblem !== null) {
            this.deps.log.error(`${path}:${line.offset}: ${parsed.limitsProblem} — usage recorded, rate limits skipped`);
          }
          if (!parsed.replayed) {
            if (parsed.limits !== null && live) this.recordLimits(path, parsed.limits);
            touch(usage.sessionId, usage.timestampMs, sendersSeat === null ? usage.cwd : null, usage.model === UNKNOWN_CODEX_MODEL ? null : usage.model);
          }
          break;
        }
        case 'bars':
          if (live) this.recordLimits(path, parsed);
          break;
        case 'wall':
          if (live && this.deps.walls.record(parsed.wall)) {
            const w = parsed.wall;
            this.deps.log.warn(`wall: codex session ${w.sessionId} hit ${w.window ?? 'a usage limit'} (rollout)`);
          }
          break;
        case 'error':
          this.deps.log.error(`${parsed.message} (at byte ${line.offset})`);
          break;
        case 'ignored':
          break;
      }
    }
    this.deps.usage.recordMany(entries);

    const own = reader.state.sessionId;
    for (const [sessionId, t] of touches) {
      // The store keeps the earliest and latest times it is told: tell it both ends of the chunk.
      if (t.first < t.at) this.deps.sessions.touch({ sessionId, harness: CODEX_HARNESS, at: t.first });
      this.deps.sessions.touch({
        sessionId,
        harness: CODEX_HARNESS,
        at: t.at,
        cwd: t.cwd,
        transcriptPath: sessionId === own ? path : null,
        model: t.model,
      });
    }
  }

  private recordLimits(path: string, limits: CodexLimits): void {
    // The rollout's own Codex home is the account: a second CODEX_HOME's readings never mix with this one's.
    const account = this.deps.accountOf?.(path) ?? codexAccount(codexHomeOfRollout(path) ?? dirname(this.root), '');
    for (const bar of limits.bars) {
      this.deps.bars.record({
        provider: CODEX_PROVIDER,
        account: account.key,
        accountLabel: account.label,
        window: bar.window,
        usedPct: bar.usedPct,
        resetsAt: bar.resetsAtMs,
        observedAt: limits.observedAtMs,
        source: CODEX_ROLLOUT_SOURCE,
        sessionId: limits.sessionId,
      });
    }
    if (limits.credits === null && limits.planType === null && limits.limitReached === null) return;
    const reading: CodexSeatReading = {
      provider: CODEX_PROVIDER,
      source: CODEX_ROLLOUT_SOURCE,
      observedAt: limits.observedAtMs,
      sessionId: limits.sessionId,
      limitId: limits.limitId,
      planType: limits.planType,
      credits: limits.credits,
      limitReached: limits.limitReached,
    };
    if (this.latestSeat === null || reading.observedAt >= this.latestSeat.observedAt) this.latestSeat = reading;
    try {
      this.deps.onSeat?.(reading);
    } catch (e) {
      this.deps.log.error(`codex seat reading not recorded: ${(e as Error).message}`);
    }
  }

  /**
   * Records a thread's parent. A legacy fork (one that copies its parent's history) gets its usage keys scoped to
   * the fork family's root, so its copies get their originals' keys; a paginated fork copies nothing.
   */
  private learnLineage(reader: CodexRolloutReader, meta: { sessionId: string; forkedFrom?: string; forkOrdinal?: number }): void {
    this.parentById.set(meta.sessionId, meta.forkedFrom ?? null);
    if (meta.forkedFrom === undefined || meta.forkOrdinal !== undefined) return;
    reader.state = { ...reader.state, lineageId: this.rootOf(meta.forkedFrom) };
  }

  /** The oldest ancestor of a thread that can be found (its own rollout's session_meta names each parent). */
  private rootOf(id: string): string {
    let current = id;
    const seen = new Set([id]);
    for (let depth = 0; depth < MAX_LINEAGE_DEPTH; depth++) {
      const parent = this.parentOf(current);
      if (parent === null || seen.has(parent)) break;
      seen.add(parent);
      current = parent;
    }
    return current;
  }

  private parentOf(id: string): string | null {
    const known = this.parentById.get(id);
    if (known !== undefined) return known;
    const path = this.pathById.get(id);
    if (path === undefined) return null; // not seen (yet): not remembered, so a later look finds it
    const head = readFirstLineSync(path);
    if (head === null) return null;
    const parsed = parseCodexRolloutLine(head, { filePath: path });
    if (parsed.kind !== 'session' || parsed.from !== 'session_meta') return null;
    const parent = parsed.forkedFrom ?? null;
    this.parentById.set(id, parent);
    return parent;
  }
}

const HEAD_CHUNK = 64 * 1024;

/**
 * A file's first complete line (without its newline), or null (no newline yet, too long, or unreadable). Synchronous:
 * it is read inside a chunk's transaction (a resumed file's head, a fork's ancestors).
 */
function readFirstLineSync(path: string): string | null {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    // A rollout that is gone or unreadable: no first line.
    return null;
  }
  try {
    const parts: Buffer[] = [];
    let total = 0;
    for (let position = 0; total < MAX_LINE_BYTES; ) {
      const buf = Buffer.allocUnsafe(HEAD_CHUNK);
      const bytesRead = readSync(fd, buf, 0, HEAD_CHUNK, position);
      if (bytesRead === 0) return null;
      const chunk = buf.subarray(0, bytesRead);
      const nl = chunk.indexOf(10);
      if (nl >= 0) {
        parts.push(chunk.subarray(0, nl));
        return Buffer.concat(parts).toString('utf8');
      }
      parts.push(Buffer.from(chunk));
      total += bytesRead;
      position += bytesRead;
    }
    return null;
  } catch {
    // A read that failed part way (the file went away): no first line, as for a file that is gone.
    return null;
  } finally {
    closeSync(fd);
  }
}
