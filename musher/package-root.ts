import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { dirname, join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { nodeArgsFor } from '../core/cli-entry.js';

/** The installed package's root (where package.json, prices/ and plugin/ live), from dist/ or the sources. */
export function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'prices'))) return dir;
    dir = dirname(dir);
  }
  throw new Error('sleds: cannot find the package root (prices/ missing) — reinstall sleds');
}

/** This sleds' version, from its package.json (the same file from dist/ and from the sources). */
export function packageVersion(): string {
  return (JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')) as { version: string }).version;
}

/** The compiled CLI entry: what `sleds install` links and wires into the harnesses (the shipped bin). */
export function cliMainPath(): string {
  return join(packageRoot(), 'dist', 'cli', 'main.js');
}

/**
 * The CLI entry this process runs, to run it again (musher in the background, a restarted pane's `sleds
 * exec-env`): the entry that runs now when it is one of this package's (`cli/main.ts` under tsx for `npm run dev`,
 * the integration tests' fresh compile under .cache/, the shipped dist/cli/main.js), so a stale dist/ is never
 * mixed in; for any other process (a test's in-process musher, a linked bin elsewhere) the compiled CLI.
 */
export function runningCliEntry(argv1: string | undefined = process.argv[1]): string {
  if (argv1 === undefined) return cliMainPath();
  const root = realOrNull(packageRoot());
  const entry = realOrNull(argv1);
  if (root && entry && entry.startsWith(root + sep) && /[\\/]cli[\\/]main\.[jt]s$/.test(entry)) return entry;
  return cliMainPath();
}

/** The command (node, its flags, the entry) that runs this process's CLI again: see runningCliEntry. */
export function cliCommand(argv1: string | undefined = process.argv[1], execArgv: readonly string[] = process.execArgv): string[] {
  return [process.execPath, ...nodeArgsFor(runningCliEntry(argv1), execArgv)];
}

function realOrNull(p: string): string | null {
  try {
    return realpathSync(p);
  } catch {
    // a path that does not resolve (gone, or not a file) is no entry of ours
    return null;
  }
}
