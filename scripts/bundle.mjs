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
