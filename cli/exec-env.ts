import { spawn } from 'node:child_process';
import { closeSync, constants, fstatSync, openSync, readFileSync, unlinkSync } from 'node:fs';
import { constants as osConstants } from 'node:os';
import { decodeEnvFile } from '../core/exec-env-file.js';

/**
 * `sleds exec-env <file> -- <program> [args…]`: what a pane that musher restarts runs (harnesses/resume-plan.ts,
 * PaneLauncher). It reads the environment musher wrote to `file` (0600, ours, not a symlink), removes the file, and
 * starts `program` with the variables added — so the gateway's token is in no argv any local user can read with
 * `ps` or /proc/<pid>/cmdline, and at rest only until the pane starts. Node 20 has no execve: the wrapper stays as
 * the harness's parent, passes signals on, and exits with its code.
 *
 * Loads node builtins and one pure core module only: no SQLite, no ink, no MCP.
 */
export async function runExecEnv(args: string[]): Promise<number> {
  const [file, dashes, program, ...rest] = args;
  if (!file || dashes !== '--' || !program) {
    process.stderr.write('sleds: exec-env takes <file> -- <program> [args…] (musher runs it in a pane it restarts)\n');
    return 2;
  }
  const read = readEnvFile(file);
  if ('error' in read) {
    process.stderr.write(`sleds: exec-env: ${read.error}\n`);
    return 1;
  }
  return runChild(program, rest, read.env);
}

function readEnvFile(file: string): { env: Record<string, string> } | { error: string } {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { error: `${file} is gone (it is read once) — take the exit at the wall again` };
    if (code === 'ELOOP') return { error: `${file} is a symbolic link — refusing it` };
    return { error: `cannot open ${file}: ${(e as Error).message}` };
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return { error: `${file} is not a file — refusing it` };
    if (typeof process.getuid === 'function' && st.uid !== process.getuid()) return { error: `${file} belongs to another user — refusing it` };
    // Ours: removed before anything else, whatever it holds, so the token does not outlive this start.
    unlinkSync(file);
    if ((st.mode & 0o077) !== 0) return { error: `${file} could be read by other users (mode ${(st.mode & 0o777).toString(8)}) — refusing it` };
    const decoded = decodeEnvFile(readFileSync(fd, 'utf8'));
    return 'error' in decoded ? { error: `${file} ${decoded.error}` } : decoded;
  } finally {
    closeSync(fd);
  }
}

/**
 * Signals: the terminal sends Ctrl-C (SIGINT) and Ctrl-\ (SIGQUIT) to the whole foreground process group, so the
 * harness gets them itself; the wrapper only must not die of them (passing them on would deliver them twice — two
 * Ctrl-C quit Claude Code). Signals aimed at the wrapper alone (kill, the hangup of a closed pane) are passed on.
 */
const LEFT_TO_THE_GROUP = ['SIGINT', 'SIGQUIT'] as const;
const PASSED_ON = ['SIGTERM', 'SIGHUP', 'SIGUSR1', 'SIGUSR2'] as const;

function runChild(program: string, args: string[], env: Record<string, string>): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(program, args, { stdio: 'inherit', env: { ...process.env, ...env } });
    const handlers: Array<[NodeJS.Signals, () => void]> = [
      ...LEFT_TO_THE_GROUP.map((s): [NodeJS.Signals, () => void] => [s, () => undefined]),
      ...PASSED_ON.map((s): [NodeJS.Signals, () => void] => [s, () => void child.kill(s)]),
    ];
    for (const [s, h] of handlers) process.on(s, h);
    const done = (): void => {
      for (const [s, h] of handlers) process.off(s, h);
    };
    child.on('error', (e) => {
      done();
      process.stderr.write(`sleds: exec-env: could not start ${program}: ${e.message}\n`);
      resolve(127);
    });
    child.on('exit', (code, signal) => {
      done();
      if (signal) {
        // Ended by a signal: end the same way, so whoever waits on the pane sees what the harness died of.
        process.kill(process.pid, signal);
        resolve(128 + signalNumber(signal));
        return;
      }
      resolve(code ?? 1);
    });
  });
}

function signalNumber(signal: NodeJS.Signals): number {
  return (osConstants.signals as Record<string, number>)[signal] ?? 1;
}
