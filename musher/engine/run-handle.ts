import { closeSync, existsSync, fstatSync, openSync, readSync, watch, type FSWatcher } from 'node:fs';
import type { HarnessEvent } from '../../harnesses/events.js';
import type { HarnessAdapter } from '../../harnesses/port.js';
import type { RunHandle } from './ports.js';

/**
 * A run as the engine follows it, whichever runner started it: the events come from its stream file (stdout.jsonl)
 * alone, never from a screen; whether it has ended and how it is stopped are the runner's (its process, or its
 * wrapper's window).
 */

/** A stream line longer than this is not a record sleds can use: it is skipped with an error event, the rest read on. */
export const MAX_LINE = 8 * 1024 * 1024;
const CHUNK = 256 * 1024;

/** Reads a growing file's complete lines from where it last stopped. */
export class LineFollower {
  private offset = 0;
  private partial = '';
  private skipping = false;

  constructor(private readonly path: string) {}

  lines(): { lines: string[]; tooLong: number } {
    const out: string[] = [];
    let tooLong = 0;
    if (!existsSync(this.path)) return { lines: out, tooLong };
    const fd = openSync(this.path, 'r');
    try {
      const size = fstatSync(fd).size;
      const buf = Buffer.alloc(CHUNK);
      while (this.offset < size) {
        const n = readSync(fd, buf, 0, Math.min(CHUNK, size - this.offset), this.offset);
        if (n <= 0) break;
        this.offset += n;
        const parts = (this.partial + buf.subarray(0, n).toString('utf8')).split('\n');
        this.partial = parts.pop() ?? '';
        for (const line of parts) {
          if (this.skipping) {
            this.skipping = false;
            continue;
          }
          out.push(line);
        }
        if (this.partial.length > MAX_LINE) {
          tooLong++;
          this.partial = '';
          this.skipping = true;
        }
      }
    } finally {
      closeSync(fd);
    }
    return { lines: out, tooLong };
  }

  /** The last line, once the writer is gone (a stream may end without a newline). */
  rest(): string[] {
    const last = this.partial;
    this.partial = '';
    return last.trim() === '' || this.skipping ? [] : [last];
  }
}

/** A stream's new lines as events: `done` once the writer is gone (its last line may lack a newline). */
export function readEvents(adapter: Pick<HarnessAdapter, 'parseHeadlessLine'>, follower: LineFollower, done: boolean): HarnessEvent[] {
  const { lines, tooLong } = follower.lines();
  const all = done ? [...lines, ...follower.rest()] : lines;
  const events: HarnessEvent[] = [];
  for (let i = 0; i < tooLong; i++) events.push({ kind: 'error', message: `a stream line over ${MAX_LINE / 1024 / 1024} MB was skipped` });
  for (const line of all) if (line.trim() !== '') events.push(...adapter.parseHeadlessLine(line));
  return events;
}

export interface RunLife {
  /** Whether the run's processes still run. */
  alive(): boolean;
  stop(): void;
  /** What to watch for activity: the stream file (headless), or the whole run dir (a wrapper also writes its exit there). */
  watchPath: string;
}

export class FileRunHandle implements RunHandle {
  private readonly follower: LineFollower;
  private exited = false;
  private readonly listeners = new Set<() => void>();

  constructor(
    private readonly adapter: HarnessAdapter,
    readonly pid: number,
    readonly logPath: string,
    private readonly life: RunLife,
  ) {
    this.follower = new LineFollower(logPath);
  }

  markExited(): void {
    this.exited = true;
    for (const cb of [...this.listeners]) cb();
  }

  onActivity(cb: () => void): () => void {
    this.listeners.add(cb);
    let watcher: FSWatcher | null = null;
    try {
      watcher = watch(this.life.watchPath, () => cb());
      watcher.on('error', () => undefined);
    } catch {
      // The file is not there yet (or cannot be watched): the caller's own timeout still wakes it.
      watcher = null;
    }
    return () => {
      this.listeners.delete(cb);
      watcher?.close();
    };
  }

  ended(): boolean {
    if (!this.exited && !this.life.alive()) this.exited = true;
    return this.exited;
  }

  read(): HarnessEvent[] {
    return readEvents(this.adapter, this.follower, this.exited);
  }

  stop(): void {
    this.life.stop();
  }
}

/** Stops a process group (a detached process and whatever it started); quiet when it is gone. */
export function killGroup(pid: number, signal: NodeJS.Signals = 'SIGTERM'): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // Already gone.
  }
}
