import { existsSync, mkdirSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { resolvePaths, type SledsPaths } from '../core/paths.js';
import { compose, processTimeZone } from './compose.js';
import { systemClock } from './clock.js';
import { acquireInstanceLock } from './instance-lock.js';
import { fileLog } from './log.js';
import { startServer } from './server.js';
import { musherClient } from '../protocol/client/client.js';
import { tightenUmask } from './user-umask.js';
import type { Log } from './log.js';

/** `sleds musher run`: the daemon itself, in the foreground (the background start runs this detached). */
export async function runMusher(opts: { background: boolean }): Promise<number> {
  // Everything musher writes (the database and its -wal/-shm, snapshots, logs, state files) is the user's alone.
  tightenUmask(0o077);
  const paths = resolvePaths(process.env, homedir());
  for (const dir of [paths.configDir, paths.dataDir, paths.runtimeDir, paths.stateDir, paths.spoolDir]) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  }
  // One musher per user: the lock is held for musher's life and released by the kernel however it ends.
  const lock = acquireInstanceLock(paths.lockFile);
  if (!lock.acquired) {
    if (!opts.background) process.stderr.write(`sleds: musher is already running (pid ${await holderPid(paths)}) — 'sleds musher stop' stops it\n`);
    return opts.background ? 0 : 1;
  }
  // The lock is ours, so a socket file left here is a dead musher's; one that still answers belongs to a musher of
  // an older sleds (which locked with a pid file): leave it be.
  if (existsSync(paths.socketFile)) {
    const answer = await musherClient({ socketPath: paths.socketFile, timeoutMs: 500 }).call('health', {});
    if (answer.ok || answer.kind !== 'unreachable') {
      lock.release();
      if (!opts.background) process.stderr.write('sleds: another musher answers on the socket — not starting a second one\n');
      return opts.background ? 0 : 1;
    }
    // Nobody answers: a socket a crashed musher left behind, removed before listening.
    unlinkSync(paths.socketFile);
  }
  // Likewise the usage poller's pid lock: whoever wrote it was a musher of this runtime folder, so it is dead, though
  // its pid may still answer kill(0) as a zombie that nobody reaped (after a kill -9 in a container).
  rmSync(join(paths.runtimeDir, 'usage-poller.lock'), { force: true });
  const interactive = !opts.background && process.stderr.isTTY;
  const log = fileLog(paths.logFile, systemClock, opts.background ? null : (line) => process.stderr.write(line));
  let lastDraw = 0;
  const house = compose({
    paths,
    env: process.env,
    homeDir: homedir(),
    clock: systemClock,
    timeZone: processTimeZone(),
    log,
    onBackfillProgress: interactive
      ? (done, total) => {
          const now = systemClock.now();
          if (now - lastDraw < 250 && done < total) return;
          lastDraw = now;
          const pct = total > 0 ? Math.floor((done / total) * 100) : 100;
          process.stderr.write(`\rsleds: reading session history ${(done / 1e6).toFixed(0)} of ${(total / 1e6).toFixed(0)} MB (${pct}%)  `);
        }
      : undefined,
  });
  let stopping = false;
  let resolveStopped: () => void = () => undefined;
  const stopped = new Promise<void>((r) => (resolveStopped = r));
  const shutdown = async (): Promise<void> => {
    if (stopping) return;
    stopping = true;
    log.info('musher stopping');
    await server.close();
    // Stops the services in their order: GitHub, retention, every usage source (the followers, the poller, the gateway).
    await house.stop();
    try {
      if (readFileSync(paths.pidFile, 'utf8') === String(process.pid)) unlinkSync(paths.pidFile);
    } catch {
      // gone already
    }
    lock.release();
    resolveStopped();
  };
  const server = await startServer(house.services, paths.socketFile, log, () => void shutdown());
  writeFileSync(paths.pidFile, String(process.pid), { mode: 0o600 });
  process.on('SIGTERM', () => void shutdown());
  process.on('SIGINT', () => void shutdown());
  process.on('SIGHUP', () => void shutdown());
  let exitCode = 0;
  catchStrays(log, () => {
    exitCode = 1;
    void shutdown();
  });
  log.info(`musher ${house.version} listening on ${paths.socketFile} (pid ${process.pid})`);
  await house.start();
  if (interactive) {
    void house.musher.transcripts.idle().then(() => process.stderr.write('\nsleds: history read; musher is ready\n'));
  }
  await stopped;
  return exitCode;
}

/** The pid of the musher holding the lock: the one answering on the socket, else the one its pid file names. */
async function holderPid(paths: SledsPaths): Promise<string> {
  const answer = await musherClient({ socketPath: paths.socketFile, timeoutMs: 1000 }).call('health', {});
  if (answer.ok) return String(answer.body.pid);
  // Not answering (starting, not listening yet): the pid file says.
  try {
    const pid = readFileSync(paths.pidFile, 'utf8').trim();
    return /^\d+$/.test(pid) ? pid : '?';
  } catch {
    // No pid file: its pid is not known.
    return '?';
  }
}

/** "message (at musher/app.js:120:7)": one line for the log. */
function errorLine(e: unknown): string {
  const err = e instanceof Error ? e : new Error(String(e));
  const where = err.stack?.split('\n').find((l) => l.trim().startsWith('at '))?.trim().replace(/^at /, '');
  return `${err.message}${where ? ` (at ${where})` : ''}`;
}

/**
 * Nothing unforeseen takes musher down without a line in its log. A rejected promise nobody awaited (a background
 * round, a spooled event, a notice) is logged and musher keeps running: the work that failed was one task's, what
 * it wrote to SQLite was in a transaction that rolled back, and stopping would drop every live session's gateway and
 * hook answers for it. An uncaught exception is different: Node leaves the process in an unknown state after one, so
 * musher logs it and stops cleanly (socket, lock and pid removed); the next hook starts a fresh one, and the hooks
 * spool in between.
 */
function catchStrays(log: Log, stop: () => void): void {
  process.on('unhandledRejection', (reason) => {
    log.error(`unhandled rejection: ${errorLine(reason)} — musher keeps running`);
  });
  process.on('uncaughtException', (e) => {
    log.error(`uncaught exception: ${errorLine(e)} — musher stops; the next hook starts it again`);
    // A shutdown that hangs must not keep a broken musher alive.
    setTimeout(() => process.exit(1), 5_000).unref();
    stop();
  });
}
