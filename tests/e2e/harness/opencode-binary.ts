/**
 * Installs (once, on first use) and locates the real OpenCode binary used by the end-to-end tests. The pinned
 * version below is the ONE place in the repo naming it: bump it here and re-check shared/facts/opencode.md.
 *
 * `opencode-ai` ships a small launcher (bin/opencode) and the real executable in a platform package
 * (`opencode-linux-x64` …, an optional dependency); we run the platform package's executable directly, so the test
 * does not depend on the launcher's lookup. Layout:
 * <repo>/.cache/opencode/<version>/node_modules/opencode-<platform>-<arch>/bin/opencode (`.cache/` is git-ignored).
 */
import { rm } from 'node:fs/promises';
import path from 'node:path';

import { cleanEnv, makeRealTempDir } from './child.js';

import { REPO_ROOT, pinnedBinary } from './npm-install-pinned.js';

export const OPENCODE_VERSION = '1.18.33';

const PACKAGE = 'opencode-ai';

export function opencodeInstallDir(version: string = OPENCODE_VERSION): string {
  return path.join(REPO_ROOT, '.cache', 'opencode', version);
}

/** The platform package npm picks for this machine (glibc builds; the musl and baseline ones are for other hosts). */
function platformPackage(): string {
  const os = process.platform === 'win32' ? 'windows' : process.platform;
  return `opencode-${os}-${process.arch}`;
}

export function opencodeBinaryPath(version: string = OPENCODE_VERSION): string {
  return path.join(opencodeInstallDir(version), 'node_modules', platformPackage(), 'bin', 'opencode');
}

/** The absolute path of the pinned `opencode` executable, installing it first if needed. Memoised per process. */
export const ensureOpencodeBinary: () => Promise<string> = pinnedBinary({
  pkg: PACKAGE,
  version: OPENCODE_VERSION,
  dir: opencodeInstallDir(),
  bin: opencodeBinaryPath(),
  // A throwaway HOME and XDG dirs: `opencode --version` must not touch the developer's config or data.
  versionEnv: (home) => ({ PATH: process.env.PATH ?? '', HOME: home, XDG_CONFIG_HOME: `${home}/.config`, XDG_DATA_HOME: `${home}/.local/share`, XDG_CACHE_HOME: `${home}/.cache`, XDG_STATE_HOME: `${home}/.local/state` }),
});

/** A throwaway HOME for one OpenCode run: every XDG dir under it, so nothing reads or writes the real home. */
export interface OpencodeHome {
  home: string;
  /** The clean environment (PATH, HOME, XDG_*, no OPENCODE_* from the runner) plus `extra`. */
  env(extra?: Record<string, string>): Record<string, string>;
  /** Where OpenCode keeps its data (its SQLite store, opencode.db, and logs): `$XDG_DATA_HOME/opencode`. */
  dataDir: string;
  cleanup(): Promise<void>;
}

export async function makeOpencodeHome(): Promise<OpencodeHome> {
  const home = await makeRealTempDir('sleds-opencode-home-');
  const xdg = { XDG_CONFIG_HOME: `${home}/.config`, XDG_DATA_HOME: `${home}/.local/share`, XDG_CACHE_HOME: `${home}/.cache`, XDG_STATE_HOME: `${home}/.local/state` };
  return {
    home,
    dataDir: `${xdg.XDG_DATA_HOME}/opencode`,
    env: (extra = {}) => ({
      ...cleanEnv(home, ['OPENCODE', 'ANTHROPIC', 'OPENAI']),
      ...xdg,
      // No update check and no models.dev fetch: the run talks to the fake on 127.0.0.1 only for the model.
      OPENCODE_DISABLE_AUTOUPDATE: '1',
      OPENCODE_DISABLE_MODELS_FETCH: '1',
      ...extra,
    }),
    cleanup: () => rm(home, { recursive: true, force: true }),
  };
}
