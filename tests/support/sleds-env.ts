import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { waitFor as pollUntil } from '../e2e/harness/wait.js';

/**
 * A private sleds world for one test: its own HOME, SLEDS_HOME and Claude config dir, and the CLI run from the
 * sources (cli/main.ts under tsx), so a stale dist/ cannot pass a test; the musher that CLI starts runs from the
 * sources too (musher/package-root.ts runningCliEntry). The hot-path bundles (dist/hook.cjs, dist/statusline.cjs)
 * and what `sleds install` wires into the harnesses (dist/cli/main.js) stay the built ones: they are what ships.
 */
export const REPO_ROOT = resolve(import.meta.dirname, '..', '..');
/**
 * The CLI the tests run: the sources as they are now, compiled file by file before the run
 * (tests/support/source-build.ts); its musher runs from the same build.
 */
function sourceBuild(): string {
  const dir = process.env.SLEDS_TEST_SOURCE_BUILD;
  if (!dir) throw new Error('tests/support/source-build.ts did not run (vitest.config.ts globalSetup): no fresh build of the sources');
  return dir;
}
export const CLI_SOURCE = join(sourceBuild(), 'cli', 'main.js');
/** node's arguments before a subcommand: `spawn(process.execPath, [...CLI, 'status'])`. */
export const CLI: readonly string[] = [CLI_SOURCE];
/** The compiled CLI: what `sleds install` links as the `sleds` command and writes into the harnesses' settings. */
export const SHIPPED_CLI = join(REPO_ROOT, 'dist', 'cli', 'main.js');

export interface SledsWorld {
  root: string;
  home: string;
  sledsHome: string;
  claudeDir: string;
  env: NodeJS.ProcessEnv;
  socket: string;
  logFile: string;
  spoolDir: string;
}

export function makeWorld(extraEnv: NodeJS.ProcessEnv = {}): SledsWorld {
  // Short paths: a Unix socket path must stay under ~100 bytes.
  const root = mkdtempSync(join(tmpdir(), 'sl-'));
  const home = join(root, 'h');
  const sledsHome = join(root, 's');
  const claudeDir = join(home, '.claude');
  mkdirSync(join(claudeDir, 'projects'), { recursive: true });
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: home, SLEDS_HOME: sledsHome, TZ: 'UTC', LANG: 'C.UTF-8', ...extraEnv };
  return {
    root,
    home,
    sledsHome,
    claudeDir,
    env,
    socket: join(sledsHome, 'run', 'musher.sock'),
    logFile: join(sledsHome, 'state', 'musher.log'),
    spoolDir: join(sledsHome, 'state', 'spool'),
  };
}

/** A sleds world inside an existing HOME (the e2e tests' Claude home), sharing its environment. */
export function worldIn(home: string, env: NodeJS.ProcessEnv): SledsWorld {
  const sledsHome = env.SLEDS_HOME!;
  return {
    root: sledsHome,
    home,
    sledsHome,
    claudeDir: join(home, '.claude'),
    env,
    socket: join(sledsHome, 'run', 'musher.sock'),
    logFile: join(sledsHome, 'state', 'musher.log'),
    spoolDir: join(sledsHome, 'state', 'spool'),
  };
}

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `sleds <args>` in the world; `cwd` for the commands that read the current folder (pickup, estimate). */
export function sleds(world: SledsWorld, args: string[], input?: string, env: NodeJS.ProcessEnv = {}, cwd?: string): Promise<RunResult> {
  return new Promise((resolveRun) => {
    const child = execFile(process.execPath, [...CLI, ...args], { env: { ...world.env, ...env }, timeout: 60_000, cwd }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? ((err as { code: number }).code) : 1) : 0;
      resolveRun({ code, stdout, stderr });
    });
    child.stdin?.end(input ?? '');
  });
}

/** musher in the foreground as a child of the test, so a test can SIGKILL it. */
export function spawnMusher(world: SledsWorld): ChildProcess {
  return spawn(process.execPath, [...CLI, 'musher', 'run', '--background'], { env: world.env, stdio: 'ignore' });
}

/** Polls `check` every 20 ms until it returns a value, or fails with `what` after the deadline. */
export function waitFor<T>(what: string, check: () => Promise<T | null | undefined | false> | T | null | undefined | false, timeoutMs = 20_000): Promise<T> {
  return pollUntil(check, { timeoutMs, intervalMs: 20, description: what });
}

export async function status(world: SledsWorld): Promise<import('../../core/status.js').StatusSnapshot> {
  const r = await sleds(world, ['status', '--json']);
  if (r.code !== 0) throw new Error(`sleds status failed: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

export async function startMusher(world: SledsWorld): Promise<void> {
  const r = await sleds(world, ['musher', 'start']);
  if (r.code !== 0) throw new Error(`musher did not start: ${r.stderr}`);
}

/** The pid musher wrote in the world's runtime folder (`sleds musher start` detaches it from the test). */
export function musherPid(world: SledsWorld): number {
  const pid = Number(readFileSync(join(world.sledsHome, 'run', 'musher.pid'), 'utf8').trim());
  if (!Number.isInteger(pid) || pid <= 0) throw new Error(`no musher pid in ${world.sledsHome}/run/musher.pid`);
  return pid;
}

/** Gone for good: no such process, or a zombie nobody has reaped yet (it holds no socket and no lock). */
export function processGone(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.startsWith('Z') ?? true;
  } catch {
    return true;
  }
}

export async function stopMusher(world: SledsWorld): Promise<void> {
  await sleds(world, ['musher', 'stop']);
}

/** Stops the world's musher and removes its folders. */
export async function disposeWorld(world: SledsWorld): Promise<void> {
  await stopMusher(world);
  rmSync(world.root, { recursive: true, force: true });
}
