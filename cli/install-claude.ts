import { spawn } from 'node:child_process';
import type { BinaryLookup } from '../musher/find-binary.js';
import { MARKETPLACE_NAME, PLUGIN_ID } from './claude-settings.js';

/**
 * Finding and driving the `claude` CLI: always an absolute path run with an argument array (no shell), with the
 * user's own environment (CLAUDE_CONFIG_DIR decides which config folder it writes).
 */

type Env = Record<string, string | undefined>;

export type ClaudeLookup = BinaryLookup;

export { findClaude } from '../musher/config/cli-settings.js';

export interface RunResult {
  ok: boolean;
  code: number | null;
  stdout: string;
  stderr: string;
  /** One line saying what went wrong, when !ok. */
  error: string;
}

const ANSI = /\u001b\[[0-9;?]*[A-Za-z]|\u001b\][^\u0007]*\u0007/g;

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

export async function claudeVersion(bin: string, env: Env): Promise<string | null> {
  const r = await runFile(bin, ['--version'], env, 30_000);
  if (!r.ok) return null;
  const m = /\d+\.\d+\.\d+\S*/.exec(r.stdout);
  return m ? m[0] : lastLine(r.stdout) || null;
}

/** The JSON array in a command's stdout, skipping any notice lines printed before it. */
function parseJsonArray(text: string): unknown[] | null {
  const clean = text.replace(ANSI, '');
  const end = clean.lastIndexOf(']');
  for (let start = clean.indexOf('['); start >= 0 && start < end; start = clean.indexOf('\n[', start + 1) + 1 || -1) {
    try {
      const v: unknown = JSON.parse(clean.slice(start, end + 1));
      if (Array.isArray(v)) return v;
    } catch {
      // a notice that happens to hold a '[': try the next line that starts with one
    }
  }
  return null;
}

export interface InstalledPlugin {
  id: string;
  scope: string;
  enabled: boolean;
  readFromFolder: string | null;
}

export interface KnownMarketplace {
  name: string;
  path: string | null;
}

/** `claude plugin list --json` (read-only): our plugin's user-scope entry, or null; an error line if it failed. */
export async function findInstalledPlugin(bin: string, env: Env): Promise<{ plugin: InstalledPlugin | null; error: string | null }> {
  const r = await runFile(bin, ['plugin', 'list', '--json'], env);
  const list = r.ok ? parseJsonArray(r.stdout) : null;
  if (!list) return { plugin: null, error: `claude plugin list failed: ${r.error || 'unreadable output'}` };
  for (const p of list as Array<Record<string, unknown>>) {
    if (p?.id !== PLUGIN_ID) continue;
    if (p.scope !== undefined && p.scope !== 'user') continue;
    return {
      plugin: {
        id: PLUGIN_ID,
        scope: String(p.scope ?? 'user'),
        enabled: p.enabled === true,
        readFromFolder: typeof p.readFromFolder === 'string' ? p.readFromFolder : null,
      },
      error: null,
    };
  }
  return { plugin: null, error: null };
}

/** `claude plugin marketplace list --json` (read-only): the sleds-local entry, or null. */
export async function findMarketplace(bin: string, env: Env): Promise<{ marketplace: KnownMarketplace | null; error: string | null }> {
  const r = await runFile(bin, ['plugin', 'marketplace', 'list', '--json'], env);
  const list = r.ok ? parseJsonArray(r.stdout) : null;
  if (!list) return { marketplace: null, error: `claude plugin marketplace list failed: ${r.error || 'unreadable output'}` };
  for (const m of list as Array<Record<string, unknown>>) {
    if (m?.name !== MARKETPLACE_NAME) continue;
    const path = typeof m.path === 'string' ? m.path : typeof m.installLocation === 'string' ? m.installLocation : null;
    return { marketplace: { name: MARKETPLACE_NAME, path }, error: null };
  }
  return { marketplace: null, error: null };
}
