import { spawn } from 'node:child_process';
import { closeSync, existsSync, fstatSync, mkdirSync, openSync, readdirSync, readFileSync, readSync, watch, writeFileSync, type FSWatcher } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import type { HarnessEvent } from '../../harnesses/events.js';
import type { HarnessAdapter } from '../../harnesses/port.js';
import type { RunHandle, Runner, StartRun } from './ports.js';

/**
 * Harness processes for the engine, headless: each run's prompt, stdout (the structured stream), stderr and process
 * record are files in its run dir, and the process is detached, so it outlives an engine that is killed: the next
 * engine reattaches to it by pid (and start time, so a reused pid is not taken for it) or reads what it left. The
 * run's state comes from the stream only.
 */

const STDOUT = 'stdout.jsonl';
const STDERR = 'stderr.log';
const PROMPT = 'prompt.md';
const PROC = 'proc.json';
/** A stream line longer than this is not a record sleds can use: it is skipped with an error event, the rest read on. */
const MAX_LINE = 8 * 1024 * 1024;
const CHUNK = 256 * 1024;

const ProcRecord = z.object({ pid: z.number().int().positive(), startTicks: z.string().nullable(), argv0: z.string() });

/** The process's start time in clock ticks since boot (Linux /proc), to tell it from a later process with its pid. */
function startTicksOf(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Field 22; the command name (field 2) may hold spaces and parentheses, so count from its closing one.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    // Not Linux, or the process is gone: liveness falls back to the pid alone.
    return null;
  }
}

function alive(pid: number, startTicks: string | null): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    // ESRCH: gone. EPERM: it exists but is another user's, so not our run either.
    return false;
  }
  if (startTicks === null) return true;
  const now = startTicksOf(pid);
  return now === null || now === startTicks;
}

/** Reads a growing file's complete lines from where it last stopped. */
class LineFollower {
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

class FileRunHandle implements RunHandle {
  private readonly follower: LineFollower;
  private exited = false;

  constructor(
    private readonly adapter: HarnessAdapter,
    readonly pid: number,
    private readonly startTicks: string | null,
    readonly logPath: string,
  ) {
    this.follower = new LineFollower(logPath);
  }

  private readonly listeners = new Set<() => void>();

  markExited(): void {
    this.exited = true;
    for (const cb of [...this.listeners]) cb();
  }

  onActivity(cb: () => void): () => void {
    this.listeners.add(cb);
    let watcher: FSWatcher | null = null;
    try {
      watcher = watch(this.logPath, () => cb());
      watcher.on('error', () => undefined);
    } catch {
      // The stream file is not there yet (or cannot be watched): the caller's own timeout still wakes it.
      watcher = null;
    }
    return () => {
      this.listeners.delete(cb);
      watcher?.close();
    };
  }

  ended(): boolean {
    if (!this.exited && !alive(this.pid, this.startTicks)) this.exited = true;
    return this.exited;
  }

  read(): HarnessEvent[] {
    const done = this.exited;
    const { lines, tooLong } = this.follower.lines();
    const all = done ? [...lines, ...this.follower.rest()] : lines;
    const events: HarnessEvent[] = [];
    for (let i = 0; i < tooLong; i++) events.push({ kind: 'error', message: `a stream line over ${MAX_LINE / 1024 / 1024} MB was skipped` });
    for (const line of all) if (line.trim() !== '') events.push(...this.adapter.parseHeadlessLine(line));
    return events;
  }

  stop(): void {
    try {
      // The run's own process group (it was started detached): the harness and whatever it started.
      process.kill(-this.pid, 'SIGTERM');
    } catch {
      // Already gone.
    }
  }
}

/** `<nodeDir>/<n>` for the next n: every run of a node keeps its own files. */
function nextRunDir(nodeDir: string): string {
  mkdirSync(nodeDir, { recursive: true, mode: 0o700 });
  const taken = readdirSync(nodeDir).map(Number).filter((n) => Number.isInteger(n) && n > 0);
  const dir = join(nodeDir, String((taken.length ? Math.max(...taken) : 0) + 1));
  mkdirSync(dir, { mode: 0o700 });
  return dir;
}

function readProc(runDir: string): z.infer<typeof ProcRecord> | null {
  try {
    return ProcRecord.parse(JSON.parse(readFileSync(join(runDir, PROC), 'utf8')));
  } catch {
    // No record (the run never started) or a broken one: nothing to reattach to.
    return null;
  }
}

export function processRunner(): Runner {
  return {
    start(r: StartRun): RunHandle {
      const runDir = nextRunDir(r.nodeDir);
      const cmd = r.adapter.headlessArgv({ bin: r.bin, prompt: r.prompt, model: r.model, resumeSessionId: r.resumeSessionId, unattended: true, sledsMcp: r.sledsMcp ?? null });
      const promptPath = join(runDir, PROMPT);
      // The prompt goes in through a file on stdin, never argv (`ps` shows argv).
      writeFileSync(promptPath, cmd.stdin, { mode: 0o600 });
      const logPath = join(runDir, STDOUT);
      const fds = [openSync(promptPath, 'r'), openSync(logPath, 'a', 0o600), openSync(join(runDir, STDERR), 'a', 0o600)] as const;
      // A `.js` launcher runs under this node.
      const [file, args] = cmd.argv[0]!.endsWith('.js') ? [process.execPath, cmd.argv] : [cmd.argv[0]!, cmd.argv.slice(1)];
      try {
        const child = spawn(file, args, { cwd: r.cwd, env: r.env, stdio: [fds[0], fds[1], fds[2]], detached: true });
        const pid = child.pid;
        if (pid === undefined) throw new Error(`could not start ${cmd.argv[0]}`);
        const startTicks = startTicksOf(pid);
        writeFileSync(join(runDir, PROC), JSON.stringify({ pid, startTicks, argv0: cmd.argv[0]! }), { mode: 0o600 });
        const handle = new FileRunHandle(r.adapter, pid, startTicks, logPath);
        child.on('exit', () => handle.markExited());
        child.on('error', () => handle.markExited());
        child.unref();
        return handle;
      } finally {
        for (const fd of fds) closeSync(fd);
      }
    },

    reattach(adapter: HarnessAdapter, runDir: string): RunHandle | null {
      const proc = readProc(runDir);
      if (proc === null || !alive(proc.pid, proc.startTicks)) return null;
      return new FileRunHandle(adapter, proc.pid, proc.startTicks, join(runDir, STDOUT));
    },

    leftover(adapter: HarnessAdapter, runDir: string): HarnessEvent[] {
      const h = new FileRunHandle(adapter, 0, null, join(runDir, STDOUT));
      h.markExited();
      return h.read();
    },
  };
}

/** The tail of a run's stderr, for a one-line reason when a run ends without saying why. */
export function stderrTail(runDir: string, max = 300): string {
  try {
    const text = readFileSync(join(runDir, STDERR), 'utf8').trim();
    return text.slice(-max).replace(/\s*\n\s*/g, ' ');
  } catch {
    // No stderr file: the run never started.
    return '';
  }
}
