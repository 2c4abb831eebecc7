import { existsSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import type { StartRun } from './ports.js';
import { prepareRun } from './runner.js';
import { FileRunHandle, killGroup } from './run-handle.js';
import { alive, PidRecord, readProc, readRunFile, runFile, writeRunFile } from './run-files.js';

/**
 * What the tmux and terminal runners share: a run whose harness the wrapper (`sleds engine run-window <runDir>`,
 * musher/engine/run-window.ts) starts inside a window. The runner writes what the wrapper needs (run.json, env.json:
 * 0600, the environment never in argv) and gives the handle, whose events come from the stream file as a headless
 * run's do; the run is over once the wrapper wrote exit.json, or once nothing of it runs any more (the window's
 * process, the wrapper, the harness: closing a window leaves the harness working).
 */

/** The argv that starts the wrapper: `<cli…> engine run-window <runDir>`. */
export function wrapperArgv(cli: readonly string[], runDir: string): string[] {
  return [...cli, 'engine', 'run-window', runDir];
}

/** `<route>/<node>` of a node's folder. */
export function labelOf(nodeDir: string): string {
  return `${basename(dirname(nodeDir))}/${basename(nodeDir)}`;
}

/** Prepares a run for the wrapper: the prompt file, run.json and env.json. */
export function prepareWindowRun(r: StartRun, runner: 'tmux' | 'terminal'): { runDir: string; label: string } {
  const { runDir, argv } = prepareRun(r);
  const label = labelOf(r.nodeDir);
  writeRunFile(runDir, 'env', r.env);
  writeRunFile(runDir, 'run', { runner, label, harness: r.adapter.id, argv, cwd: r.cwd });
  return { runDir, label };
}

export interface Launcher {
  /** Whether what the runner started itself still counts as the run starting (the tmux pane's process; a terminal's launcher, or the wait for its wrapper). */
  starting(): boolean;
  /** That process, while it still runs (to stop a run whose wrapper has not recorded itself); else null. */
  running(): number | null;
}

/** The handle of a window run. */
export function windowHandle(r: StartRun, runDir: string, pid: number, launcher: Launcher): FileRunHandle {
  const wrapperAlive = () => {
    const w = readRunFile(runDir, 'wrapper', PidRecord);
    return w !== null && alive(w.pid, w.startTicks);
  };
  return new FileRunHandle(r.adapter, pid, runFile(runDir, 'stdout'), {
    alive: () => {
      if (existsSync(runFile(runDir, 'exit'))) return false;
      const proc = readProc(runDir);
      return launcher.starting() || wrapperAlive() || (proc !== null && alive(proc.pid, proc.startTicks));
    },
    stop: () => {
      const proc = readProc(runDir);
      if (proc !== null) return killGroup(proc.pid);
      // Not started yet: the wrapper, else what the runner started, each only while it is still that process.
      const w = readRunFile(runDir, 'wrapper', PidRecord);
      const target = w !== null && alive(w.pid, w.startTicks) ? w.pid : launcher.running();
      if (target === null) return;
      killGroup(target);
      try {
        process.kill(target, 'SIGTERM');
      } catch {
        // Gone already, or it led its own group, which the line above stopped.
      }
    },
    watchPath: runDir,
  });
}
