/**
 * The set-up the integration files that drive the CLI share, in one line at a file's top level:
 *
 *   const world = useWorlds();                               // world(env?) makes one; each is disposed after its test
 *   const codexBin = useBuiltCliAndBinary(ensureCodexBinary); // codexBin() once the file's tests run
 */
import { existsSync, mkdirSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll } from 'vitest';

import { disposeWorld, SHIPPED_CLI, makeWorld, type SledsWorld } from './sleds-env.js';

/**
 * Registers the scope's afterEach and returns a function that makes a world (`defaults`, then `env`, over
 * makeWorld's environment). After each test, every world it made has its musher stopped and its folders removed.
 */
export function useWorlds(defaults: NodeJS.ProcessEnv = {}): (env?: NodeJS.ProcessEnv) => SledsWorld {
  const worlds: SledsWorld[] = [];
  afterEach(async () => {
    // Stops every musher a test started (install starts one), then removes the folders.
    await Promise.all(worlds.splice(0).map((w) => disposeWorld(w)));
  });
  return (env = {}) => {
    const w = makeWorld({ ...defaults, ...env });
    worlds.push(w);
    return w;
  };
}

/**
 * Registers the scope's beforeAll: the compiled CLI, which install wires into the harness, must be there (a one-line
 * failure saying to build it), and the pinned harness binary `ensureBinary` installs is installed (once per machine). Returns its path, once known.
 */
export function useBuiltCliAndBinary(ensureBinary: () => Promise<string>): () => string {
  let bin: string | undefined;
  beforeAll(async () => {
    if (!existsSync(SHIPPED_CLI)) throw new Error(`${SHIPPED_CLI} is missing — run 'npm run build' first`);
    bin = await ensureBinary();
  }, 600_000);
  return () => {
    if (bin === undefined) throw new Error('the pinned binary is not installed yet: ask for it inside a test');
    return bin;
  };
}

export type CodexWorld = SledsWorld & { codexHome: string };

/** `w` with CODEX_HOME at <root>/cx (realpath'd; made unless `create` is false). */
export function withCodexHome(w: SledsWorld, create = true): CodexWorld {
  const codexHome = join(realpathSync(w.root), 'cx');
  if (create) mkdirSync(codexHome);
  w.env.CODEX_HOME = codexHome;
  return Object.assign(w, { codexHome });
}
