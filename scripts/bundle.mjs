// Bundles the two hot-path entries (the hook and the statusline) into single CommonJS files under dist/.
// Everything else runs from tsc's output. The bundles must hold node builtins only: the build fails otherwise.
import { build } from 'esbuild';

const entries = { hook: 'hooks/entry.ts', statusline: 'statusline/entry.ts' };
for (const [name, entry] of Object.entries(entries)) {
  const result = await build({
    entryPoints: [entry],
    outfile: `dist/${name}.cjs`,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    packages: 'external',
    metafile: true,
    logLevel: 'warning',
    legalComments: 'none',
  });
  // harnesses/hook-defaults.ts imports nothing: the default harness's id, which the hook needs before musher answers.
  const foreign = Object.keys(result.metafile.inputs).filter((p) => !/^(hooks|statusline|core)\//.test(p) && p !== 'harnesses/hook-defaults.ts');
  if (foreign.length) throw new Error(`dist/${name}.cjs would load ${foreign.join(', ')}: the hot path takes node builtins only`);
  const imports = Object.values(result.metafile.outputs).flatMap((o) => o.imports.map((i) => i.path));
  const nonBuiltin = imports.filter((p) => !p.startsWith('node:'));
  if (nonBuiltin.length) throw new Error(`dist/${name}.cjs imports ${nonBuiltin.join(', ')}: the hot path takes node builtins only`);
}

// musher, the daemon, as one ESM file in place of tsc's dist/musher/main.js (which `sleds musher run` imports): a start
// then reads one file rather than resolving and loading some 300 modules, a third of a second of every start on this
// machine (first status 800–970 ms → 560–780 ms). Packages stay external (node_modules as installed); the parse worker stays its own file, which the bundle
// finds at dist/musher/ingest/ (musher/ingest/worker-pool.ts).
const daemon = await build({
  entryPoints: ['musher/main.ts'],
  outfile: 'dist/musher/main.js',
  allowOverwrite: true,
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'esm',
  packages: 'external',
  metafile: true,
  logLevel: 'warning',
  legalComments: 'none',
});
const inlinedWorker = Object.keys(daemon.metafile.inputs).filter((p) => p.endsWith('transcript-worker.ts'));
if (inlinedWorker.length) throw new Error('dist/musher/main.js would hold the parse worker: it must stay its own file');
