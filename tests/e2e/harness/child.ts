/**
 * What claude-env.ts and codex-env.ts share: a throwaway folder, the clean environment a harness binary runs in, and
 * running it to its end with its output collected.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, realpath } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

/** A fresh empty folder under the temp dir (mkdtemp, realpath'd). */
export async function makeRealTempDir(prefix: string): Promise<string> {
  return realpath(await mkdtemp(path.join(os.tmpdir(), prefix)));
}

/**
 * The base environment: PATH, TERM and LANG from the parent (with defaults), HOME = `home`, and never a variable
 * whose name starts with one of `scrubbedPrefixes` (the harness's own: the test runner itself may have them).
 */
export function cleanEnv(home: string, scrubbedPrefixes: readonly string[]): Record<string, string> {
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
    HOME: home,
    TERM: process.env.TERM && process.env.TERM !== 'dumb' ? process.env.TERM : 'xterm-256color',
    LANG: process.env.LANG && /utf-?8/i.test(process.env.LANG) ? process.env.LANG : 'C.UTF-8',
  };
  // Built from scratch, so nothing else is inherited; the check guards the four copied names anyway.
  for (const k of Object.keys(env)) {
    if (scrubbedPrefixes.some((p) => k.toUpperCase().startsWith(p))) delete env[k];
  }
  return env;
}

export interface RunOptions {
  env: Record<string, string>;
  cwd: string;
  /** Kill the process (SIGKILL) after this long; default 60 s. */
  timeoutMs?: number;
  /** Written to stdin (default: stdin is /dev/null). */
  input?: string;
}

export interface RunResult {
  stdout: string;
  stderr: string;
  /** Exit code, or null if killed by a signal. */
  code: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  durationMs: number;
}

/** Runs `file argv…` to its end, collecting stdout and stderr. Never rejects for a non-zero exit. */
export function runToEnd(file: string, argv: string[], opts: RunOptions): Promise<RunResult> {
  const started = Date.now();
  return new Promise((resolveRun, reject) => {
    const child = spawn(file, argv, { cwd: opts.cwd, env: opts.env, stdio: [opts.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    if (opts.input !== undefined) {
      child.stdin!.on('error', () => undefined);
      child.stdin!.end(opts.input);
    }
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, opts.timeoutMs ?? 60_000);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolveRun({ stdout, stderr, code, signal, timedOut, durationMs: Date.now() - started });
    });
  });
}
