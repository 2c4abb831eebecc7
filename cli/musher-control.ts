import { homedir } from 'node:os';
import { resolvePaths } from '../core/paths.js';
import { fail } from './fail.js';
import { ensureStarted, musherHealth, stopMusherQuietly } from './musher-lifecycle.js';

/** `sleds musher start|stop|status`: the daemon's life cycle, from a shell. */

function print(json: boolean, data: Record<string, unknown>, line: string): void {
  process.stdout.write(json ? `${JSON.stringify(data)}\n` : `${line}\n`);
}

export async function start(cliMain: string, json: boolean): Promise<number> {
  const r = await ensureStarted(cliMain);
  if (!r) {
    const log = resolvePaths(process.env, homedir()).logFile;
    return fail(`musher did not start — see ${log}, or run 'sleds musher' to watch it start`);
  }
  print(json, { running: true, pid: r.pid, alreadyRunning: r.alreadyRunning }, r.alreadyRunning ? `musher is already running (pid ${r.pid})` : `musher started (pid ${r.pid})`);
  return 0;
}

export async function stop(json: boolean): Promise<number> {
  const r = await stopMusherQuietly();
  if (!r.wasRunning) {
    print(json, { running: false }, 'musher is not running');
    return 0;
  }
  if (!r.stopped) {
    return fail(`musher (pid ${r.pid}) did not stop within 10 s — kill ${r.pid}`);
  }
  print(json, { running: false, stoppedPid: r.pid }, `musher stopped (pid ${r.pid})`);
  return 0;
}

export async function status(json: boolean): Promise<number> {
  const running = await musherHealth();
  const p = resolvePaths(process.env, homedir());
  if (!running) {
    // Not running is this command's failure (exit 1): under --json it is an { error } too, with where to look.
    const error = `musher is not running — start it with 'sleds musher start' (or let the next hook start it)`;
    print(json, { error, running: false, socket: p.socketFile, log: p.logFile }, error);
    return 1;
  }
  print(json, { running: true, pid: running.pid, startedAt: running.startedAt, socket: p.socketFile, log: p.logFile }, `musher is running (pid ${running.pid}) on ${p.socketFile}; log: ${p.logFile}`);
  return 0;
}
