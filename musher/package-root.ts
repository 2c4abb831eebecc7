import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The installed package's root (where package.json, prices/ and plugin/ live), from dist/ or the sources. */
export function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'prices'))) return dir;
    dir = dirname(dir);
  }
  throw new Error('sleds: cannot find the package root (prices/ missing) — reinstall sleds');
}

/** The compiled CLI entry, for starting musher in the background. */
export function cliMainPath(): string {
  return join(packageRoot(), 'dist', 'cli', 'main.js');
}
