import { spawn } from 'node:child_process';

/** A harness binary run with an argument array (no shell), its output kept, killed after a deadline. */

type Env = Record<string, string | undefined>;

export interface RunResult {
  ok: boolean;
  code: number | null;
  stdout: string;
  stderr: string;
  /** One line saying what went wrong, when !ok. */
  error: string;
}

export const ANSI = /\u001b\[[0-9;?]*[A-Za-z]|\u001b\][^\u0007]*\u0007/g;

/** The last meaningful line of a command's output, without colours or spinners. */
export function lastLine(text: string): string {
  const lines = text
    .replace(ANSI, '')
    .split(/[\r\n]+/)
    .map((l) => l.trim())
    .filter(Boolean);
  const line = lines[lines.length - 1] ?? '';
  return line.length > 200 ? `${line.slice(0, 199)}…` : line;
}

export function runFile(bin: string, args: string[], env: Env, timeoutMs = 60_000): Promise<RunResult> {
  return new Promise((resolveRun) => {
    let stdout = '';
    let stderr = '';
    let settled = false;
    const done = (r: Omit<RunResult, 'stdout' | 'stderr'>): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolveRun({ ...r, stdout, stderr });
    };
    let child: ReturnType<typeof spawn>;
    try {
      child = spawn(bin, args, { env: env as NodeJS.ProcessEnv, stdio: ['ignore', 'pipe', 'pipe'], shell: false });
    } catch (e) {
      resolveRun({ ok: false, code: null, stdout, stderr, error: (e as Error).message });
      return;
    }
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      done({ ok: false, code: null, error: `timed out after ${Math.round(timeoutMs / 1000)} s` });
    }, timeoutMs);
    child.stdout!.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr!.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    child.on('error', (e: NodeJS.ErrnoException) => done({ ok: false, code: null, error: e.code ?? e.message }));
    child.on('close', (code, signal) => {
      if (code === 0) done({ ok: true, code, error: '' });
      else done({ ok: false, code, error: lastLine(stderr) || lastLine(stdout) || (signal ? `killed by ${signal}` : `exit code ${code}`) });
    });
  });
}

