import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { tmuxArg } from '../../core/tmux-arg.js';
import type { RunHandle, Runner, StartRun } from './ports.js';
import { leftoverRun, reattachRun } from './runner.js';
import { alive, latestRunDir, readRunFile, startTicksOf, WindowRecord, writeRunFile } from './run-files.js';
import { prepareWindowRun, windowHandle, wrapperArgv } from './window-run.js';

/**
 * The tmux runner (`engine.runner: tmux` in config.yml): each run is a window `<route>/<node>` of the engine's own
 * tmux server and session, running the wrapper (musher/engine/run-window.ts), so a person can watch a node work with
 * `sleds attach <node>`. The server is the engine's alone (`tmux -S <stateDir>/tmux.sock`, started with a bare
 * environment), never the user's; every tmux call is an argument array (execFile, no shell), each argument passed
 * through core/tmux-arg.ts. A window stays after its run ends (remain-on-exit), showing how it ended, until the
 * node's next run replaces it.
 */

export const TMUX_SESSION = 'sleds-engine';

export interface TmuxRunnerOptions {
  tmuxBin: string;
  /** The engine's tmux socket. */
  socket: string;
  session?: string;
  /** How to start the sleds CLI (`[node, <cli main.js>]`): the wrapper is `<cli…> engine run-window <runDir>`. */
  cli: readonly string[];
  /** The tmux server's own environment when the engine starts it (a run's environment goes through env.json). */
  serverEnv: Record<string, string>;
}

/** The engine's tmux socket in its state dir. */
export const tmuxSocketIn = (stateDir: string): string => join(stateDir, 'tmux.sock');

/** The few variables a tmux server needs of its starter's environment (the runs' own go through env.json). */
export function tmuxServerEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of ['PATH', 'HOME', 'USER', 'LOGNAME', 'SHELL', 'LANG', 'LC_ALL', 'LC_CTYPE', 'TZ', 'TERM', 'NO_COLOR', 'TMUX_TMPDIR']) {
    const v = env[k];
    if (v !== undefined) out[k] = v;
  }
  return out;
}

export function tmuxRunner(o: TmuxRunnerOptions): Runner {
  const session = o.session ?? TMUX_SESSION;
  const tmux = (args: string[]): string => {
    try {
      return execFileSync(o.tmuxBin, ['-S', o.socket, ...args], { env: o.serverEnv, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 10_000 }).trim();
    } catch (e) {
      const err = e as { stderr?: string; message: string };
      throw new Error(`tmux ${args[0]}: ${(String(err.stderr ?? '').trim().split('\n')[0] ?? '') || err.message}`);
    }
  };
  const hasSession = (): boolean => {
    try {
      tmux(['has-session', '-t', `=${session}`]);
      return true;
    } catch {
      // No server yet, or no session on it: the caller starts one.
      return false;
    }
  };
  const open = (name: string, argv: string[]): { panePid: number; windowId: string } => {
    const command = ['--', ...argv.map(tmuxArg)];
    const format = ['-P', '-F', '#{pane_pid} #{window_id}'];
    let out: string;
    if (hasSession()) out = tmux(['new-window', '-d', '-t', `=${session}:`, '-n', name, ...format, ...command]);
    else {
      // The server's windows stay when their program ends, so a run's last lines can be read after it.
      out = tmux(['start-server', ';', 'set-option', '-g', 'remain-on-exit', 'on', ';', 'new-session', '-d', '-s', session, '-n', name, ...format, ...command]);
    }
    const m = /^(\d+) (@\d+)$/.exec(out);
    if (!m) throw new Error(`tmux new-window: unexpected answer ${JSON.stringify(out.slice(0, 80))}`);
    return { panePid: Number(m[1]), windowId: m[2]! };
  };
  /** The node's previous window, once its program has ended (the same pane: its pid matches). */
  const closePrevious = (prev: string): void => {
    const w = readRunFile(prev, 'window', WindowRecord);
    if (w === null || w.socket !== o.socket) return;
    try {
      const [pid, dead] = tmux(['display-message', '-p', '-t', w.windowId, '#{pane_pid} #{pane_dead}']).split(' ');
      if (Number(pid) === w.panePid && dead === '1') tmux(['kill-window', '-t', w.windowId]);
    } catch {
      // Gone already (the server restarted, or a person closed it).
    }
  };

  return {
    start(r: StartRun): RunHandle {
      const before = latestRunDir(r.nodeDir);
      const { runDir, label } = prepareWindowRun(r, 'tmux');
      const { panePid, windowId } = open(label, wrapperArgv(o.cli, runDir));
      const paneStartTicks = startTicksOf(panePid);
      writeRunFile(runDir, 'window', { session, windowId, socket: o.socket, panePid, paneStartTicks });
      if (before !== null) closePrevious(before);
      const paneAlive = () => alive(panePid, paneStartTicks);
      return windowHandle(r, runDir, panePid, { starting: paneAlive, running: () => (paneAlive() ? panePid : null) });
    },
    reattach: reattachRun,
    leftover: leftoverRun,
  };
}
