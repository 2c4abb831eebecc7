import { spawn } from 'node:child_process';

/** Starts musher in the background, detached from the harness, and returns at once. */
export function startMusherDetached(cliMain: string): void {
  try {
    const child = spawn(process.execPath, [cliMain, 'musher', 'run', '--background'], {
      detached: true,
      stdio: 'ignore',
      env: process.env,
    });
    child.on('error', () => undefined);
    child.unref();
  } catch {
    // Never break the harness: the next hook tries again.
  }
}
