import { existsSync } from 'node:fs';
import { watch, type FSWatcher } from 'chokidar';
import type { Log } from '../log.js';
import type { FileFollower, Line } from './file-follower.js';

/**
 * The part every "folder of append-only JSONL files" adapter shares (Claude transcripts, Codex rollouts): watch the
 * folder, keep a queue of files with new bytes, read them one at a time through the FileFollower (new complete lines
 * only, each chunk committed with its offset), report backfill progress, and let tests wait until all is read.
 * What the lines mean is the adapter's: it gets them in `record`, inside the chunk's transaction.
 */
export interface JsonlSourceOptions {
  dir: string;
  follower: FileFollower;
  log: Log;
  /** Names the source in log lines ("transcript", "rollout"). */
  what: string;
  /** The files to follow; the others are not watched, and kicks for them are dropped. */
  accepts(path: string): boolean;
  /** A file's new complete lines, inside the transaction that commits its new offset. */
  record(path: string, lines: Line[]): void;
  /** Every accepted file, as it becomes known (listed, added, or kicked). */
  onFile?(path: string): void;
  /**
   * The files listed at start are read in this order, once the listing is complete (a kick before then waits too).
   * Without it, reading starts with the first file listed, in listing order.
   */
  orderBacklog?(paths: string[]): string[];
  /** Called as backfill progresses (bytes read so far, bytes known in all). */
  onProgress?: (done: number, total: number) => void;
  /**
   * Where a large backlog's records wait until it is all read (UsageStore's staging): begun when the listing at start
   * finds at least `fromBytes` unread, merged and ended once the backlog is read; merged before anything is read too
   * (what a crash left staged comes before what follows it).
   */
  staging?: { begin(): void; end(): void; merge(): Promise<void>; progress?(): void; fromBytes?: number };
  /** Reads a large backlog off the main thread (made when one begins, closed when it is read); null: it cannot. */
  offThread?: () => OffThreadReader | null;
}

/** A slice of a file read off the main thread: up to `to` (the end of its last complete line), `bytes` of progress. */
export interface OffThreadSlice {
  to: number;
  bytes: number;
  /** The file was read to its end; otherwise the rest is read as a further slice. */
  done: boolean;
}

/** Reads a large backlog's files off the main thread (parse workers), the main thread recording what comes back. */
export interface OffThreadReader<S extends OffThreadSlice = OffThreadSlice> {
  /** How many reads in flight keep it busy. */
  readonly depth: number;
  /** Reads `path` from byte `from` (of inode `ino`); null when it cannot, and the file is read on the main thread. */
  read(path: string, from: number, ino: number): Promise<S | null>;
  /** Records a slice, inside the transaction that commits its offset. */
  record(path: string, slice: S): void;
  close(): Promise<void>;
}

/** A backlog this big is staged: below it, records go straight in (a restart's few new lines, a test's history). */
export const STAGE_FROM_BYTES = 8 * 1024 * 1024;

export class JsonlSource {
  private watcher: FSWatcher | null = null;
  private dirty = new Set<string>();
  private running: Promise<void> | null = null;
  private ready = false;
  private totalBytes = 0;
  private doneBytes = 0;
  private idleWaiters: Array<() => void> = [];
  private readonly stopping = new AbortController();
  /** Records of this source are being staged (a large backlog), or staged ones merged: it is still backfilling. */
  private staging = false;
  private merging = false;
  private leftoverMerged: boolean;
  /** The backlog's off-thread reader failed (or there is none): the rest of it is read on the main thread. */
  private offThreadFailed = false;

  constructor(private readonly opts: JsonlSourceOptions) {
    this.leftoverMerged = opts.staging === undefined;
  }

  /**
   * Watches the folder (which the caller creates if it should exist). Resolves when what exists has been listed;
   * reading goes on after. A folder that does not exist is not watched: kicks still read the files they name.
   */
  start(): Promise<void> {
    const { dir, log, what } = this.opts;
    if (!existsSync(dir)) {
      log.info(`${what} folder ${dir} does not exist: not watched (hooks can still point at ${what}s)`);
      this.markReady();
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      this.watcher = watch(dir, {
        ignored: (path, stats) => Boolean(stats?.isFile() && !this.opts.accepts(path)),
        ignoreInitial: false,
        alwaysStat: true,
        persistent: true,
      });
      this.watcher.on('add', (path) => this.kick(path));
      this.watcher.on('change', (path) => this.kick(path));
      this.watcher.on('error', (e) => log.warn(`${what} watcher: ${(e as Error).message}`));
      this.watcher.on('ready', () => {
        this.markReady();
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
    // A backlog cut short: what was read so far is kept (a bulk load commits; staged rows wait for the next start).
    if (this.staging) {
      this.staging = false;
      this.opts.staging?.end();
    }
  }

  /** Reads a file's new lines soon (a hook says a turn ended, or the watcher saw a change). */
  kick(path: string): void {
    if (this.stopping.signal.aborted || !this.opts.accepts(path)) return;
    if (!this.dirty.has(path)) {
      this.dirty.add(path);
      this.opts.onFile?.(path);
      if (!this.ready) {
        this.totalBytes += this.opts.follower.unreadBytesNow(path);
        this.stageIfLarge();
      }
    }
    this.pump();
  }

  progress(): { backfilling: boolean; pendingBytes: number } {
    return {
      // Staged records count nowhere until merged: from the last byte read until the merge begins (the file's close,
      // between two awaits) it is still backfilling, or a status there shows every byte read and nothing counted.
      backfilling: !this.ready || this.merging || this.staging || (this.running !== null && this.totalBytes > this.doneBytes),
      pendingBytes: Math.max(0, this.totalBytes - this.doneBytes),
    };
  }

  /** Resolves once every file known so far has been read (for tests and the first-start display). */
  idle(): Promise<void> {
    if (this.ready && !this.running && this.dirty.size === 0) return Promise.resolve();
    return new Promise((r) => this.idleWaiters.push(r));
  }

  private markReady(): void {
    this.ready = true;
    this.stageIfLarge();
    if (this.opts.orderBacklog && this.dirty.size > 1) this.dirty = new Set(this.opts.orderBacklog([...this.dirty]));
    if (this.dirty.size > 0 || !this.leftoverMerged) this.pump();
    else if (!this.running) this.wakeIdle();
  }

  /** Stages from the moment the listing at start has found a large backlog unread. */
  private stageIfLarge(): void {
    const staging = this.opts.staging;
    if (!staging || this.staging || this.totalBytes - this.doneBytes < (staging.fromBytes ?? STAGE_FROM_BYTES)) return;
    staging.begin();
    this.staging = true;
    this.offThreadFailed = false;
  }

  private wakeIdle(): void {
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const w of waiters) w();
  }

  private pump(): void {
    if (this.running || (this.dirty.size === 0 && this.leftoverMerged)) return;
    if (!this.ready && this.opts.orderBacklog) return; // markReady starts it, in order
    this.running = this.drain().finally(() => {
      this.running = null;
      if (this.dirty.size > 0) this.pump();
      else if (this.ready) this.wakeIdle();
    });
  }

  private async drain(): Promise<void> {
    const { follower, log, record, onProgress } = this.opts;
    if (!this.leftoverMerged) {
      this.leftoverMerged = true;
      await this.mergeStaged();
    }
    while (this.dirty.size > 0) {
      // A large backlog (the listing at start may still be adding to it) is read off the main thread.
      if (this.staging && this.opts.offThread && !this.offThreadFailed && this.dirty.size > 1) {
        await this.drainOffThread();
        if (this.stopping.signal.aborted) break;
        continue;
      }
      const path = this.dirty.values().next().value as string;
      this.dirty.delete(path);
      try {
        await follower.follow(
          path,
          (lines) => record(path, lines),
          (bytes) => {
            this.opts.staging?.progress?.();
            this.doneBytes += bytes;
            onProgress?.(this.doneBytes, Math.max(this.totalBytes, this.doneBytes));
          },
          this.stopping.signal,
        );
      } catch (e) {
        log.error(`reading ${path}: ${(e as Error).message}`);
      }
    }
    // The backlog is read: its staged records go in (a stop leaves them for the next start).
    if (this.staging && !this.stopping.signal.aborted) {
      await this.mergeStaged();
      this.staging = false;
      this.opts.staging?.end();
    }
  }

  /**
   * Reads the backlog's files with a few in flight off the main thread, recording each as it comes back in the order
   * they were listed (the order the main thread would have read them in), so the store ends the same. A file the
   * reader cannot take, or that a kick named again meanwhile, is left to the main thread's loop after.
   */
  private async drainOffThread(): Promise<void> {
    const reader = this.opts.offThread!();
    if (!reader) {
      this.offThreadFailed = true;
      return;
    }
    const { follower, log, onProgress } = this.opts;
    const inFlight: Array<{ path: string; ino: number; slice: Promise<OffThreadSlice | null> }> = [];
    const reading = new Set<string>();
    const submit = (path: string, from: number, ino: number, first: boolean): void => {
      const job = { path, ino, slice: reader.read(path, from, ino) };
      reading.add(path);
      if (first) inFlight.push(job);
      else inFlight.unshift(job);
    };
    const fillUp = (): void => {
      if (this.offThreadFailed) return;
      for (const path of this.dirty) {
        if (inFlight.length >= reader.depth) return;
        if (reading.has(path)) continue;
        this.dirty.delete(path);
        const start = follower.startOf(path);
        if (start && start.size > start.from) submit(path, start.from, start.ino, true);
      }
    };
    try {
      for (fillUp(); inFlight.length > 0; fillUp()) {
        const job = inFlight.shift()!;
        const slice = await job.slice;
        reading.delete(job.path);
        if (this.stopping.signal.aborted) return; // what was recorded is committed: the next start resumes from it
        if (slice === null) {
          // The reader could not take it (a worker failed, the file was replaced): it and the rest are read here.
          this.offThreadFailed = true;
          this.dirty.add(job.path);
          continue;
        }
        try {
          follower.commitRead(job.path, slice.to, job.ino, () => reader.record(job.path, slice));
        } catch (e) {
          log.error(`reading ${job.path}: ${(e as Error).message}`);
          continue;
        }
        this.opts.staging?.progress?.();
        this.doneBytes += slice.bytes;
        onProgress?.(this.doneBytes, Math.max(this.totalBytes, this.doneBytes));
        if (!slice.done) submit(job.path, slice.to, job.ino, false);
        // Let hooks and the statusline through between files, as between the follower's chunks.
        await new Promise((r) => setImmediate(r));
      }
    } finally {
      await reader.close();
    }
  }

  private async mergeStaged(): Promise<void> {
    if (!this.opts.staging) return;
    this.merging = true;
    try {
      await this.opts.staging.merge();
    } catch (e) {
      this.opts.log.error(`merging the staged ${this.opts.what} usage: ${(e as Error).message} (it is merged at the next start)`);
    } finally {
      this.merging = false;
    }
  }
}
