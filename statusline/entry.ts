import { runStatusline } from './client.js';

/** The statusline's own entry, bundled into dist/statusline.cjs (see hooks/entry.ts for why). */
const args = process.argv.slice(2);
const thenAt = args.indexOf('--then');
runStatusline(thenAt >= 0 ? (args[thenAt + 1] ?? null) : null).then(
  (code) => process.exit(code),
  () => process.exit(0),
);
