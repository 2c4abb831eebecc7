import { spawn } from 'node:child_process';
import { asUser } from '../user-umask.js';

/**
 * git with stdin and extra environment, which the hand-off's plumbing needs (`hash-object --stdin`, `mktree`, a
 * temporary `GIT_INDEX_FILE`) and musher/snapshot/run-git.ts does not offer. Same environment rules as there: the
 * caller's GIT_* variables are dropped (they could point git at another repository or index), no prompts, English.
 */
export interface GitExecResult {
  code: number;
  stdout: Buffer;
  stderr: string;
  /** True when stdout was cut at `maxStdoutBytes` (git was stopped there). */
  truncated?: boolean;
}

export interface GitExecOptions {
  cwd: string;
  input?: Buffer | string;
  env?: Record<string, string>;
  timeoutMs?: number;
  /** Keep at most this much of stdout and stop git once it has written more (reading a header, not a whole blob). */
  maxStdoutBytes?: number;
}

function env(extra: Record<string, string> | undefined): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  // The ssh choice is kept: a push to the remote needs the user's own way of reaching it.
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('GIT_') || k === 'GIT_SSH' || k === 'GIT_SSH_COMMAND') out[k] = v;
  out.GIT_TERMINAL_PROMPT = '0';
  out.LC_ALL = 'C';
  return { ...out, ...extra };
}

export function gitExec(args: string[], opts: GitExecOptions): Promise<GitExecResult> {
  return new Promise((resolve, reject) => {
    // The user's umask: a picked-up worktree's files are theirs as git would make them, not musher's 0600.
    const child = asUser(() => spawn('git', args, { cwd: opts.cwd, env: env(opts.env), stdio: ['pipe', 'pipe', 'pipe'] }));
    const chunks: Buffer[] = [];
    let kept = 0;
    let truncated = false;
    let stderr = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 120_000);
    child.stdout.on('data', (c: Buffer) => {
      if (truncated) return;
      const max = opts.maxStdoutBytes ?? Number.POSITIVE_INFINITY;
      if (kept + c.length > max) {
        chunks.push(c.subarray(0, max - kept));
        kept = max;
        truncated = true;
        child.kill('SIGKILL');
        return;
      }
      chunks.push(c);
      kept += c.length;
    });
    child.stderr.on('data', (c: Buffer) => {
      if (stderr.length < 8192) stderr += c.toString('utf8');
    });
    child.stdin.on('error', () => undefined); // git may exit before reading all of it; its exit code says why
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code: truncated ? 0 : (code ?? (signal ? 128 : 1)), stdout: Buffer.concat(chunks), stderr: stderr.trim(), truncated });
    });
    child.stdin.end(opts.input ?? '');
  });
}

/** The first line of git's complaint, for a one-line error. */
export function firstLine(stderr: string): string {
  const lines = stderr.split('\n').map((l) => l.trim()).filter((l) => l.length > 0);
  return (lines.find((l) => /^(fatal|error):/.test(l)) ?? lines[0] ?? 'no message').replace(/^(fatal|error):\s*/, '');
}

/** Runs git and returns stdout, or throws `<what>: <git's first line>`. */
export async function gitOk(args: string[], opts: GitExecOptions, what: string): Promise<Buffer> {
  const r = await gitExec(args, opts);
  if (r.code !== 0) throw new Error(`${what}: ${firstLine(r.stderr)}`);
  return r.stdout;
}
