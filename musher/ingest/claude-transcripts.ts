import { existsSync, mkdirSync, statSync } from 'node:fs';
import { watch, type FSWatcher } from 'chokidar';
import { parseClaudeTranscriptLine } from '../../core/claude-transcript.js';
import { priceUsage } from '../../core/pricing.js';
import type { PriceTable } from '../../core/price-table.js';
import type { Clock } from '../clock.js';
import type { Log } from '../log.js';
import type { SessionStore } from '../store/sessions.js';
import type { UsageStore } from '../store/usage.js';
import type { WallStore } from '../store/walls.js';
import type { FileFollower, Line } from './file-follower.js';

/**
 * The Claude Code transcript adapter: detect (the projects folder) → load (follow each *.jsonl for new bytes)
 * → parse (core/claude-transcript) → record (usage priced, sessions, wall signals).
 */
export interface ClaudeTranscriptDeps {
  projectsDir: string;
  follower: FileFollower;
  sessions: SessionStore;
  usage: UsageStore;
  walls: WallStore;
  prices: PriceTable;
  clock: Clock;
  log: Log;
  /** Called as backfill progresses (bytes read so far, bytes known in all). */
  onProgress?: (done: number, total: number) => void;
}

/** Cheap test before JSON.parse: only these records can carry anything we record. */
function mayMatter(text: string): boolean {
  return text.includes('"usage"') || text.includes('"apiError"') || text.includes('"type":"user"');
}

export class ClaudeTranscriptSource {
  private watcher: FSWatcher | null = null;
  private readonly dirty = new Set<string>();
  private running: Promise<void> | null = null;
  private ready = false;
  private totalBytes = 0;
  private doneBytes = 0;
  private idleWaiters: Array<() => void> = [];
  private readonly unpricedLogged = new Set<string>();
  private readonly stopping = new AbortController();
  /** The session each file was last seen to belong to. */
  private readonly knownSessions = new Map<string, string>();

  constructor(private readonly deps: ClaudeTranscriptDeps) {}

  /** Claude Code is on this machine when its config folder exists. */
  detect(): boolean {
    return existsSync(this.deps.projectsDir) || existsSync(`${this.deps.projectsDir}/..`);
  }

  start(): Promise<void> {
    mkdirSync(this.deps.projectsDir, { recursive: true });
    return new Promise((resolve) => {
      this.watcher = watch(this.deps.projectsDir, {
        ignored: (path, stats) => Boolean(stats?.isFile() && !path.endsWith('.jsonl')),
        ignoreInitial: false,
        alwaysStat: true,
        persistent: true,
      });
      this.watcher.on('add', (path, stats) => this.kick(path, stats?.size));
      this.watcher.on('change', (path) => this.kick(path));
      this.watcher.on('error', (e) => this.deps.log.warn(`transcript watcher: ${(e as Error).message}`));
      this.watcher.on('ready', () => {
        this.ready = true;
        this.pump();
        resolve();
      });
    });
  }

  /** Stops watching and reading; resolves after the chunk in hand is committed (offsets make the rest resumable). */
  async stop(): Promise<void> {
    this.stopping.abort();
    this.dirty.clear();
    await this.watcher?.close();
    this.watcher = null;
    await this.running;
  }

  /** Reads a file's new lines soon (a hook says a turn ended, or the watcher saw a change). */
  kick(path: string, knownSize?: number): void {
    if (!path.endsWith('.jsonl') || this.stopping.signal.aborted) return;
    if (!this.dirty.has(path)) {
      this.dirty.add(path);
      if (!this.ready) this.totalBytes += knownSize ?? safeSize(path);
    }
    this.pump();
  }

  progress(): { backfilling: boolean; pendingBytes: number } {
    return { backfilling: !this.ready || (this.running !== null && this.totalBytes > this.doneBytes), pendingBytes: Math.max(0, this.totalBytes - this.doneBytes) };
  }

  /** Resolves once every file known so far has been read (for tests and the first-start display). */
  idle(): Promise<void> {
    if (this.ready && !this.running && this.dirty.size === 0) return Promise.resolve();
    return new Promise((r) => this.idleWaiters.push(r));
  }

  private pump(): void {
    if (this.running || this.dirty.size === 0) return;
    this.running = this.drain().finally(() => {
      this.running = null;
      if (this.dirty.size > 0) this.pump();
      else if (this.ready) {
        const waiters = this.idleWaiters;
        this.idleWaiters = [];
        for (const w of waiters) w();
      }
    });
  }

  private async drain(): Promise<void> {
    while (this.dirty.size > 0) {
      const path = this.dirty.values().next().value as string;
      this.dirty.delete(path);
      try {
        await this.deps.follower.follow(
          path,
          (lines) => this.record(path, lines),
          (bytes) => {
            this.doneBytes += bytes;
            this.deps.onProgress?.(this.doneBytes, Math.max(this.totalBytes, this.doneBytes));
          },
          this.stopping.signal,
        );
      } catch (e) {
        this.deps.log.error(`reading ${path}: ${(e as Error).message}`);
      }
    }
  }

  private record(path: string, lines: Line[]): void {
    const seenSessions = new Set<string>();
    for (const line of lines) {
      if (!line.text.trimEnd().endsWith('}')) {
        this.deps.log.error(`${path}:${line.offset}: truncated or malformed record (${line.text.length} bytes) — skipped`);
        continue;
      }
      if (!mayMatter(line.text)) continue;
      // User records only tell us the session; once it is known, skip them unparsed (most of a history's bytes).
      if (!line.text.includes('"usage"') && !line.text.includes('"apiError"')) {
        const id = sessionIdOf(line.text);
        if (id && (seenSessions.has(id) || this.knownSessions.get(path) === id)) continue;
      }
      const parsed = parseClaudeTranscriptLine(line.text, { filePath: path });
      switch (parsed.kind) {
        case 'usage': {
          const cost = priceUsage(this.deps.prices, parsed.usage);
          this.deps.usage.record(parsed.usage, cost);
          if (!cost.priced && !this.unpricedLogged.has(parsed.usage.model)) {
            this.unpricedLogged.add(parsed.usage.model);
            this.deps.log.error(`${path}:${line.offset}: ${cost.reason} — recorded as unpriced, not $0 (add it under prices/effective/)`);
          }
          if (!seenSessions.has(parsed.usage.sessionId)) {
            seenSessions.add(parsed.usage.sessionId);
            this.deps.sessions.touch({ sessionId: parsed.usage.sessionId, harness: 'claude-code', at: parsed.usage.timestampMs, cwd: parsed.usage.cwd, transcriptPath: path, model: parsed.usage.model });
          }
          break;
        }
        case 'wall':
          this.deps.walls.record(parsed.wall);
          break;
        case 'session':
          if (!seenSessions.has(parsed.sessionId)) {
            seenSessions.add(parsed.sessionId);
            this.knownSessions.set(path, parsed.sessionId);
            this.deps.sessions.touch({ sessionId: parsed.sessionId, harness: 'claude-code', at: parsed.timestampMs, cwd: parsed.cwd, transcriptPath: path });
          }
          break;
        case 'error':
          this.deps.log.error(`${parsed.message} (at byte ${line.offset})`);
          break;
        case 'ignored':
          break;
      }
    }
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

function safeSize(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}
