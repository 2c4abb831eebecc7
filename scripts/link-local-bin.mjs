// After `npm install` in a clone (the `prepare` step): puts `sleds` in the clone's own node_modules/.bin, so
// `npx sleds …` there runs dist/cli/main.js at once. Without it npx does not find the package's own bin and first
// links the package into its cache (about 9 s of CPU on the first run). Does nothing when sleds is installed as a
// dependency (npm links its bin itself) or a `sleds` is already there.
import { chmodSync, existsSync, lstatSync, mkdirSync, symlinkSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const bin = join(root, 'node_modules', '.bin');
const link = join(bin, 'sleds');
const target = join(root, 'dist', 'cli', 'main.js');
if (existsSync(join(root, 'node_modules')) && existsSync(target)) {
  chmodSync(target, 0o755); // tsc writes it 0644; a bin runs through its shebang
  let present = false;
  try {
    lstatSync(link);
    present = true;
  } catch {
    // not there yet
  }
  if (!present) {
    mkdirSync(bin, { recursive: true });
    symlinkSync(relative(bin, target), link);
  }
}
