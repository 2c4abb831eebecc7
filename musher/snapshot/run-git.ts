import { spawn } from 'node:child_process';

export interface GitResult {
  code: number;
  /** stdout up to `keepBytes`; `stdoutBytes` says how much there was in all. */
  stdout: Buffer;
  stdoutBytes: number;
  stderr: string;
}

export interface GitRunOptions {
  cwd: string;
  /** stdout beyond this is counted, not kept (a patch over the cap is measured without holding it). */
  keepBytes?: number;
  timeoutMs?: number;
}

const DEFAULT_KEEP = 64 * 1024 * 1024;
const DEFAULT_TIMEOUT_MS = 60_000;

/**
 * The environment git runs in: musher's, without the GIT_* variables that would point it at another repository or
 * index, with optional locks off (a snapshot must not take index.lock from the session working in that tree) and
 * messages in English, so one of them quoted in a note reads the same for everyone.
 */
function gitEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('GIT_')) env[k] = v;
  env.GIT_OPTIONAL_LOCKS = '0';
  env.GIT_TERMINAL_PROMPT = '0';
  env.LC_ALL = 'C';
  return env;
}

/** Runs `git <args>` with an argument array (never a shell). Rejects only when git cannot be started at all. */
export function runGit(args: string[], opts: GitRunOptions): Promise<GitResult> {
  const keep = opts.keepBytes ?? DEFAULT_KEEP;
  return new Promise((resolve, reject) => {
    const child = spawn('git', args, { cwd: opts.cwd, env: gitEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    const chunks: Buffer[] = [];
    let kept = 0;
    let total = 0;
    let stderr = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? DEFAULT_TIMEOUT_MS);
    child.stdout.on('data', (c: Buffer) => {
      total += c.length;
      if (kept < keep) {
        const part = kept + c.length <= keep ? c : c.subarray(0, keep - kept);
        chunks.push(part);
        kept += part.length;
      }
    });
    child.stderr.on('data', (c: Buffer) => {
      if (stderr.length < 4096) stderr += c.toString('utf8');
    });
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code: code ?? (signal ? 128 : 1), stdout: Buffer.concat(chunks), stdoutBytes: total, stderr: stderr.trim() });
    });
  });
}

/** git's stdout as text, trimmed; null when git failed. */
export async function gitText(args: string[], cwd: string): Promise<string | null> {
  const r = await runGit(args, { cwd });
  return r.code === 0 ? r.stdout.toString('utf8').trim() : null;
}
