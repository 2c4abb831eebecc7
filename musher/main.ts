import { existsSync, mkdirSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { claudeConfigDir, resolvePaths, type SledsPaths } from '../core/paths.js';
import { codexSessionsDir } from '../harnesses/codex/rollout.js';
import { Musher } from './app.js';
import { daemonWallWiring } from './walls/daemon-wiring.js';
import { PolicyLoader } from './policy/loader.js';
import { policyPort } from './policy/port.js';
import { systemClock } from './clock.js';
import { acquireInstanceLock } from './instance-lock.js';
import { fileLog } from './log.js';
import { packageRoot } from './package-root.js';
import { loadPriceTable } from './prices.js';
import { startServer } from './server.js';
import { musherClient } from '../protocol/client/client.js';
import { UsageEndpointSource } from './usage-sources/usage-endpoint.js';
import { GatewayMeteringSource } from './usage-sources/gateway-metering.js';
import { readClaudeCredentials } from './quota/credentials.js';
import { GatewayService } from './gateway/service.js';
import { zoneUtcOffset } from './gateway/allowance.js';
import { openSecretStore } from './secrets/store.js';
import { buildGithub } from './github/wiring.js';
import { loadSeatKeys } from './handoff/keys.js';
import { loadConfig } from './config/load.js';
import { configuredBinary } from './config/schema.js';
import { findBinary } from './find-binary.js';
import { tightenUmask } from './user-umask.js';
import { findBinaries } from './resume/binaries.js';
import { RawEventRetention } from './store/retention.js';
import { FAILED_DIR } from './ingest/spool-drain.js';
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
  // Upstreams, binaries and retention come from the user's config.yml alone, never from the environment of the
  // session whose hook happened to start musher (a hostile repository's session could set it).
  const settings = loadConfig(paths.configDir, homedir());
  if (settings.error) log.error(settings.error);
  for (const w of settings.warnings) log.warn(w);
  const config = settings.config;
  const root = packageRoot();
  const version = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version;
  let lastDraw = 0;
  const prices = loadPriceTable(root);
  // The workspace policy (each repository's .sleds/policy.yml over the user's own) and the platform keys.
  const policy = policyPort(new PolicyLoader({ configDir: paths.configDir, homeDir: homedir(), log }), paths.configDir);
  const secrets = openSecretStore(paths);
  const musher = new Musher({
    paths,
    clock: systemClock,
    log,
    prices,
    claudeConfigDir: claudeConfigDir(process.env, homedir()),
    codexSessionsDir: codexSessionsDir(process.env, homedir()),
    version,
    // Receipts are signed with the seat's Ed25519 key, read when a receipt is written (keys made later count).
    signingKey: async () => (await loadSeatKeys(secrets))?.ed25519 ?? null,
    // The quiet period before a task whose sessions all ended gets its receipt (default 30 minutes).
    taskQuietMs: quietMs(process.env.SLEDS_TASK_QUIET_MS),
    binaries: () => findBinaries(config.binaries),
    wallWiring: (m) =>
      daemonWallWiring(m, policy, secrets, {
        paths,
        claudeConfigDir: claudeConfigDir(process.env, homedir()),
        codexHome: dirname(codexSessionsDir(process.env, homedir())),
        log,
        notify: { slackApiUrl: config.upstreams.slack, binaries: { notifySend: config.binaries.notifySend, osascript: config.binaries.osascript } },
      }),
    onBackfillProgress: interactive
      ? (done, total) => {
          const now = systemClock.now();
          if (now - lastDraw < 250 && done < total) return;
          lastDraw = now;
          const pct = total > 0 ? Math.floor((done / total) * 100) : 100;
          process.stderr.write(`\rsleds: reading Claude Code history ${(done / 1e6).toFixed(0)} of ${(total / 1e6).toFixed(0)} MB (${pct}%)  `);
        }
      : undefined,
  });
  // Claude's usage endpoint: per-model weekly bars and credits. Sends nothing until there is a login to use.
  const env = process.env;
  musher.sources.add(
    new UsageEndpointSource(
      {
        log,
        readCredentials: () =>
          readClaudeCredentials({
            claudeConfigDir: claudeConfigDir(env, homedir()),
            configDirFromEnv: Boolean(env.CLAUDE_CONFIG_DIR),
            now: () => systemClock.now(),
          }),
        baseUrl: config.upstreams.claudeUsage,
        lockFile: join(paths.runtimeDir, 'usage-poller.lock'),
        stateFile: join(paths.runtimeDir, 'usage-poller.json'),
        userAgent: `sleds/${version} (usage poller)`,
      },
      { db: musher.db, bars: musher.bars, credits: musher.credits, account: () => musher.accounts.defaultClaude() },
      systemClock,
    ),
  );
  // The platform-key gateway: listens (127.0.0.1 only) once a key is configured, now or at the first token minted.
  const gateway = new GatewayService({
    db: musher.db,
    platformKeys: musher.platformKey,
    prices,
    clock: systemClock,
    log,
    secrets,
    // The seat's caps from the policy of the repository the resumed session works in.
    allowance: (seat, grant) => policy.forDirectory(musher.sessions.get(grant.sessionId)?.cwd ?? null).allowance(seat),
    utcOffset: zoneUtcOffset(musher.timeZone),
    env,
    // One port across restarts: a resumed session's ANTHROPIC_BASE_URL stays valid.
    portFile: join(paths.dataDir, 'gateway.json'),
    upstreams: { anthropic: config.upstreams.anthropic, openai: config.upstreams.openai },
  });
  musher.gateway = gateway;
  // Its metering is a usage source: started (listening once a key is configured) and stopped with the others.
  musher.sources.add(new GatewayMeteringSource(gateway, log));
  // GitHub: the receipt in the PR body, the PR watcher (a PR opened ends its task), tracker intake (the comment
  // carries the task's estimate and the picker's suggestion).
  const github = buildGithub({
    db: musher.db,
    tasks: musher.tasks,
    sessions: musher.sessions,
    policy,
    secrets,
    receipts: musher.receipts,
    estimateText: async (task) => musher.estimates.forTask(task).text,
    pickerText: async (task) => (await musher.picker.picker(task)).text,
    clock: systemClock,
    log,
    apiUrl: config.upstreams.github,
    ghBin: () => findBinary('gh', configuredBinary(config.binaries, 'gh'), env.PATH).bin,
    version,
  });
  musher.github = github;
  // Raw hook events are kept for retention.rawEventsDays: pruned now and daily.
  const retention = new RawEventRetention({
    events: musher.hookEvents,
    days: config.retention.rawEventsDays,
    failedSpoolDir: join(paths.spoolDir, FAILED_DIR),
    clock: systemClock,
    log,
  });
  let stopping = false;
  let pickupWatch: NodeJS.Timeout | undefined;
  let resolveStopped: () => void = () => undefined;
  const stopped = new Promise<void>((r) => (resolveStopped = r));
  const shutdown = async (): Promise<void> => {
    if (stopping) return;
    stopping = true;
    log.info('musher stopping');
    if (pickupWatch) clearInterval(pickupWatch);
    retention.stop();
    await server.close();
    await github.stop();
    // Stops every usage source too: the followers, the usage endpoint's poller, the gateway.
    await musher.close();
    try {
      if (readFileSync(paths.pidFile, 'utf8') === String(process.pid)) unlinkSync(paths.pidFile);
    } catch {
      // gone already
    }
    lock.release();
    resolveStopped();
  };
  const server = await startServer(musher, paths.socketFile, log, () => void shutdown());
  writeFileSync(paths.pidFile, String(process.pid), { mode: 0o600 });
  process.on('SIGTERM', () => void shutdown());
  process.on('SIGINT', () => void shutdown());
  process.on('SIGHUP', () => void shutdown());
  let exitCode = 0;
  catchStrays(log, () => {
    exitCode = 1;
    void shutdown();
  });
  log.info(`musher ${version} listening on ${paths.socketFile} (pid ${process.pid})`);
  await musher.start();
  retention.start();
  github.start();
  // A sent hand-off's pickup is learnt from its remote: asked once a minute while any is outstanding (cheap when none).
  pickupWatch = setInterval(() => {
    musher.handoff?.refreshSent((sid) => musher.sessions.get(sid)?.cwd ?? null, 55_000).catch((e: Error) => log.warn(`hand-off pickups: ${e.message}`));
  }, 60_000);
  pickupWatch.unref();
  if (interactive) {
    void musher.transcripts.idle().then(() => process.stderr.write('\nsleds: history read; musher is ready\n'));
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

/** SLEDS_TASK_QUIET_MS, when it is a whole number of milliseconds; else the default. */
function quietMs(v: string | undefined): number | undefined {
  return v !== undefined && /^\d+$/.test(v) ? Number(v) : undefined;
}
