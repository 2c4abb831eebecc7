import type { ChildProcess } from 'node:child_process';
import { nodeArgsFor } from '../core/cli-entry.js';

/**
 * When a client starts musher: nothing listens on the socket (no socket file, or a dead musher's file that refuses).
 * A musher that is there but slow to answer is left alone: starting another would only lose the lock.
 */
export function nobodyListens(reason: string): boolean {
  return reason === 'ENOENT' || reason === 'ECONNREFUSED';
}

/**
 * Starts musher in the background, detached from the harness: the one way every client starts it (the hooks, the
 * MCP server and the commands). Starting is always safe: the new musher takes the instance lock
 * (musher/instance-lock.ts) or, when another musher holds it, exits at once; so two hooks and a command starting
 * it together still end with one. child_process is imported only here, lazily: the hook loads it only on the rare
 * run that finds musher away. `cliMain` is the compiled CLI (the hook bundle's) or, for a CLI run from source, its
 * source entry, which starts a source musher under the same loader. Returns the child (whose exit a caller may
 * watch), or null when it could not spawn.
 */
export async function startMusherDetached(cliMain: string): Promise<ChildProcess | null> {
  try {
    const { spawn } = await import('node:child_process');
    const child = spawn(process.execPath, [...nodeArgsFor(cliMain, process.execArgv), 'musher', 'run', '--background'], {
      detached: true,
      stdio: 'ignore',
      env: process.env,
    });
    child.on('error', () => undefined);
    child.unref();
    return child;
  } catch {
    // Never break the harness: the next hook tries again.
    return null;
  }
}
