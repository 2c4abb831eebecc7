import { existsSync, mkdirSync } from 'node:fs';
import { CLAUDE_TRANSCRIPT_SOURCE, parseClaudeTranscriptLine } from '../../harnesses/claude-code/transcript.js';
import { priceUsage } from '../../core/pricing.js';
import type { PriceTable } from '../../core/price-table.js';
import type { Clock } from '../clock.js';
import type { Log } from '../log.js';
import type { HistoryStore } from '../store/histories.js';
import type { SessionStore } from '../store/sessions.js';
import { backlogStaging, type UsageEntry, type UsageStore } from '../store/usage.js';
import type { WallStore } from '../store/walls.js';
import type { FileFollower, Line } from './file-follower.js';
import { JsonlSource } from './jsonl-source.js';
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
}

/**
 * Cheap tests before JSON.parse. Only a record that names usage or an API error can be a reply or a wall; of the rest,
 * only a user record tells us anything (its session). Each line is scanned for these once: a user record is most of a
 * history's bytes (tool results), and every full scan of it was a measurable share of a backfill.
 */
function mayCarryUsage(text: string): boolean {
  return text.includes('"usage"') || text.includes('"apiError"');
}

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

  private record(path: string, lines: Line[]): void {
    const seenSessions = new Set<string>();
    const history = this.deps.histories.of(path);
    // One record per content block, each with the reply's usage: the store writes the chunk's once per reply.
    const entries: UsageEntry[] = [];
    for (const line of lines) {
      const sendersSeat = history !== null && line.offset < history.bytes ? history.seat : null;
      if (!line.text.trimEnd().endsWith('}')) {
        this.deps.log.error(`${path}:${line.offset}: truncated or malformed record (${line.text.length} bytes) — skipped`);
        continue;
      }
      // User records only tell us the session; once it is known, skip them unparsed (most of a history's bytes).
      if (!mayCarryUsage(line.text)) {
        if (!line.text.includes('"type":"user"')) continue;
        const id = sessionIdOf(line.text);
        if (id && (seenSessions.has(id) || this.knownSessions.get(path) === id)) continue;
      }
      const parsed = parseClaudeTranscriptLine(line.text, { filePath: path });
      switch (parsed.kind) {
        case 'usage': {
          const cost = priceUsage(this.deps.prices, parsed.usage);
          entries.push({ usage: parsed.usage, cost, seat: sendersSeat });
          if (!cost.priced && !this.unpricedLogged.has(parsed.usage.model)) {
            this.unpricedLogged.add(parsed.usage.model);
            this.deps.log.error(`${path}:${line.offset}: ${cost.reason} — recorded as unpriced, not $0 (add it under prices/effective/)`);
          }
          if (!seenSessions.has(parsed.usage.sessionId)) {
            seenSessions.add(parsed.usage.sessionId);
            this.deps.sessions.touch({ sessionId: parsed.usage.sessionId, harness: TRANSCRIPT_HARNESS, at: parsed.usage.timestampMs, cwd: sendersSeat === null ? parsed.usage.cwd : null, transcriptPath: path, model: parsed.usage.model });
          }
          break;
        }
        case 'wall':
          if (sendersSeat === null) this.deps.walls.record(parsed.wall);
          break;
        case 'session':
          if (!seenSessions.has(parsed.sessionId)) {
            seenSessions.add(parsed.sessionId);
            this.knownSessions.set(path, parsed.sessionId);
            this.deps.sessions.touch({ sessionId: parsed.sessionId, harness: TRANSCRIPT_HARNESS, at: parsed.timestampMs, cwd: sendersSeat === null ? parsed.cwd : null, transcriptPath: path });
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
  }
}

/** The record's sessionId, found without parsing the whole line. */
function sessionIdOf(text: string): string | null {
  const at = text.lastIndexOf('"sessionId":"');
  if (at < 0) return null;
  const start = at + '"sessionId":"'.length;
  const end = text.indexOf('"', start);
  return end > start ? text.slice(start, end) : null;
}

