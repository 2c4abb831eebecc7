import { accessSync, constants as fsConstants, statSync } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';
import { allHarnesses } from '../harnesses/registry.js';

export interface BinaryLookup {
  bin: string | null;
  /** Where it came from, or why there is none. */
  how: string;
}

/** A path the user chose for a binary, and where they said it (`binaries.codex in ~/.config/sleds/config.yml`, `SLEDS_CODEX_BIN`). */
export interface BinarySetting {
  path: string;
  source: string;
}

function isExecutableFile(p: string): boolean {
  try {
    if (!statSync(p).isFile()) return false;
    accessSync(p, fsConstants.X_OK);
    return true;
  } catch {
    // Missing or not executable: not this one.
    return false;
  }
}

/**
 * Finds a binary without a shell: the user's setting if there is one (and only it), else `name` on PATH (absolute
 * folders only: never ./name from the current folder), else the given fallback locations. Reads no environment
 * variable itself: musher passes its config.yml setting, the CLI its own (musher/config/cli-settings.ts).
 */
export function findBinary(name: string, setting: BinarySetting | null, pathVar: string | undefined, fallbacks: readonly string[] = []): BinaryLookup {
  if (setting) {
    if (!isAbsolute(setting.path)) return { bin: null, how: `${setting.source}=${setting.path} is not an absolute path` };
    return isExecutableFile(setting.path) ? { bin: setting.path, how: setting.source } : { bin: null, how: `${setting.source}=${setting.path} is not an executable file` };
  }
  for (const dir of (pathVar ?? '').split(delimiter)) {
    if (!dir || !isAbsolute(dir)) continue;
    const p = join(dir, name);
    if (isExecutableFile(p)) return { bin: p, how: 'PATH' };
  }
  for (const p of fallbacks) if (isExecutableFile(p)) return { bin: p, how: p };
  return { bin: null, how: `no ${name} on PATH` };
}

/** Where a harness's official installers put its binary (the adapter's binary.fallbacks), by the binary's name; [] for others. */
export function installerFallbacks(name: string, home: string): string[] {
  return allHarnesses().find((a) => a.binary.name === name)?.binary.fallbacks?.(home) ?? [];
}

export const TMUX_FALLBACKS: readonly string[] = ['/usr/bin/tmux', '/usr/local/bin/tmux', '/opt/homebrew/bin/tmux'];
