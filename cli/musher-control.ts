import { homedir } from 'node:os';
import { spawn } from 'node:child_process';
import { resolvePaths } from '../core/paths.js';
import { requestMusher, MusherUnreachable } from '../hooks/musher-client.js';

/** `sleds musher start|stop|status`: the daemon's life cycle, from a shell. */

function paths() {
  return resolvePaths(process.env, homedir());
}

async function health(): Promise<{ pid: number; startedAt: number } | null> {
  try {
    const res = await requestMusher(paths().socketFile, 'GET', '/v1/health', null, {}, 1000);
    return res.status === 200 ? (JSON.parse(res.body) as { pid: number; startedAt: number }) : null;
  } catch (e) {
    if (e instanceof MusherUnreachable) return null;
    throw e;
  }
}

/** Waits for musher to answer (or stop answering), checking every 50 ms until the deadline. */
async function waitUntil(up: boolean, deadlineMs: number): Promise<boolean> {
  const end = Date.now() + deadlineMs;
  while (Date.now() < end) {
    if (((await health()) !== null) === up) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
}

function print(json: boolean, data: Record<string, unknown>, line: string): void {
  process.stdout.write(json ? `${JSON.stringify(data)}\n` : `${line}\n`);
}

export async function ensureStarted(cliMain: string): Promise<{ pid: number; alreadyRunning: boolean } | null> {
  const running = await health();
  if (running) return { pid: running.pid, alreadyRunning: true };
  const child = spawn(process.execPath, [cliMain, 'musher', 'run', '--background'], { detached: true, stdio: 'ignore', env: process.env });
  child.unref();
  if (!(await waitUntil(true, 10_000))) return null;
  const h = await health();
  return h ? { pid: h.pid, alreadyRunning: false } : null;
}

export async function start(cliMain: string, json: boolean): Promise<number> {
  const r = await ensureStarted(cliMain);
  if (!r) {
    process.stderr.write(`sleds: musher did not start within 10 s — see ${paths().logFile}, or run 'sleds musher' to watch it start\n`);
    return 1;
  }
  print(json, { running: true, pid: r.pid, alreadyRunning: r.alreadyRunning }, r.alreadyRunning ? `musher is already running (pid ${r.pid})` : `musher started (pid ${r.pid})`);
  return 0;
}

export async function stop(json: boolean): Promise<number> {
  const running = await health();
  if (!running) {
    print(json, { running: false }, 'musher is not running');
    return 0;
  }
  await requestMusher(paths().socketFile, 'POST', '/v1/shutdown', null, {}, 2000).catch(() => undefined);
  if (!(await waitUntil(false, 10_000))) {
    process.stderr.write(`sleds: musher (pid ${running.pid}) did not stop within 10 s — kill ${running.pid}\n`);
    return 1;
  }
  print(json, { running: false, stoppedPid: running.pid }, `musher stopped (pid ${running.pid})`);
  return 0;
}

export async function status(json: boolean): Promise<number> {
  const running = await health();
  const p = paths();
  if (!running) {
    print(json, { running: false, socket: p.socketFile, log: p.logFile }, `musher is not running — start it with 'sleds musher start' (or let the next hook start it)`);
    return 1;
  }
  print(json, { running: true, pid: running.pid, startedAt: running.startedAt, socket: p.socketFile, log: p.logFile }, `musher is running (pid ${running.pid}) on ${p.socketFile}; log: ${p.logFile}`);
  return 0;
}
