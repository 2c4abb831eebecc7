import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { HarnessCommand } from '../core/picker/row.js';
import { tmuxArg } from '../core/tmux-arg.js';
import { cdAndRun, shellLine } from '../core/shell-quote.js';

/**
 * A Dispatch or Switch opened in a new tmux window, watched for its first seconds: a harness that dies as it starts
 * (a model it refuses, no login) would otherwise close its window before anyone reads why. The command runs under a
 * small node wrapper (argv only, no shell) that copies its stderr to a file and writes its exit status next to it;
 * if that status appears within the watch, the answer is the exit code and the last lines of stderr.
 */

/** How long a dispatched process is watched: dying within this is "as it started". */
export const DISPATCH_WATCH_MS = 3_000;
/** How many lines of its stderr the answer quotes. */
const LAST_LINES = 6;

/** Runs argv[3…] with stderr copied to argv[1] (and still shown), then writes {code, signal} to argv[2]. */
const WRAPPER = `
const { spawn } = require('node:child_process');
const { createWriteStream, existsSync, writeFileSync } = require('node:fs');
const [errFile, statusFile, program, ...args] = process.argv.slice(1);
const err = createWriteStream(errFile, { mode: 0o600 });
// The terminal's ^C reaches the harness too: it decides, and this wrapper ends when it does.
for (const s of ['SIGINT', 'SIGQUIT', 'SIGTSTP']) process.on(s, () => {});
const child = spawn(program, args, { stdio: ['inherit', 'inherit', 'pipe'] });
child.stderr.on('data', (b) => { process.stderr.write(b); err.write(b); });
// The status only while someone watches (the stderr file is removed once the watch is over).
const done = (code, signal) => err.end(() => { if (existsSync(errFile)) writeFileSync(statusFile, JSON.stringify({ code, signal })); process.exit(code ?? 1); });
child.on('error', (e) => { err.write(String(e.message) + '\\n'); done(127, null); });
child.on('close', (code, signal) => done(code, signal));
`;

export interface WatchDeps {
  tmux: string;
  /** Where the stderr and status files go (the state dir's dispatch/ folder). */
  dir: string;
  now(): number;
  sleep(ms: number): Promise<void>;
  watchMs?: number;
}

export interface Watched {
  ok: boolean;
  line: string;
}

export async function openWatched(cmd: HarnessCommand, d: WatchDeps): Promise<Watched> {
  mkdirSync(d.dir, { recursive: true, mode: 0o700 });
  const stem = join(d.dir, randomBytes(6).toString('hex'));
  const [errFile, statusFile] = [`${stem}.stderr`, `${stem}.status`];
  const name = basename(cmd.argv[0]!);
  const cwd = cmd.cwd ? ['-c', tmuxArg(cmd.cwd.replace(/#/g, '##'))] : [];
  const argv = [process.execPath, '-e', WRAPPER, errFile, statusFile, ...cmd.argv];
  const opened = await new Promise<string | null>((resolve) => {
    execFile(d.tmux, ['new-window', '-n', tmuxArg(name), ...cwd, '--', ...argv.map(tmuxArg)], { timeout: 10_000 }, (err, _out, stderr) => {
      resolve(err ? `tmux could not open a window: ${(stderr.trim().split('\n')[0] ?? '') || err.message}` : null);
    });
  });
  if (opened) return { ok: false, line: opened };
  const deadline = d.now() + (d.watchMs ?? DISPATCH_WATCH_MS);
  try {
    for (;;) {
      const status = readStatus(statusFile);
      if (status) return { ok: false, line: diedWords(name, status, lastLines(errFile), cmd.cwd ? cdAndRun(cmd.cwd, cmd.argv) : shellLine(cmd.argv)) };
      if (d.now() >= deadline) return { ok: true, line: 'opened in a new tmux window' };
      await d.sleep(100);
    }
  } finally {
    // What the process prints later is its window's business; the files were only for its first seconds.
    rmSync(errFile, { force: true });
    rmSync(statusFile, { force: true });
  }
}

function readStatus(file: string): { code: number | null; signal: string | null } | null {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as { code: number | null; signal: string | null };
  } catch {
    // No status file yet (or half-written): the program has not ended.
    return null;
  }
}

function lastLines(file: string): string[] {
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    // No output file: nothing to show.
    return [];
  }
  // eslint-disable-next-line no-control-regex
  const plain = text.replace(/\u001b\[[0-9;?]*[A-Za-z]/g, '');
  return plain.split('\n').map((l) => l.trimEnd()).filter((l) => l !== '').slice(-LAST_LINES);
}

/**
 * "claude exited with code 3 as it started, and its window closed. Its last lines:\n  …"; when it said nothing on
 * stderr (Claude Code prints "Unable to connect…" on its screen, measured), the command to run to see it.
 */
export function diedWords(name: string, status: { code: number | null; signal: string | null }, lines: readonly string[], command: string): string {
  const how = status.signal ? `was ended by ${status.signal}` : `exited with code ${status.code ?? '?'}`;
  const tail = lines.length > 0 ? ` Its last lines:\n${lines.map((l) => `  ${l}`).join('\n')}` : ` It printed nothing on stderr; run it in a terminal to see what it showed: ${command}`;
  return `${name} ${how} as it started, and its window closed.${tail}`;
}
