import { accessSync, constants as fsConstants, statSync } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';

type Env = Record<string, string | undefined>;

export interface BinaryLookup {
  bin: string | null;
  /** Where it came from, or why there is none. */
  how: string;
}

function isExecutableFile(p: string): boolean {
  try {
    if (!statSync(p).isFile()) return false;
    accessSync(p, fsConstants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Finds a harness binary without a shell: the override variable if set (and only it), else `name` on PATH (absolute
 * folders only: never ./name from the current folder), else the given fallback locations.
 */
export function findBinary(env: Env, name: string, overrideVar: string, fallbacks: string[] = []): BinaryLookup {
  const forced = env[overrideVar];
  if (forced) {
    if (!isAbsolute(forced)) return { bin: null, how: `${overrideVar}=${forced} is not an absolute path` };
    return isExecutableFile(forced) ? { bin: forced, how: overrideVar } : { bin: null, how: `${overrideVar}=${forced} is not an executable file` };
  }
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (!dir || !isAbsolute(dir)) continue;
    const p = join(dir, name);
    if (isExecutableFile(p)) return { bin: p, how: 'PATH' };
  }
  for (const p of fallbacks) if (isExecutableFile(p)) return { bin: p, how: p };
  return { bin: null, how: `no ${name} on PATH` };
}

/** SLEDS_CLAUDE_BIN if set (and only it), else `claude` on PATH, else the official installers' locations. */
export function findClaude(env: Env, home: string): BinaryLookup {
  return findBinary(env, 'claude', 'SLEDS_CLAUDE_BIN', [join(home, '.claude', 'local', 'claude'), join(home, '.local', 'bin', 'claude')]);
}
