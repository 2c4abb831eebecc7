/**
 * Installs (once, on first use) and locates the real Claude Code binary used by
 * the end-to-end tests. The pinned version below is the ONE place in the repo
 * naming it: bump it here and re-check shared/facts/claude-code.md.
 *
 * Layout: <repo>/.cache/claude-code/<version>/node_modules/@anthropic-ai/claude-code/bin/claude.exe
 * (`.cache/` is git-ignored).
 *
 * Concurrency: several vitest worker processes may call ensureClaudeBinary() at
 * the same time. The first one to create the lock dir (mkdir is atomic) does
 * the install and then writes a completion marker; everyone else polls for the
 * marker with a deadline. A lock left behind by a dead installer (its pid no
 * longer exists) is taken over.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const execFileP = promisify(execFile);

export const CLAUDE_CODE_VERSION = '2.1.328';

const PACKAGE = '@anthropic-ai/claude-code';
const INSTALL_TIMEOUT_MS = 5 * 60_000;
const WAIT_TIMEOUT_MS = INSTALL_TIMEOUT_MS + 60_000;
const POLL_MS = 200;

/** <repo root>, derived from this file's location (tests/e2e/harness/). */
export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

/** Folder that holds the npm prefix for the pinned version. */
export function claudeInstallDir(version: string = CLAUDE_CODE_VERSION): string {
  return path.join(REPO_ROOT, '.cache', 'claude-code', version);
}

/** Absolute path the executable will have once installed. */
export function claudeBinaryPath(version: string = CLAUDE_CODE_VERSION): string {
  return path.join(claudeInstallDir(version), 'node_modules', '@anthropic-ai', 'claude-code', 'bin', 'claude.exe');
}

let cached: Promise<string> | undefined;

/**
 * Returns the absolute path of the pinned `claude` executable, installing it
 * first if needed. Memoised per process; safe across processes.
 */
export function ensureClaudeBinary(): Promise<string> {
  cached ??= doEnsure().catch((err: unknown) => {
    cached = undefined;
    throw err;
  });
  return cached;
}

async function doEnsure(): Promise<string> {
  const dir = claudeInstallDir();
  const bin = claudeBinaryPath();
  const marker = path.join(dir, '.install-complete');
  const lock = path.join(dir, '.install-lock');
  await mkdir(dir, { recursive: true });

  const deadline = Date.now() + WAIT_TIMEOUT_MS;
  for (;;) {
    if (existsSync(marker) && existsSync(bin)) return bin;
    if (await tryAcquire(lock)) {
      try {
        // Re-check after taking the lock: another process may have finished in between.
        if (!(existsSync(marker) && existsSync(bin))) await install(dir, bin, marker);
        return bin;
      } finally {
        await rm(lock, { recursive: true, force: true });
      }
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${WAIT_TIMEOUT_MS} ms waiting for another process to install ${PACKAGE}@${CLAUDE_CODE_VERSION} (lock ${lock})`);
    }
    await delay(POLL_MS);
  }
}

async function tryAcquire(lock: string): Promise<boolean> {
  try {
    await mkdir(lock);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    // Held by someone. Take it over only if the holder is provably dead.
    let pid = NaN;
    try {
      pid = Number((await readFile(path.join(lock, 'pid'), 'utf8')).trim());
    } catch {
      return false; // owner has not written its pid yet
    }
    if (Number.isInteger(pid) && pid > 0 && !processAlive(pid)) {
      await rm(lock, { recursive: true, force: true });
      return tryAcquire(lock);
    }
    return false;
  }
  await writeFile(path.join(lock, 'pid'), String(process.pid));
  return true;
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function install(dir: string, bin: string, marker: string): Promise<void> {
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const spec = `${PACKAGE}@${CLAUDE_CODE_VERSION}`;
  try {
    await execFileP(npm, ['install', '--no-save', '--no-audit', '--no-fund', '--prefix', dir, spec], {
      timeout: INSTALL_TIMEOUT_MS,
      maxBuffer: 64 * 1024 * 1024,
    });
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`npm install ${spec} failed: ${e.message}\n${e.stderr ?? ''}`);
  }
  if (!existsSync(bin)) throw new Error(`npm install ${spec} finished but ${bin} does not exist`);
  // Throwaway HOME so the check cannot touch the developer's real ~/.claude.
  const home = await mkdtemp(path.join(os.tmpdir(), 'claude-version-'));
  let stdout: string;
  try {
    ({ stdout } = await execFileP(bin, ['--version'], { timeout: 60_000, env: { PATH: process.env.PATH ?? '', HOME: home } }));
  } finally {
    await rm(home, { recursive: true, force: true });
  }
  if (!stdout.includes(CLAUDE_CODE_VERSION)) {
    throw new Error(`${bin} --version printed ${JSON.stringify(stdout)}, expected ${CLAUDE_CODE_VERSION}`);
  }
  await writeFile(marker, `${spec}\n${stdout.trim()}\n`);
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
