import { spawn } from 'node:child_process';
import { closeSync, existsSync, openSync } from 'node:fs';
import type { Clock } from '../clock.js';
import { RUN_PLACEHOLDER } from '../config/schema.js';
import type { RunHandle, Runner, StartRun } from './ports.js';
import { leftoverRun, reattachRun } from './runner.js';
import type { FileRunHandle } from './run-handle.js';
import { runFile } from './run-files.js';
import { prepareWindowRun, windowHandle, wrapperArgv } from './window-run.js';

/**
 * The terminal runner (`engine.runner: terminal`): each run opens a terminal window from config.yml's
 * `engine.terminal.command` template, its `{run}` element replaced by the wrapper's argv (musher/engine/run-window.ts),
 * e.g. `[gnome-terminal, --, {run}]` or `[wezterm, start, --, {run}]`; without `{run}` the wrapper goes at the end.
 * The launcher is started detached with an argument array (no shell); its output goes to the run's stderr.log. Many
 * terminals' launchers return at once and start the wrapper a moment later, so the run counts as starting until the
 * wrapper has recorded itself (wrapper.json), for at most `startMs`: a template that never runs it ends the run then.
 */

/** The template's argv with the wrapper in place of `{run}` (or after the rest). */
export function terminalArgv(template: readonly string[], wrapper: readonly string[]): string[] {
  const at = template.indexOf(RUN_PLACEHOLDER);
  return at < 0 ? [...template, ...wrapper] : [...template.slice(0, at), ...wrapper, ...template.slice(at + 1)];
}

export interface TerminalRunnerOptions {
  /** config.yml's engine.terminal.command, its program resolved to an absolute path. */
  command: readonly string[];
  cli: readonly string[];
  /** The launcher's environment (the terminal's: DISPLAY, WAYLAND_DISPLAY…); a run's own goes through env.json. */
  env: NodeJS.ProcessEnv;
  clock: Clock;
  /** How long a launcher that returned may take to start the wrapper. */
  startMs?: number;
}

export function terminalRunner(o: TerminalRunnerOptions): Runner {
  const startMs = o.startMs ?? 60_000;
  return {
    start(r: StartRun): RunHandle {
      const { runDir } = prepareWindowRun(r, 'terminal');
      const argv = terminalArgv(o.command, wrapperArgv(o.cli, runDir));
      const out = openSync(runFile(runDir, 'stderr'), 'a', 0o600);
      let launcherDone = false;
      let failed = false;
      let handle: FileRunHandle | null = null;
      const launcherEnded = (ok: boolean) => {
        launcherDone = true;
        failed = !ok;
        // A launcher that failed before the wrapper recorded itself ran nothing: the run is over (its reason in stderr.log).
        if (failed && !existsSync(runFile(runDir, 'wrapper'))) handle?.markExited();
      };
      let pid: number;
      try {
        const child = spawn(argv[0]!, argv.slice(1), { env: o.env, stdio: ['ignore', out, out], detached: true });
        child.on('exit', (code) => launcherEnded(code === 0));
        child.on('error', () => launcherEnded(false));
        if (child.pid === undefined) throw new Error(`could not start ${argv[0]} (engine.terminal.command in config.yml)`);
        pid = child.pid;
        child.unref();
      } finally {
        closeSync(out);
      }
      const since = o.clock.now();
      const starting = () => {
        if (!launcherDone) return true;
        if (failed || existsSync(runFile(runDir, 'wrapper'))) return false;
        return o.clock.now() - since < startMs;
      };
      handle = windowHandle(r, runDir, pid, { starting, running: () => (launcherDone ? null : pid) });
      return handle;
    },
    reattach: reattachRun,
    leftover: leftoverRun,
  };
}
