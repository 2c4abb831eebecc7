/**
 * Starts musher in the background, detached from the harness. child_process is imported only here, lazily: the
 * hook loads it only on the rare run that finds musher away.
 */
export async function startMusherDetached(cliMain: string): Promise<void> {
  try {
    const { spawn } = await import('node:child_process');
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
