/**
 * Installs (once, on first use) and locates the real Claude Code binary used by
 * the end-to-end tests. The pinned version below is the ONE place in the repo
 * naming it: bump it here and re-check shared/facts/claude-code.md.
 *
 * Layout: <repo>/.cache/claude-code/<version>/node_modules/@anthropic-ai/claude-code/bin/claude.exe
 * (`.cache/` is git-ignored).
 *
 * Concurrency: several vitest worker processes may call ensureClaudeBinary() at
 * the same time; npm-install-pinned.ts serialises them with a lock dir and a
 * completion marker (a lock left behind by a dead installer is taken over).
 */
import path from 'node:path';

import { REPO_ROOT, pinnedBinary } from './npm-install-pinned.js';

export const CLAUDE_CODE_VERSION = '2.1.328';

const PACKAGE = '@anthropic-ai/claude-code';

/** <repo root>, derived from this file's location (tests/e2e/harness/). */
export { REPO_ROOT };

/** Folder that holds the npm prefix for the pinned version. */
export function claudeInstallDir(version: string = CLAUDE_CODE_VERSION): string {
  return path.join(REPO_ROOT, '.cache', 'claude-code', version);
}

/** Absolute path the executable will have once installed. */
export function claudeBinaryPath(version: string = CLAUDE_CODE_VERSION): string {
  return path.join(claudeInstallDir(version), 'node_modules', '@anthropic-ai', 'claude-code', 'bin', 'claude.exe');
}

/**
 * Returns the absolute path of the pinned `claude` executable, installing it
 * first if needed. Memoised per process; safe across processes.
 */
export const ensureClaudeBinary: () => Promise<string> = pinnedBinary({
  pkg: PACKAGE,
  version: CLAUDE_CODE_VERSION,
  dir: claudeInstallDir(),
  bin: claudeBinaryPath(),
  versionEnv: (home) => ({ PATH: process.env.PATH ?? '', HOME: home }),
});
