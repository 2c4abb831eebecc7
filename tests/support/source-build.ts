import { readdirSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

/**
 * Before the run: the sources as they are now, compiled file by file (esbuild, no bundling) into a folder of this
 * run, which the integration tests run the CLI from (and the musher it starts): a stale dist/ cannot pass them, and
 * each start costs what the shipped CLI's does (a TypeScript loader under node 20 costs ~0.7 s a start). The folder
 * is under the repository's .cache/, so the package root (package.json, prices/) and node_modules resolve as from
 * dist/. Removed after the run.
 */
const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const SOURCE_DIRS = ['cli', 'core', 'harnesses', 'hooks', 'mcp-server', 'musher', 'protocol', 'statusline'];

function sourcesOf(dir: string): string[] {
  return readdirSync(join(REPO, dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => /\.tsx?$/.test(f) && !f.endsWith('.d.ts'))
    .map((f) => join(dir, f));
}

export default async function setup(): Promise<() => void> {
  const out = join(REPO, '.cache', 'src-build', String(process.pid));
  rmSync(out, { recursive: true, force: true });
  await build({
    entryPoints: SOURCE_DIRS.flatMap(sourcesOf).map((f) => join(REPO, f)),
    outdir: out,
    outbase: REPO,
    bundle: false,
    platform: 'node',
    target: 'node20',
    format: 'esm',
    jsx: 'automatic',
    logLevel: 'warning',
  });
  // The workers are forked after this: they find the build here (tests/support/sleds-env.ts).
  process.env.SLEDS_TEST_SOURCE_BUILD = out;
  return () => rmSync(out, { recursive: true, force: true });
}
