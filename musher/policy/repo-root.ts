import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

/** The repository that holds `dir`: the nearest folder upwards with a `.git` (a folder, or a worktree's file). No git process. */
export function findRepoRoot(dir: string): string | null {
  let here = resolve(dir);
  for (;;) {
    if (existsSync(join(here, '.git'))) return here;
    const up = dirname(here);
    if (up === here) return null;
    here = up;
  }
}
