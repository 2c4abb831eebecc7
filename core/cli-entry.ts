/**
 * How to run the sleds CLI again as a new node process. The shipped CLI is compiled JavaScript and runs as
 * `node <entry>`. The source entry (cli/main.ts, in development and the integration tests) runs only under the
 * loader its own process was started with (tsx's `--import`), so it is started again with this process's node
 * flags, as child_process.fork does. Pure: the caller hands in its own execArgv.
 */

/** A TypeScript entry: node cannot run it without the loader that runs this process. */
export function isSourceEntry(entry: string): boolean {
  return /\.[cm]?ts$/.test(entry);
}

/** The node arguments (after node itself) that run `entry`: the entry alone, or this process's flags and the entry. */
export function nodeArgsFor(entry: string, execArgv: readonly string[]): string[] {
  return isSourceEntry(entry) ? [...execArgv, entry] : [entry];
}
