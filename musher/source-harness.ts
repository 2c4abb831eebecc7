import { harnessOfSource } from '../harnesses/registry.js';

/**
 * The id of the one harness that produces records of `source` (a transcript's, a rollout's, the statusline's): musher's
 * sources store it with the sessions they see, taken from the adapter that claims the source rather than spelled here.
 * A source no adapter claims is a wiring mistake, said at start-up.
 */
export function sourceHarnessId(source: string): string {
  const adapter = harnessOfSource(source);
  if (!adapter) throw new Error(`no harness adapter produces the source '${source}' — add it to the adapter's signalSources`);
  return adapter.id;
}
