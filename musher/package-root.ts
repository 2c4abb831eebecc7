import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';
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
 * exec-env`): this package's source entry when that is what runs (cli/main.ts under tsx: `npm run dev`, the
 * integration tests), so a stale dist/ is never mixed in; for any other process (the shipped bin, a test's
 * in-process musher) the compiled CLI.
 */
export function runningCliEntry(argv1: string | undefined = process.argv[1]): string {
  const source = join(packageRoot(), 'cli', 'main.ts');
  return argv1 !== undefined && sameFile(argv1, source) ? source : cliMainPath();
}

/** The command (node, its flags, the entry) that runs this process's CLI again: see runningCliEntry. */
export function cliCommand(argv1: string | undefined = process.argv[1], execArgv: readonly string[] = process.execArgv): string[] {
  return [process.execPath, ...nodeArgsFor(runningCliEntry(argv1), execArgv)];
}

function sameFile(a: string, b: string): boolean {
  try {
    return realpathSync(a) === realpathSync(b);
  } catch {
    // a path that does not resolve (gone, or not a file) is not the source entry
    return false;
  }
}
