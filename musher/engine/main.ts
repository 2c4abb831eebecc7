import { cliCommand } from '../package-root.js';
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { homedir, hostname } from 'node:os';
import { dirname, join } from 'node:path';
import { resolvePaths } from '../../core/paths.js';
import { parseDuration } from '../../core/policy/duration.js';
import type { RunStateName } from '../../core/lifecycle/run.js';
import { systemClock } from '../clock.js';
import { loadConfig } from '../config/load.js';
import { GithubClient, ghHostnameFor, githubApiUrl } from '../github/client.js';
import { githubTokenSource } from '../github/token.js';
import { fileLog } from '../log.js';
import { PolicyLoader } from '../policy/loader.js';
import { openSecretStore } from '../secrets/store.js';
import { loadSeatKeys } from '../handoff/keys.js';
import { openStore } from '../store/db.js';
import { tightenUmask } from '../user-umask.js';
import { findBinary, TMUX_FALLBACKS } from '../find-binary.js';
import { configuredBinary, type SledsConfig } from '../config/schema.js';
import type { Clock } from '../clock.js';
import { composeEngine, DEFAULT_RUNS_DIR, DEFAULT_WORKTREES_DIR, type RepoEnginePolicy } from './compose-engine.js';
import { registryHarnesses } from './harnesses.js';
import { processRunner } from './runner.js';
import { tmuxRunner, tmuxServerEnv, tmuxSocketIn } from './runner-tmux.js';
import { terminalRunner } from './runner-terminal.js';
import type { Runner } from './ports.js';
import { engineUnit } from './service-unit.js';
import type { TickReport } from './engine.js';
import type { EnginePolicy } from '../../core/policy/schema.js';
import { nextOvernightWindow } from '../../core/policy/evaluate.js';
import { musherClient } from '../../protocol/client/client.js';
import type { MintBatchToken } from './night-tier.js';

/**
 * `sleds engine`: the engine in the foreground, with a live status line (`--once`: one reconcile round, then exit;
 * `--json` with it: the round's report). Its harness runs are detached: stopping the engine (Ctrl-C, a restart, a
 * `kill -9`) leaves them working, and the next engine reattaches to them or resumes them from their session id.
 * `sleds engine install` writes the user service that keeps it running. config.yml's `engine.runner` says how a node
 * runs: headless (the default), in a window of the engine's tmux server (`sleds attach <node>`), or in a terminal
 * from `engine.terminal.command`; `sleds engine run-window <runDir>` is what such a window runs.
 */

const PORT_START = 41_000;
/** How long the loop waits for a run's stream between rounds when nothing happens (a merge on GitHub, a reset); `--every`. */
const IDLE_MS = 15_000;

// Not unref'd: this wait is what keeps the foreground engine alive between rounds (its runs are detached).
const realWait = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

function repoPolicyOf(loader: PolicyLoader, timeZone: string): (repoRoot: string) => RepoEnginePolicy {
  return (repoRoot) => {
    const policy = loader.forDirectory(repoRoot).policy;
    const e: EnginePolicy = policy.engine;
    const checks = (['test', 'types', 'lint', 'build'] as const).flatMap((name) => (e.verify[name] ? [{ name, argv: e.verify[name]! }] : []));
    const night = (now: number) => {
      const w = policy.overnight ? nextOvernightWindow(policy, now, timeZone) : null;
      return w && policy.overnight ? { ...w, capMicros: policy.overnight.capMicros, concurrency: policy.overnight.concurrency } : null;
    };
    return { checks, maxVerifyAttempts: e.maxVerifyAttempts, setup: e.setup ? [e.setup] : [], include: e.include, portBlock: e.portBlock, atLimit: e.atLimit, night };
  };
}

/** A batch-tier gateway token from musher over its socket (musher holds the platform key; the engine never sees it). */
function musherBatchTokens(socketPath: string): MintBatchToken {
  return async (req) => {
    const r = await musherClient({ socketPath, timeoutMs: 10_000 }).call('gatewayToken', { body: { sessionId: req.sessionId, project: req.project, ttlMs: req.ttlMs, tier: 'batch' } });
    if (r.ok) return { ok: true, token: r.body.token, baseUrl: r.body.baseUrl, openaiBaseUrl: r.body.openaiBaseUrl };
    if (r.kind === 'refused') return { ok: false, why: String((r.body as { error?: unknown } | null)?.error ?? `musher refused (${r.status})`) };
    return { ok: false, why: `musher did not answer (${'reason' in r ? String(r.reason) : 'unreachable'}) — start it with sleds musher start` };
  };
}

function describeReport(r: TickReport): string[] {
  return [
    ...r.claimed.map((n) => `claimed ${n}`),
    ...r.tookOver.map((n) => `took over ${n}`),
    ...r.moved.map((m) => `${m.node}: ${m.from} → ${m.to}`),
    ...r.errors.map((e) => `error: ${e}`),
  ];
}

function counts(states: RunStateName[]): string {
  const by = new Map<string, number>();
  for (const s of states) by.set(s, (by.get(s) ?? 0) + 1);
  const label: Partial<Record<RunStateName, string>> = { RUNNING: 'running', VERIFYING: 'verifying', AWAITING_MERGE: 'awaiting merge', WAITING_FOR_LIMIT: 'waiting for a limit', WAITING_FOR_INPUT: 'waiting for an answer', RECOVERY_REQUIRED: 'need a person', QUEUED: 'queued', PREPARING: 'preparing' };
  const parts = [...by].map(([s, n]) => `${n} ${label[s as RunStateName] ?? s.toLowerCase()}`);
  return parts.length > 0 ? parts.join(' · ') : 'no nodes armed';
}

/** How this engine starts the sleds CLI again, for the wrapper a window runs. */
function selfCli(): string[] {
  return [process.execPath, ...process.execArgv, process.argv[1] ?? ''];
}

/** The runner config.yml asks for, or why it cannot be had (one line naming the key). */
export function chooseRunner(config: SledsConfig, o: { stateDir: string; env: NodeJS.ProcessEnv; clock: Clock; cli: string[] }): { ok: true; runner: Runner; kind: string } | { ok: false; error: string } {
  const e = config.engine;
  if (e.runner === 'tmux') {
    const tmux = findBinary('tmux', configuredBinary(config.binaries, 'tmux'), o.env.PATH, TMUX_FALLBACKS);
    if (!tmux.bin) return { ok: false, error: `engine.runner is tmux in config.yml, but tmux was not found (${tmux.how}) — install tmux or set binaries.tmux` };
    const socket = tmuxSocketIn(o.stateDir);
    // A Unix socket's path holds at most ~104 bytes (macOS; 108 on Linux).
    if (Buffer.byteLength(socket) > 100) return { ok: false, error: `engine.runner is tmux in config.yml, but the engine's tmux socket ${socket} is too long a path for a socket — use a shorter XDG_STATE_HOME (or SLEDS_HOME)` };
    return { ok: true, kind: `tmux (sleds attach <node>; tmux -S ${socket})`, runner: tmuxRunner({ tmuxBin: tmux.bin, socket, cli: o.cli, serverEnv: tmuxServerEnv(o.env) }) };
  }
  if (e.runner === 'terminal') {
    const [program, ...rest] = e.terminal?.command ?? [];
    const found = program ? findBinary(program, program.startsWith('/') ? { path: program, source: 'engine.terminal.command in config.yml' } : null, o.env.PATH) : null;
    if (!found?.bin) return { ok: false, error: `engine.terminal.command in config.yml: ${program ? `${program} was not found (${found?.how})` : 'no command'} — name an installed terminal, e.g. [gnome-terminal, "--", "{run}"]` };
    return { ok: true, kind: `terminal (${program})`, runner: terminalRunner({ command: [found.bin, ...rest], cli: o.cli, env: o.env, clock: o.clock }) };
  }
  return { ok: true, kind: 'headless', runner: processRunner() };
}

function refuse(json: boolean, error: string): number {
  process.stdout.write(json ? `${JSON.stringify({ error })}\n` : `sleds: ${error}\n`);
  return 1;
}

export async function runEngine(args: string[], json: boolean): Promise<number> {
  if (args[0] === 'install') return installUnit(json);
  // What a tmux window or terminal runs for a node: started by the engine, not by a person.
  if (args[0] === 'run-window') return (await import('./run-window.js')).runWindow(args.slice(1));
  tightenUmask(0o077);
  const once = args.includes('--once');
  const everyAt = args.indexOf('--every');
  let idleMs = IDLE_MS;
  if (everyAt >= 0) {
    const every = parseDuration(args[everyAt + 1]);
    if (!every.ok || every.ms < 1000) {
      const error = `--every: ${every.ok ? 'at least 1s' : every.error}`;
      process.stdout.write(json ? `${JSON.stringify({ error })}\n` : `sleds: ${error}\n`);
      return 2;
    }
    idleMs = every.ms;
  }
  const home = homedir();
  const paths = resolvePaths(process.env, home);
  for (const dir of [paths.dataDir, paths.stateDir]) mkdirSync(dir, { recursive: true, mode: 0o700 });
  const clock = systemClock;
  const settings = loadConfig(paths.configDir, home);
  // The engine does not start on half a config: a runner it cannot read would run every node some other way.
  if (settings.issue !== null) return refuse(json, `${settings.issue} — fix it, then start the engine again`);
  const config = settings.config;
  const chosen = chooseRunner(config, { stateDir: paths.stateDir, env: process.env, clock: systemClock, cli: selfCli() });
  if (!chosen.ok) return refuse(json, chosen.error);
  const tty = process.stdout.isTTY === true && !json;
  const echo = json ? null : (line: string) => process.stdout.write(`${tty ? '\r\x1b[2K' : ''}${line}\n`);
  const log = fileLog(join(paths.stateDir, 'engine.log'), clock, echo);
  const policy = new PolicyLoader({ configDir: paths.configDir, homeDir: home, log });
  const user = policy.forDirectory(paths.configDir).policy.engine;
  const apiUrl = githubApiUrl({ baseUrl: config.upstreams.github });
  const ghHost = ghHostnameFor(apiUrl);
  const secrets = openSecretStore(paths);
  const github = new GithubClient({
    token: githubTokenSource({ secrets, ghBin: () => findBinary('gh', configuredBinary(config.binaries, 'gh'), process.env.PATH).bin, ghHostname: ghHost }),
    clock,
    baseUrl: apiUrl,
    userAgent: 'sleds-engine',
    log,
  });
  const db = openStore(paths.dbFile);
  const owner = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  // The seat's harness for a node whose route names none: its repository's policy (engine.harness), else the user's.
  let routeStore: { route(key: string): { repoRoot: string } | null } | null = null;
  const defaultHarness = (n: { routeKey: string }) => {
    const repo = routeStore?.route(n.routeKey)?.repoRoot ?? null;
    return (repo ? policy.forDirectory(repo).policy.engine.harness : null) ?? user.harness;
  };
  // Every node's agent gets this sleds's MCP server, so it can park a question (SLEDS_ROUTE/SLEDS_NODE say whose).
  const [mcpCommand, ...mcpArgs] = [...cliCommand(), 'mcp'];
  const harnesses = registryHarnesses({ defaultHarness, binaries: config.binaries, env: process.env, home, portBase: () => PORT_START, sledsMcp: { command: mcpCommand!, args: mcpArgs } });
  const { engine, store } = composeEngine({
    db,
    clock,
    log,
    github,
    harnesses,
    runner: chosen.runner,
    env: process.env,
    // Each landed node's receipt is signed with the seat's Ed25519 key, read when it is made, as musher reads it.
    signingKey: async () => (await loadSeatKeys(secrets))?.ed25519 ?? null,
    host: hostname(),
    mintBatchToken: musherBatchTokens(paths.socketFile),
    config: {
      owner,
      concurrency: user.concurrency,
      leaseMs: user.leaseMs,
      repoPolicy: repoPolicyOf(policy, Intl.DateTimeFormat().resolvedOptions().timeZone),
      portStart: PORT_START,
      remote: 'origin',
      baseBranch: null,
      worktreesDir: DEFAULT_WORKTREES_DIR(paths.dataDir),
      runsDir: DEFAULT_RUNS_DIR(paths.dataDir),
      unknownResetWaitMs: 15 * 60_000,
      // Far longer than the loop waits between rounds (`--every`): a gap like that is the machine asleep.
      asleepAfterMs: Math.max(10 * 60_000, 4 * idleMs),
      packMaxChars: 60_000,
    },
  });
  routeStore = store;

  if (once) {
    const report = await engine.tick();
    await engine.settle();
    if (json) process.stdout.write(`${JSON.stringify({ owner, ...report })}\n`);
    else {
      const lines = describeReport(report);
      for (const line of lines.length > 0 ? lines : ['nothing to do: no armed node is ready and none is under way — sleds route arm <key>, then sleds start <route>/<node> (approve mode)']) process.stdout.write(`${line}\n`);
    }
    db.close();
    return report.errors.length > 0 ? 1 : 0;
  }

  let stopping = false;
  const stop = () => {
    stopping = true;
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  log.info(`sleds engine ${owner} started (concurrency ${user.concurrency}; runs ${chosen.kind}; it never merges)`);
  while (!stopping) {
    try {
      const report = await engine.tick();
      for (const line of describeReport(report)) log.info(line);
    } catch (e) {
      log.warn(`engine round failed: ${e instanceof Error ? e.message : String(e)}`);
    }
    if (tty) {
      const states = store.routes().flatMap((r) => store.nodes(r.key)).filter((n) => n.armed && !['COMPLETED', 'FAILED', 'CANCELLED'].includes(n.run.state)).map((n) => n.run.state);
      process.stdout.write(`\r\x1b[2Ksleds engine · ${counts(states)} · Ctrl-C stops the engine, not its runs`);
    }
    await engine.activity(idleMs, realWait);
  }
  if (tty) process.stdout.write('\n');
  await engine.settle();
  log.info('sleds engine stopped; its runs go on and the next engine picks them up');
  db.close();
  return 0;
}

function installUnit(json: boolean): number {
  const home = homedir();
  const cli = process.argv[1] ?? '';
  const env: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin' };
  if (process.env.SLEDS_HOME) env.SLEDS_HOME = process.env.SLEDS_HOME;
  const unit = engineUnit({ platform: process.platform, home, node: process.execPath, cli, env });
  if ('error' in unit) {
    process.stdout.write(json ? `${JSON.stringify({ error: unit.error })}\n` : `sleds: ${unit.error}\n`);
    return 1;
  }
  mkdirSync(dirname(unit.path), { recursive: true });
  writeFileSync(unit.path, unit.text, { mode: 0o644 });
  if (json) process.stdout.write(`${JSON.stringify({ path: unit.path, start: unit.start })}\n`);
  else process.stdout.write(`wrote ${unit.path}\nstart it with:\n${unit.start.map((a) => `  ${a.join(' ')}`).join('\n')}\n`);
  return 0;
}
