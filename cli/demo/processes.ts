import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { cliCommand, packageRoot } from '../../musher/package-root.js';

/**
 * The real pieces the demo drives, each a child process over stdin and stdout, as Claude Code and a terminal run
 * them: the `sleds` CLI (the one the demo runs in: dist/cli/main.js, or cli/main.ts under tsx from source), the
 * hook bundle (dist/hook.cjs) and the statusline bundle (dist/statusline.cjs). Argument arrays only, never a shell.
 */
const DIST = join(packageRoot(), 'dist');
/** node and its arguments up to the subcommand. */
export const CLI_COMMAND: readonly string[] = cliCommand();
export const HOOK_BUNDLE = join(DIST, 'hook.cjs');
export const STATUSLINE_BUNDLE = join(DIST, 'statusline.cjs');

export interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  env: NodeJS.ProcessEnv;
  cwd?: string;
  input?: string;
  timeoutMs?: number;
}

export function run(file: string, args: string[], opts: RunOptions): Promise<Ran> {
  return new Promise((resolve) => {
    const child = execFile(file, args, { env: opts.env, cwd: opts.cwd, timeout: opts.timeoutMs ?? 60_000, maxBuffer: 8 * 1024 * 1024 }, (err, stdout, stderr) => {
      const why = (err as { code?: unknown } | null)?.code;
      if (why === 'ENOENT') return resolve({ code: 127, stdout, stderr: `${file} is not on PATH` });
      resolve({ code: err ? (typeof why === 'number' ? why : 1) : 0, stdout, stderr });
    });
    // A child may exit before reading its stdin (git does): that is not an error here.
    child.stdin?.on('error', () => undefined);
    child.stdin?.end(opts.input ?? '');
  });
}

/** `sleds <args>`, failing with the command's own one-line error when it exits non-zero. */
export async function sleds(args: string[], opts: RunOptions): Promise<string> {
  const r = await run(CLI_COMMAND[0]!, [...CLI_COMMAND.slice(1), ...args], opts);
  if (r.code !== 0) throw new Error(`'sleds ${args.join(' ')}' exited ${r.code}: ${lastLine(r.stderr || r.stdout)}`);
  return r.stdout;
}

/** `sleds <args> --json`, parsed. */
export async function sledsJson<T>(args: string[], opts: RunOptions): Promise<T> {
  return JSON.parse(await sleds([...args, '--json'], opts)) as T;
}

/** One hook event through the hook bundle, as Claude Code runs it; its stdout (the answer, if any). */
export async function hook(event: string, payload: Record<string, unknown>, opts: RunOptions): Promise<string> {
  const r = await run(process.execPath, [HOOK_BUNDLE, event], { ...opts, input: JSON.stringify({ ...payload, hook_event_name: event }) });
  if (r.code !== 0) throw new Error(`the ${event} hook exited ${r.code}: ${lastLine(r.stderr)}`);
  return r.stdout;
}

/** One statusline render through the statusline bundle; the lines Claude Code would show. */
export async function statusline(payload: Record<string, unknown>, opts: RunOptions): Promise<string> {
  const r = await run(process.execPath, [STATUSLINE_BUNDLE], { ...opts, input: JSON.stringify(payload) });
  return r.stdout.replace(/\n+$/, '');
}

export async function git(cwd: string, args: string[], env: NodeJS.ProcessEnv, who = { name: 'Jake', email: 'jake@example.invalid' }): Promise<string> {
  const r = await run('git', ['-c', `user.name=${who.name}`, '-c', `user.email=${who.email}`, '-c', 'init.defaultBranch=main', ...args], { env, cwd });
  if (r.code === 127) throw new Error('git is not on PATH: the hand-off travels over a git remote — install git, then run sleds demo again');
  if (r.code !== 0) throw new Error(`'git ${args.join(' ')}' exited ${r.code}: ${lastLine(r.stderr)}`);
  return r.stdout;
}

function lastLine(text: string): string {
  const lines = text.trim().split('\n');
  return lines[lines.length - 1] ?? '';
}
