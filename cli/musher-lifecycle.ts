import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { spawn } from 'node:child_process';
import { resolvePaths } from '../core/paths.js';
import { MusherUnreachable, requestMusher } from '../hooks/musher-client.js';

/**
 * musher's life cycle from the CLI, without printing: health, start, stop. `sleds musher start|stop|status`
 * (musher-control.ts) and install/uninstall/doctor word the results their own way.
 */

export interface Health {
  pid: number;
  startedAt: number;
}

export async function musherHealth(socketFile = resolvePaths(process.env, homedir()).socketFile): Promise<Health | null> {
  try {
    const res = await requestMusher(socketFile, 'GET', '/v1/health', null, {}, 1000);
    if (res.status !== 200) return null;
    const body = JSON.parse(res.body) as Partial<Health>;
    return { pid: Number(body.pid), startedAt: Number(body.startedAt) };
  } catch (e) {
    if (e instanceof MusherUnreachable || e instanceof SyntaxError) return null;
    throw e;
  }
}

export type StopResult = { wasRunning: false } | { wasRunning: true; pid: number; stopped: boolean };

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * musher releases its lock as the very last step of a shutdown. (Its exit alone is not enough to watch: a musher
 * started in the background is reparented, and a container's init may leave it a zombie for a while.)
 */
function lockReleased(lockFile: string, pid: number): boolean {
  try {
    return readFileSync(lockFile, 'utf8') !== String(pid);
  } catch {
    return true;
  }
}

/** POST /v1/shutdown, then wait (checking every 50 ms, up to 10 s) until the process has exited. */
export async function stopMusherQuietly(): Promise<StopResult> {
  const { socketFile, lockFile } = resolvePaths(process.env, homedir());
  const running = await musherHealth(socketFile);
  if (!running) return { wasRunning: false };
  await requestMusher(socketFile, 'POST', '/v1/shutdown', null, {}, 2000).catch(() => undefined);
  const end = Date.now() + 10_000;
  while (Date.now() < end) {
    if ((await musherHealth(socketFile)) === null && (!alive(running.pid) || lockReleased(lockFile, running.pid))) {
      return { wasRunning: true, pid: running.pid, stopped: true };
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return { wasRunning: true, pid: running.pid, stopped: false };
}

/** Starts musher in the background unless it answers already; waits (up to 10 s) until it does. */
export async function ensureStarted(cliMain: string): Promise<{ pid: number; alreadyRunning: boolean } | null> {
  const running = await musherHealth();
  if (running) return { pid: running.pid, alreadyRunning: true };
  const child = spawn(process.execPath, [cliMain, 'musher', 'run', '--background'], { detached: true, stdio: 'ignore', env: process.env });
  child.on('error', () => undefined);
  child.unref();
  const end = Date.now() + 10_000;
  while (Date.now() < end) {
    const h = await musherHealth();
    if (h) return { pid: h.pid, alreadyRunning: false };
    await new Promise((r) => setTimeout(r, 50));
  }
  return null;
}
