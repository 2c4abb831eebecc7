import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { resolvePaths } from '../core/paths.js';
import { musherClient } from '../protocol/client/client.js';
import { startMusherDetached } from '../hooks/start-musher.js';

/**
 * musher's life cycle from the CLI, without printing: health, start, stop. `sleds musher start|stop|status`
 * (musher-control.ts), the commands that ask musher (musher-call.ts) and install/uninstall/doctor word the
 * results their own way. "Running" means one thing everywhere: the socket answers. Which musher may run is decided
 * by musher itself, by its instance lock (musher/instance-lock.ts), never by a pid check here.
 */

export interface Health {
  pid: number;
  startedAt: number;
}

export async function musherHealth(socketFile = resolvePaths(process.env, homedir()).socketFile): Promise<Health | null> {
  const res = await musherClient({ socketPath: socketFile, timeoutMs: 1000 }).call('health', {});
  return res.ok ? { pid: res.body.pid, startedAt: res.body.startedAt } : null;
}

export type StopResult = { wasRunning: false } | { wasRunning: true; pid: number; stopped: boolean };

function exists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * musher removes its pid file as the last step of a clean shutdown, just before it drops its lock. (Its exit alone
 * is not enough to watch: a musher started in the background is reparented, and a container's init may leave it a
 * zombie that still "exists" for a long while.)
 */
function shutDown(pidFile: string, pid: number): boolean {
  try {
    return readFileSync(pidFile, 'utf8') !== String(pid);
  } catch {
    // No pid file: musher removed it as its last step, so it has shut down.
    return true;
  }
}

const poll = (): Promise<void> => new Promise((r) => setTimeout(r, 50));

/** POST /v1/shutdown, then wait (checking every 50 ms, up to 10 s) until it has shut down. */
export async function stopMusherQuietly(): Promise<StopResult> {
  const { socketFile, pidFile } = resolvePaths(process.env, homedir());
  const running = await musherHealth(socketFile);
  if (!running) return { wasRunning: false };
  // Whatever it answers (or not), the loop below watches it go.
  await musherClient({ socketPath: socketFile, timeoutMs: 2000 }).call('shutdown', {});
  const end = Date.now() + 10_000;
  while (Date.now() < end) {
    if ((await musherHealth(socketFile)) === null && (!exists(running.pid) || shutDown(pidFile, running.pid))) {
      return { wasRunning: true, pid: running.pid, stopped: true };
    }
    await poll();
  }
  return { wasRunning: true, pid: running.pid, stopped: false };
}

/**
 * Starts musher in the background unless it answers already; waits (up to 10 s) until one answers, and reports
 * its pid (several starters at once all report the one that won the lock). A started musher that lost the lock
 * exits at once with 0; when still nothing answers a second after that, the holder it lost to was shutting down:
 * start again. One that exits with anything else failed to start: null at once (its log, or `sleds musher` in the
 * foreground, says why).
 */
export async function ensureStarted(cliMain: string): Promise<{ pid: number; alreadyRunning: boolean } | null> {
  const running = await musherHealth();
  if (running) return { pid: running.pid, alreadyRunning: true };
  let lostAt: number | null = null;
  let failed = false;
  const start = async (): Promise<void> => {
    lostAt = null;
    const child = await startMusherDetached(cliMain);
    child?.once('exit', (code) => {
      if (code === 0) lostAt = Date.now();
      else failed = true;
    });
  };
  await start();
  let restarts = 0;
  const end = Date.now() + 10_000;
  while (Date.now() < end) {
    const h = await musherHealth();
    if (h) return { pid: h.pid, alreadyRunning: false };
    if (failed) return null;
    if (lostAt !== null && Date.now() - lostAt > 1000 && restarts < 5) {
      restarts++;
      await start();
    }
    await poll();
  }
  return null;
}
