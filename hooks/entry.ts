import { dirname, join } from 'node:path';
import { runHook } from './client.js';

/**
 * The hook's own entry, bundled into dist/hook.cjs: one file, CommonJS, node builtins only, so Claude Code pays
 * for little more than a bare node start on every prompt and tool call. `sleds hook <Event>` runs the same code.
 */
const args = process.argv.slice(2);
const event = args[0];
const harnessAt = args.indexOf('--harness');
// Without --harness the hook serves the default harness (runHook takes it from harnesses/hook-defaults.ts).
const harness = harnessAt >= 0 ? args[harnessAt + 1] : undefined;
const cliMain = join(dirname(process.argv[1] ?? '.'), 'cli', 'main.js');

if (!event) {
  process.stderr.write('sleds: which event? e.g. node dist/hook.cjs UserPromptSubmit\n');
  process.exitCode = 2;
} else {
  // Exit as soon as the answer is written (stdout is written synchronously): no waiting on handle teardown.
  runHook(event, harness, cliMain).then(
    (code) => process.exit(code),
    () => process.exit(0), // never break the harness
  );
}
