import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import type { HarnessEvent } from '../../harnesses/events.js';
import type { HarnessAdapter } from '../../harnesses/port.js';
import type { RunHandle, Runner, StartRun } from './ports.js';
import { FileRunHandle, killGroup } from './run-handle.js';
import { alive, nextRunDir, readProc, runFile, writeProc, type ProcRecord } from './run-files.js';

/**
 * Harness processes for the engine, headless: each run's prompt, stdout (the structured stream), stderr and process
 * record are files in its run dir (musher/engine/run-files.ts), and the process is detached, so it outlives an engine
 * that is killed: the next engine reattaches to it by pid (and start time, so a reused pid is not taken for it) or
 * reads what it left. The run's state comes from the stream only.
 */

/**
 * Starts the harness `argv` detached in `cwd`, its stdin the run dir's prompt file, its stdout and stderr the run
 * dir's stream and stderr files, and records it (proc.json). The headless runner and the window wrapper
 * (`sleds engine run-window`) both start the harness here, so the stream file is the same whoever watches.
 */
export function spawnHarness(runDir: string, argv: readonly string[], cwd: string, env: Record<string, string>): { child: ChildProcess; proc: ProcRecord } {
  const fds = [openSync(runFile(runDir, 'prompt'), 'r'), openSync(runFile(runDir, 'stdout'), 'a', 0o600), openSync(runFile(runDir, 'stderr'), 'a', 0o600)] as const;
  // A `.js` launcher runs under this node.
  const [file, args] = argv[0]!.endsWith('.js') ? [process.execPath, [...argv]] : [argv[0]!, argv.slice(1)];
  try {
    const child = spawn(file, args, { cwd, env, stdio: [fds[0], fds[1], fds[2]], detached: true });
    const pid = child.pid;
    if (pid === undefined) throw new Error(`could not start ${argv[0]}`);
    return { child, proc: writeProc(runDir, pid, argv[0]!) };
  } finally {
    for (const fd of fds) closeSync(fd);
  }
}

/** Writes the prompt file a run's harness reads on stdin (never argv: `ps` shows argv); gives the harness's argv. */
export function prepareRun(r: StartRun): { runDir: string; argv: string[] } {
  const runDir = nextRunDir(r.nodeDir);
  const cmd = r.adapter.headlessArgv({ bin: r.bin, prompt: r.prompt, model: r.model, resumeSessionId: r.resumeSessionId, unattended: true, sledsMcp: r.sledsMcp ?? null, harnessArgs: r.harnessArgs ?? [] });
  writeFileSync(runFile(runDir, 'prompt'), cmd.stdin, { mode: 0o600 });
  // Which harness ran it: a node that switched harness at a limit has runs of two, each read by its own (its receipt).
  writeFileSync(runFile(runDir, 'harness'), r.adapter.id, { mode: 0o600 });
  return { runDir, argv: cmd.argv };
}

/** The handle of a harness process recorded in proc.json. */
function procHandle(adapter: HarnessAdapter, runDir: string, proc: ProcRecord): FileRunHandle {
  const logPath = runFile(runDir, 'stdout');
  return new FileRunHandle(adapter, proc.pid, logPath, { alive: () => alive(proc.pid, proc.startTicks), stop: () => killGroup(proc.pid), watchPath: logPath });
}

/** The run recorded in `runDir` if its harness still runs, whichever runner started it (they all write proc.json). */
export function reattachRun(adapter: HarnessAdapter, runDir: string): RunHandle | null {
  const proc = readProc(runDir);
  if (proc === null || !alive(proc.pid, proc.startTicks)) return null;
  return procHandle(adapter, runDir, proc);
}

/** The events a dead run left in `runDir`. */
export function leftoverRun(adapter: HarnessAdapter, runDir: string): HarnessEvent[] {
  const logPath = runFile(runDir, 'stdout');
  const h = new FileRunHandle(adapter, 0, logPath, { alive: () => false, stop: () => undefined, watchPath: logPath });
  h.markExited();
  return h.read();
}

export function processRunner(): Runner {
  return {
    start(r: StartRun): RunHandle {
      const { runDir, argv } = prepareRun(r);
      const { child, proc } = spawnHarness(runDir, argv, r.cwd, r.env);
      const handle = procHandle(r.adapter, runDir, proc);
      child.on('exit', () => handle.markExited());
      child.on('error', () => handle.markExited());
      child.unref();
      return handle;
    },
    reattach: reattachRun,
    leftover: leftoverRun,
  };
}

/** The tail of a run's stderr, for a one-line reason when a run ends without saying why. */
export function stderrTail(runDir: string, max = 300): string {
  try {
    const text = readFileSync(runFile(runDir, 'stderr'), 'utf8').trim();
    return text.slice(-max).replace(/\s*\n\s*/g, ' ');
  } catch {
    // No stderr file: the run never started.
    return '';
  }
}
