/**
 * Installs one pinned npm package into its own prefix under <repo>/.cache/ (once, on first use), safely across
 * processes. Shared by claude-binary.ts and codex-binary.ts.
 *
 * Concurrency: several vitest worker processes may ask for the same package at the same time. The first one to
 * create the lock dir (mkdir is atomic) does the install and then writes a completion marker; everyone else polls
 * for the marker with a deadline. A lock left behind by a dead installer (its pid no longer exists) is taken over.
 *
 * npm runs with an argument array (no shell). Nothing but the npm registry is needed: both pinned packages ship
 * their native binaries inside registry packages and run no install script.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const execFileP = promisify(execFile);

/** <repo root>, derived from this file's location (tests/e2e/harness/). */
export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

const INSTALL_TIMEOUT_MS = 5 * 60_000;
const WAIT_TIMEOUT_MS = INSTALL_TIMEOUT_MS + 60_000;
const POLL_MS = 200;

export interface PinnedPackage {
  /** npm package name, e.g. "@openai/codex". */
  pkg: string;
  /** Exact version. */
  version: string;
  /** The npm prefix to install into (created if needed). */
  dir: string;
  /** Absolute path of the executable that must exist once installed. */
  bin: string;
  /**
   * Runs after npm install, before the completion marker is written: throw if the install is not usable
   * (typically: run `<bin> --version` and compare). Returns a line to keep in the marker file.
   */
  verify(bin: string): Promise<string>;
}

export interface PinnedBinary extends Omit<PinnedPackage, 'verify'> {
  /** The environment `<bin> --version` runs with, made of a throwaway HOME (never the developer's real config). */
  versionEnv(home: string): NodeJS.ProcessEnv;
}

/**
 * A function that returns the absolute path of the pinned executable, installing it first if needed (and checking
 * that `<bin> --version` prints the version). Memoised per process; safe across processes.
 */
export function pinnedBinary(spec: PinnedBinary): () => Promise<string> {
  const { versionEnv, ...pkg } = spec;
  return memoiseOnce(() => ensurePinnedPackage({ ...pkg, verify: (bin) => verifyVersionPrinted(bin, pkg.version, versionEnv) }));
}

async function verifyVersionPrinted(bin: string, version: string, env: (home: string) => NodeJS.ProcessEnv): Promise<string> {
  const home = await mkdtemp(path.join(os.tmpdir(), `${path.basename(bin).replace(/\W+/g, '-')}-version-`));
  let stdout: string;
  try {
    ({ stdout } = await execFileP(bin, ['--version'], { timeout: 60_000, env: env(home) }));
  } finally {
    await rm(home, { recursive: true, force: true });
  }
  if (!stdout.includes(version)) {
    throw new Error(`${bin} --version printed ${JSON.stringify(stdout)}, expected ${version}`);
  }
  return stdout;
}

/**
 * Returns `spec.bin`, installing `spec.pkg@spec.version` into `spec.dir` first if needed. Not memoised: callers
 * memoise per process (pinnedBinary does).
 */
export async function ensurePinnedPackage(spec: PinnedPackage): Promise<string> {
  const { dir, bin } = spec;
  const marker = path.join(dir, '.install-complete');
  const lock = path.join(dir, '.install-lock');
  await mkdir(dir, { recursive: true });

  const deadline = Date.now() + WAIT_TIMEOUT_MS;
  for (;;) {
    if (existsSync(marker) && existsSync(bin)) return bin;
    if (await tryAcquire(lock)) {
      try {
        // Re-check after taking the lock: another process may have finished in between.
        if (!(existsSync(marker) && existsSync(bin))) await install(spec, marker);
        return bin;
      } finally {
        await rm(lock, { recursive: true, force: true });
      }
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${WAIT_TIMEOUT_MS} ms waiting for another process to install ${spec.pkg}@${spec.version} (lock ${lock})`);
    }
    await delay(POLL_MS);
  }
}

/** Memoises an async function per process; a failure is forgotten so that the next call tries again. */
export function memoiseOnce<T>(fn: () => Promise<T>): () => Promise<T> {
  let cached: Promise<T> | undefined;
  return () => {
    cached ??= fn().catch((err: unknown) => {
      cached = undefined;
      throw err;
    });
    return cached;
  };
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

async function install(spec: PinnedPackage, marker: string): Promise<void> {
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const id = `${spec.pkg}@${spec.version}`;
  try {
    await execFileP(npm, ['install', '--no-save', '--no-audit', '--no-fund', '--prefix', spec.dir, id], {
      timeout: INSTALL_TIMEOUT_MS,
      maxBuffer: 64 * 1024 * 1024,
    });
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`npm install ${id} failed: ${e.message}\n${e.stderr ?? ''}`);
  }
  if (!existsSync(spec.bin)) throw new Error(`npm install ${id} finished but ${spec.bin} does not exist`);
  const line = await spec.verify(spec.bin);
  await writeFile(marker, `${id}\n${line.trim()}\n`);
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
