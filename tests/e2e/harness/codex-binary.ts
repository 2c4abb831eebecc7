/**
 * Installs (once, on first use) and locates the real Codex CLI used by the end-to-end tests. The pinned version
 * below is the ONE place in the repo naming it: bump it here and re-check shared/facts/codex-cli.md.
 *
 * `@openai/codex` is a small JS launcher (bin/codex.js) whose native binary comes in a platform package that npm
 * picks as an optional dependency (`@openai/codex-linux-x64` = `npm:@openai/codex@<v>-linux-x64`, ~400 MB
 * unpacked). Neither has an install script, so npm 11's script blocking does not matter, and nothing is fetched
 * from anywhere but the npm registry.
 *
 * Layout: <repo>/.cache/codex/<version>/node_modules/@openai/codex/bin/codex.js (the launcher) and
 * <repo>/.cache/codex/<version>/node_modules/@openai/codex-<os>-<arch>/vendor/<triple>/bin/codex (the binary).
 *
 * Concurrency: see npm-install-pinned.ts.
 */
import path from 'node:path';

import { REPO_ROOT, pinnedBinary } from './npm-install-pinned.js';

export const CODEX_VERSION = '0.169.0';

const PACKAGE = '@openai/codex';

/** The Rust target triple and platform package the launcher would pick on this machine (bin/codex.js's table). */
export function codexTarget(platform: NodeJS.Platform = process.platform, arch: string = process.arch): { triple: string; pkg: string; exe: string } {
  const table: Record<string, [string, string]> = {
    'linux/x64': ['x86_64-unknown-linux-musl', '@openai/codex-linux-x64'],
    'linux/arm64': ['aarch64-unknown-linux-musl', '@openai/codex-linux-arm64'],
    'android/x64': ['x86_64-unknown-linux-musl', '@openai/codex-linux-x64'],
    'android/arm64': ['aarch64-unknown-linux-musl', '@openai/codex-linux-arm64'],
    'darwin/x64': ['x86_64-apple-darwin', '@openai/codex-darwin-x64'],
    'darwin/arm64': ['aarch64-apple-darwin', '@openai/codex-darwin-arm64'],
    'win32/x64': ['x86_64-pc-windows-msvc', '@openai/codex-win32-x64'],
    'win32/arm64': ['aarch64-pc-windows-msvc', '@openai/codex-win32-arm64'],
  };
  const hit = table[`${platform}/${arch}`];
  if (!hit) throw new Error(`@openai/codex ${CODEX_VERSION} has no binary for ${platform}/${arch}`);
  return { triple: hit[0], pkg: hit[1], exe: platform === 'win32' ? 'codex.exe' : 'codex' };
}

/** Folder that holds the npm prefix for the pinned version. */
export function codexInstallDir(version: string = CODEX_VERSION): string {
  return path.join(REPO_ROOT, '.cache', 'codex', version);
}

/**
 * The native executable. Tests run this one: it is what the launcher runs, it gets signals directly (a SIGKILL
 * on timeout leaves no orphan behind, which it would through the launcher on node 20, which has no execve), and
 * it starts ~40 ms faster.
 */
export function codexBinaryPath(version: string = CODEX_VERSION): string {
  const t = codexTarget();
  return path.join(codexInstallDir(version), 'node_modules', ...t.pkg.split('/'), 'vendor', t.triple, 'bin', t.exe);
}

/**
 * The JS launcher that `npm install -g @openai/codex` puts on PATH as `codex` (run it with node). It sets
 * CODEX_MANAGED_BY_NPM=1 and CODEX_MANAGED_PACKAGE_ROOT for the binary, which hooks then see in their env.
 */
export function codexLauncherPath(version: string = CODEX_VERSION): string {
  return path.join(codexInstallDir(version), 'node_modules', '@openai', 'codex', 'bin', 'codex.js');
}

/**
 * Returns the absolute path of the pinned native `codex` executable, installing the package first if needed.
 * Memoised per process; safe across processes.
 */
export const ensureCodexBinary: () => Promise<string> = pinnedBinary({
  pkg: PACKAGE,
  version: CODEX_VERSION,
  dir: codexInstallDir(),
  bin: codexBinaryPath(),
  versionEnv: (home) => ({ PATH: process.env.PATH ?? '', HOME: home, CODEX_HOME: path.join(home, '.codex') }),
});
