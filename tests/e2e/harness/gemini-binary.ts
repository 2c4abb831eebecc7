/**
 * Installs (once, on first use) and locates the real Gemini CLI used by the end-to-end tests. The pinned version
 * below is the ONE place in the repo naming it: bump it here and re-check shared/facts/gemini-cli.md.
 *
 * `@google/gemini-cli` is a Node program (a single esbuild bundle run by node >= 20): no native binary, and the
 * install runs no script that fetches anything but npm registry packages.
 *
 * Layout: <repo>/.cache/gemini-cli/<version>/node_modules/.bin/gemini (npm's link to the package's bin entry).
 *
 * Concurrency: see npm-install-pinned.ts.
 */
import path from 'node:path';

import { REPO_ROOT, pinnedBinary } from './npm-install-pinned.js';

export const GEMINI_CLI_VERSION = '0.61.0';

const PACKAGE = '@google/gemini-cli';

/** Folder that holds the npm prefix for the pinned version. */
export function geminiInstallDir(version: string = GEMINI_CLI_VERSION): string {
  return path.join(REPO_ROOT, '.cache', 'gemini-cli', version);
}

/** The `gemini` executable npm links (a `#!/usr/bin/env node` script). */
export function geminiBinaryPath(version: string = GEMINI_CLI_VERSION): string {
  return path.join(geminiInstallDir(version), 'node_modules', '.bin', 'gemini');
}

/**
 * Returns the absolute path of the pinned `gemini` executable, installing the package first if needed.
 * Memoised per process; safe across processes.
 */
export const ensureGeminiBinary: () => Promise<string> = pinnedBinary({
  pkg: PACKAGE,
  version: GEMINI_CLI_VERSION,
  dir: geminiInstallDir(),
  bin: geminiBinaryPath(),
  versionEnv: (home) => ({ PATH: process.env.PATH ?? '', HOME: home, GEMINI_CLI_NO_RELAUNCH: 'true' }),
});
