import { homedir } from 'node:os';
import { resolvePaths } from '../core/paths.js';
import { MusherUnreachable, requestMusher } from '../hooks/musher-client.js';

/**
 * musher's health and a quiet stop for install/uninstall/doctor. (cli/musher-control.ts `stop` prints its own
 * line, which would break the one-line-per-step output and the --json report.)
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

/** POST /v1/shutdown, then wait (checking every 50 ms, up to 10 s) until the socket stops answering. */
export async function stopMusherQuietly(): Promise<StopResult> {
  const socketFile = resolvePaths(process.env, homedir()).socketFile;
  const running = await musherHealth(socketFile);
  if (!running) return { wasRunning: false };
  await requestMusher(socketFile, 'POST', '/v1/shutdown', null, {}, 2000).catch(() => undefined);
  const end = Date.now() + 10_000;
  while (Date.now() < end) {
    if ((await musherHealth(socketFile)) === null) return { wasRunning: true, pid: running.pid, stopped: true };
    await new Promise((r) => setTimeout(r, 50));
  }
  return { wasRunning: true, pid: running.pid, stopped: false };
}
