import { existsSync, mkdirSync } from 'node:fs';
import { CLAUDE_TRANSCRIPT_SOURCE } from '../../harnesses/claude-code/transcript.js';
import { formatMegabytes } from '../../core/format.js';
import { priceUsage } from '../../core/pricing.js';
import type { PriceTable } from '../../core/price-table.js';
import type { Clock } from '../clock.js';
import type { Log } from '../log.js';
import type { HistoryStore } from '../store/histories.js';
import type { SessionStore } from '../store/sessions.js';
import { backlogStaging, type UsageEntry, type UsageStore } from '../store/usage.js';
import type { WallStore } from '../store/walls.js';
import type { FileFollower, Line } from './file-follower.js';
import { JsonlSource, type OffThreadReader } from './jsonl-source.js';
import type { SliceRequest, SliceResult } from './transcript-slice.js';
import { transcriptWorkerEntry, WorkerPool } from './worker-pool.js';
import { chunkState, readTranscriptLine, type TranscriptItem } from './transcript-lines.js';
import { sourceHarnessId } from '../source-harness.js';

/** The harness whose sessions these transcripts are, as the registry names it. */
const TRANSCRIPT_HARNESS = sourceHarnessId(CLAUDE_TRANSCRIPT_SOURCE);

/**
 * The Claude Code transcript adapter: detect (the projects folder) → load (follow each *.jsonl for new bytes)
 * → parse (harnesses/claude-code/transcript) → record (usage priced, sessions, wall signals). The bytes a pickup installed are
 * the sender's history: their usage is recorded as the sender's seat's, their limit records are no wall here, and the
 * session learns no cwd from them (the sender's folder is on the sender's machine).
 */
export interface ClaudeTranscriptDeps {
  projectsDir: string;
  follower: FileFollower;
  sessions: SessionStore;
  usage: UsageStore;
  walls: WallStore;
  /** The bytes pickups installed: the sender's history, read as such. */
  histories: HistoryStore;
  prices: PriceTable;
  clock: Clock;
  log: Log;
  /** Called as backfill progresses (bytes read so far, bytes known in all). */
  onProgress?: (done: number, total: number) => void;
  /** Threads that parse a large backlog (0: the main thread reads it); PARSE_WORKERS by default. */
  parseWorkers?: number;
}

/**
 * Two parse workers: with the dedup index built after the load (UsageStore.beginBulk), parsing is most of a backfill,
 * and two small workers beside the main thread read 1 GB in 10-11 s where one took 11-12 (this machine, two cores),
 * at less peak memory than one with a larger heap (194 MB against 210).
 */
const PARSE_WORKERS = 2;
/**
 * The most a parse worker reads for one answer: a transcript is a few MB; a bigger one comes back in slices. Small, so
 * a slice's lines and their answer fit the workers' small heaps (worker-pool.ts).
 */
const SLICE_BYTES = 4 * 1024 * 1024;

export class ClaudeTranscriptSource {
  private readonly source: JsonlSource;
  private readonly unpricedLogged = new Set<string>();
  /** The session each file was last seen to belong to. */
  private readonly knownSessions = new Map<string, string>();

  constructor(private readonly deps: ClaudeTranscriptDeps) {
    this.source = new JsonlSource({
      dir: deps.projectsDir,
      follower: deps.follower,
      log: deps.log,
      what: 'transcript',
      accepts: (path) => path.endsWith('.jsonl'),
      record: (path, lines) => this.record(path, lines),
      onProgress: deps.onProgress,
      staging: backlogStaging(deps.usage),
      offThread: () => this.backlogReader(),
    });
  }

  /** Claude Code is on this machine when its config folder exists. */
  detect(): boolean {
    return existsSync(this.deps.projectsDir) || existsSync(`${this.deps.projectsDir}/..`);
  }

  /** Watches the projects folder (made if missing: Claude Code makes it too); resolves once what exists is listed. */
  start(): Promise<void> {
    mkdirSync(this.deps.projectsDir, { recursive: true });
    return this.source.start();
  }

  /** Stops watching and reading; resolves after the chunk in hand is committed (offsets make the rest resumable). */
  stop(): Promise<void> {
    return this.source.stop();
  }

  /** Reads a file's new lines soon (a hook says a turn ended, or the watcher saw a change). */
  kick(path: string): void {
    this.source.kick(path);
  }

  progress(): { backfilling: boolean; pendingBytes: number } {
    return this.source.progress();
  }

  /** Resolves once every file known so far has been read (for tests and the first-start display). */
  idle(): Promise<void> {
    return this.source.idle();
  }

  /** Parse workers for a large backlog (its lines parsed off the main thread, recorded here); null when there are none. */
  private backlogReader(): OffThreadReader<Extract<SliceResult, { ok: true }>> | null {
    const size = this.deps.parseWorkers ?? PARSE_WORKERS;
    const entry = transcriptWorkerEntry();
    if (size <= 0 || entry === null) return null;
    let pool: WorkerPool<SliceRequest, SliceResult>;
    try {
      pool = new WorkerPool<SliceRequest, SliceResult>(entry, size);
    } catch (e) {
      this.deps.log.warn(`transcript parse workers: ${(e as Error).message} — the backlog is read on the main thread`);
      return null;
    }
    this.deps.log.info(`transcript backlog of ${formatMegabytes(this.source.progress().pendingBytes)}: parsed by ${size} worker thread${size === 1 ? '' : 's'} (parse workers), recorded here`);
    let warned = false;
    return {
      // Enough in flight that the worker has the next files while a commit holds the main thread (about 200 ms on 1 GB).
      depth: Math.max(4, pool.size * 2),
      read: async (path, from, ino) => {
        try {
          const r = await pool.run({ path, from, ino, known: this.knownSessions.get(path) ?? null, sliceBytes: SLICE_BYTES });
          return r.ok ? r : null;
        } catch (e) {
          if (!warned) this.deps.log.warn(`transcript parse worker: ${(e as Error).message} — the rest is read on the main thread`);
          warned = true;
          return null;
        }
      },
      record: (path, slice) => {
        for (const error of slice.errors) this.deps.log.error(error);
        this.apply(path, slice.items, slice.known, new Map(slice.latestReply));
      },
      close: () => pool.close(),
    };
  }

  private record(path: string, lines: Line[]): void {
    const state = chunkState(this.knownSessions.get(path) ?? null);
    const items: TranscriptItem[] = [];
    for (const line of lines) readTranscriptLine(line.text, line.offset, path, state, items);
    this.apply(path, items, state.known, state.latestReply);
  }

  /**
   * Records what a chunk's lines said (read here or by a parse worker): usage priced, sessions touched once per chunk,
   * walls, and what was wrong with a line. `known`: the session the file belongs to after the chunk; `latestReply`:
   * each session's latest reply in it.
   */
  private apply(path: string, items: readonly TranscriptItem[], known: string | null, latestReply: ReadonlyMap<string, number>): void {
    if (known !== null) this.knownSessions.set(path, known);
    const history = this.deps.histories.of(path);
    // A reply's blocks that repeat it were dropped as they were read; the store writes the rest once per reply.
    const entries: UsageEntry[] = [];
    for (const item of items) {
      const sendersSeat = history !== null && item.offset < history.bytes ? history.seat : null;
      switch (item.kind) {
        case 'malformed':
          this.deps.log.error(`${path}:${item.offset}: truncated or malformed record (${item.length} bytes) — skipped`);
          break;
        case 'usage': {
          const usage = item.parsed.usage;
          const cost = priceUsage(this.deps.prices, usage);
          entries.push({ usage, cost, seat: sendersSeat });
          if (!cost.priced && !this.unpricedLogged.has(usage.model)) {
            this.unpricedLogged.add(usage.model);
            this.deps.log.error(`${path}:${item.offset}: ${cost.reason} — recorded as unpriced, not $0 (add it under prices/effective/)`);
          }
          if (item.firstOfSession) {
            this.deps.sessions.touch({ sessionId: usage.sessionId, harness: TRANSCRIPT_HARNESS, at: usage.timestampMs, cwd: sendersSeat === null ? usage.cwd : null, transcriptPath: path, model: usage.model });
          }
          break;
        }
        case 'wall':
          if (sendersSeat === null) this.deps.walls.record(item.parsed.wall);
          break;
        case 'session':
          if (item.firstOfSession) {
            const p = item.parsed;
            this.deps.sessions.touch({ sessionId: p.sessionId, harness: TRANSCRIPT_HARNESS, at: p.timestampMs, cwd: sendersSeat === null ? p.cwd : null, transcriptPath: path });
          }
          break;
        case 'error':
          this.deps.log.error(`${item.message} (at byte ${item.offset})`);
          break;
      }
    }
    for (const [sessionId, at] of latestReply) this.deps.sessions.touch({ sessionId, harness: TRANSCRIPT_HARNESS, at });
    this.deps.usage.recordMany(entries);
  }
}
