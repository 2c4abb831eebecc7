/**
 * Runs an interactive program in a detached tmux session on a private socket,
 * so a test can type into it and read its screen.
 *
 *   tmux -L <unique> -f /dev/null new-session -d -x 160 -y 40 -e K=V … -- <argv…>
 *
 * The tmux server is started with exactly the given environment (and every
 * variable is also passed with -e), so nothing from the test runner leaks in.
 * Inside the pane tmux itself adds TMUX and TMUX_PANE; TERM is the given one.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { promisify } from 'node:util';

import { waitFor } from './wait.js';

const execFileP = promisify(execFile);

export const TMUX_BIN = process.env.SLEDS_E2E_TMUX ?? '/usr/bin/tmux';

export interface StartTmuxOptions {
  /** Program and arguments, run directly (no shell). */
  argv: string[];
  /** The complete environment of the program (e.g. ClaudeHome.env). */
  env: Record<string, string>;
  cwd: string;
  /** Pane size; default 160x40. */
  width?: number;
  height?: number;
}

export interface TmuxSession {
  /** The private socket name (tmux -L). */
  socket: string;
  /** PID of the program in the pane. */
  panePid: number;
  /** Target for tmux commands ("main:0.0"). */
  target: string;
  /** Sends tmux key names or strings as keys, e.g. sendKeys('Enter'), sendKeys('C-c'). */
  sendKeys(...keys: string[]): Promise<void>;
  /** Types `text` literally (send-keys -l). */
  sendText(text: string): Promise<void>;
  /** The visible screen (capture-pane -p; -e keeps escape sequences). */
  capture(withEscapes?: boolean): Promise<string>;
  /**
   * Polls the screen every ~100 ms until `predicate(screen)` is true and returns
   * that screen; throws after `timeoutMs` with the last screen in the message.
   */
  waitForScreen(predicate: (screen: string) => boolean, timeoutMs?: number, description?: string): Promise<string>;
  /** Waits for `text` to appear on screen. */
  waitForText(text: string, timeoutMs?: number): Promise<string>;
  /** True once the program has exited (the pane is kept open after exit). */
  isDead(): Promise<boolean>;
  /** Exit status of the program once dead, else null. */
  exitStatus(): Promise<number | null>;
  /**
   * Ends the program (SIGTERM, then SIGKILL after 5 s), waits until it has
   * exited, then kills the tmux server and removes its socket. Safe to call twice.
   */
  kill(): Promise<void>;
}

export async function startTmux(opts: StartTmuxOptions): Promise<TmuxSession> {
  if (opts.argv.length === 0) throw new Error('startTmux: argv is empty');
  const socket = `sleds-e2e-${process.pid}-${randomBytes(6).toString('hex')}`;
  const session = 'main';
  const target = `${session}:0.0`;
  const env = opts.env;

  const tmux = async (args: string[]): Promise<string> => {
    const { stdout } = await execFileP(TMUX_BIN, ['-L', socket, '-f', '/dev/null', ...args], {
      env,
      maxBuffer: 16 * 1024 * 1024,
    });
    return stdout;
  };

  const envArgs = Object.entries(env).flatMap(([k, v]) => ['-e', `${k}=${v}`]);
  // Given a single argument tmux hands the command to `sh -c`; given two or more
  // it execs them directly. A lone program is therefore wrapped in env(1) so no
  // shell ever parses it.
  const argv = opts.argv.length === 1 ? ['/usr/bin/env', opts.argv[0]!] : opts.argv;
  await tmux([
    'start-server',
    ';',
    // Keep the pane (and its last screen) after the program exits, for debugging.
    'set-option', '-g', 'remain-on-exit', 'on',
    ';',
    // Claude Code otherwise prints a "tmux focus-events off" hint on screen.
    'set-option', '-g', 'focus-events', 'on',
    ';',
    'new-session', '-d', '-s', session,
    '-x', String(opts.width ?? 160), '-y', String(opts.height ?? 40),
    '-c', opts.cwd,
    ...envArgs,
    '--',
    ...argv,
  ]);

  let info: string;
  try {
    info = await tmux(['display-message', '-p', '-t', target, '#{pane_pid}\t#{socket_path}']);
  } catch (err) {
    await tmux(['kill-server']).catch(() => undefined);
    throw err;
  }
  const [panePidText, socketPath] = info.trim().split('\t');
  const panePid = Number(panePidText);

  let killed = false;
  const capture = (withEscapes = false) => tmux(['capture-pane', '-p', ...(withEscapes ? ['-e'] : []), '-t', target]);
  const display = async (fmt: string) => (await tmux(['display-message', '-p', '-t', target, fmt])).trim();

  const self: TmuxSession = {
    socket,
    panePid,
    target,
    async sendKeys(...keys: string[]) {
      await tmux(['send-keys', '-t', target, ...keys]);
    },
    async sendText(text: string) {
      await tmux(['send-keys', '-t', target, '-l', text]);
    },
    capture,
    async waitForScreen(predicate, timeoutMs = 15_000, description = 'screen condition') {
      let last = '';
      return waitFor(
        async () => {
          last = await capture();
          return predicate(last) ? last : undefined;
        },
        {
          timeoutMs,
          intervalMs: 100,
          description,
          onTimeout: () => `last screen:\n${'-'.repeat(40)}\n${last}\n${'-'.repeat(40)}`,
        },
      );
    },
    waitForText(text: string, timeoutMs?: number) {
      return self.waitForScreen((s) => s.includes(text), timeoutMs, JSON.stringify(text));
    },
    async isDead() {
      return (await display('#{pane_dead}')) === '1';
    },
    async exitStatus() {
      const [dead, status] = (await display('#{pane_dead} #{pane_dead_status}')).split(' ');
      return dead === '1' && status ? Number(status) : null;
    },
    async kill() {
      if (killed) return;
      killed = true;
      // Stop the program first and wait until tmux has reaped it, so it cannot
      // write into its (about to be removed) HOME after kill() resolves.
      // remain-on-exit keeps the pane, so #{pane_dead} reliably says when.
      try {
        for (const [signal, waitMs] of [['SIGTERM', 5_000], ['SIGKILL', 5_000]] as const) {
          if (await self.isDead()) break;
          try {
            process.kill(panePid, signal);
          } catch {
            break; // no such process
          }
          try {
            await waitFor(() => self.isDead(), { timeoutMs: waitMs, intervalMs: 50 });
            break;
          } catch {
            // escalate
          }
        }
      } catch {
        // the server is already gone
      }
      try {
        await tmux(['kill-server']);
      } catch {
        // already gone
      }
      // tmux leaves its socket file behind.
      if (socketPath) await rm(socketPath, { force: true });
    },
  };
  return self;
}
