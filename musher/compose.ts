import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { claudeConfigDir, type SledsPaths } from '../core/paths.js';
import { codexSessionsDir } from '../harnesses/codex/rollout.js';
import { Musher, openBase } from './app.js';
import type { ApiServices } from './api/services.js';
import { daemonHandoff, daemonWallWiring } from './walls/daemon-wiring.js';
import { PolicyLoader } from './policy/loader.js';
import { policyPort } from './policy/port.js';
import type { Clock } from './clock.js';
import type { Log } from './log.js';
import { packageRoot } from './package-root.js';
import { startSlackQuestions, type SlackQuestions } from './notify/slack-questions.js';
import { routeQuestionCards, slackAnswerer } from './notify/route-question-cards.js';
import { postMessage } from './notify/slack.js';
import { seatName } from './walls/wiring.js';
import { loadPriceTable } from './prices.js';
import { UsageEndpointSource } from './usage-sources/usage-endpoint.js';
import { GatewayMeteringSource } from './usage-sources/gateway-metering.js';
import { readClaudeCredentials } from './quota/credentials.js';
import { GatewayService } from './gateway/service.js';
import type { BatchSettings } from './gateway/batch-route.js';
import { zoneUtcOffset } from './gateway/allowance.js';
import { openSecretStore } from './secrets/store.js';
import { buildGithub, type GithubParts } from './github/wiring.js';
import { loadSeatKeys } from './handoff/keys.js';
import { loadConfig } from './config/load.js';
import { configuredBinary } from './config/schema.js';
import { findBinary } from './find-binary.js';
import { findBinaries } from './resume/binaries.js';
import { RawEventRetention } from './store/retention.js';
import { FAILED_DIR } from './ingest/spool-drain.js';

/** What the composition root is given: where musher lives, whose machine it is, its clock and zone, its log. */
export interface ComposeOptions {
  paths: SledsPaths;
  env: NodeJS.ProcessEnv;
  homeDir: string;
  clock: Clock;
  /** The user's time zone (IANA): "9am", the day's spend and the gateway's daily caps are read in it. */
  timeZone: string;
  log: Log;
  /** Reading the history at the first start, on a terminal; none in the background. */
  onBackfillProgress?: (done: number, total: number) => void;
}

/** musher composed: the daemon's services, started and stopped in their order. */
export interface House {
  musher: Musher;
  /** What the routes see (musher/api/services.ts). */
  services: ApiServices;
  version: string;
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** The time zone of this process (TZ, else the system's): what the composed config uses when nothing else says. */
export function processTimeZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone;
}

/**
 * Builds musher in one explicit order, each service given what it needs when it is made (nothing is assigned to a
 * service after it is built): config → stores → secrets and policy → hand-offs → gateway → usage endpoint → the
 * wall's wiring → musher → GitHub → retention → the routes' view.
 */
export function compose(o: ComposeOptions): House {
  const { paths, env, clock, log, timeZone } = o;
  // Upstreams, binaries and retention come from the user's config.yml alone, never from the environment of the
  // session whose hook happened to start musher (a hostile repository's session could set it).
  const settings = loadConfig(paths.configDir, o.homeDir);
  if (settings.error) log.error(settings.error);
  for (const w of settings.warnings) log.warn(w);
  const config = settings.config;
  const root = packageRoot();
  const version = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version;
  const prices = loadPriceTable(root);
  const claudeDir = claudeConfigDir(env, o.homeDir);
  const codexDir = codexSessionsDir(env, o.homeDir);

  // 1. The database and its stores: everything below stands on them.
  const base = openBase({ dbFile: paths.dbFile, claudeConfigDir: claudeDir, codexSessionsDir: codexDir, homeDir: o.homeDir, log });
  // 2. The workspace policy (each repository's .sleds/policy.yml over the user's own) and the platform keys.
  const policy = policyPort(new PolicyLoader({ configDir: paths.configDir, homeDir: o.homeDir, log }), paths.configDir);
  const secrets = openSecretStore(paths);
  // 3. Sealed hand-offs.
  const handoff = daemonHandoff({
    paths,
    clock,
    log,
    secrets,
    policy,
    handoffs: base.handoffs,
    histories: base.histories,
    roster: base.roster,
    timeZone,
    claudeConfigDir: claudeDir,
    codexHome: dirname(codexDir),
    notify: { slackApiUrl: config.upstreams.slack, binaries: { notifySend: config.binaries.notifySend, osascript: config.binaries.osascript } },
  });
  // 4. The platform-key gateway: listens (127.0.0.1 only) once a key is configured, now or at the first token minted.
  const gateway = new GatewayService({
    db: base.db,
    platformKeys: base.platformKey,
    prices,
    clock,
    log,
    secrets,
    // The seat's caps from the policy of the repository the resumed session works in.
    allowance: (seat, grant) => policy.forDirectory(base.sessions.get(grant.sessionId)?.cwd ?? null).allowance(seat),
    utcOffset: zoneUtcOffset(timeZone),
    env,
    // One port across restarts: a resumed session's ANTHROPIC_BASE_URL stays valid.
    portFile: join(paths.dataDir, 'gateway.json'),
    upstreams: { anthropic: config.upstreams.anthropic, openai: config.upstreams.openai },
    batch: Object.fromEntries(
      Object.entries({ pollMs: config.gateway.batchPollMs, maxPollMs: config.gateway.batchMaxPollMs, keepaliveMs: config.gateway.batchKeepaliveMs }).filter(([, v]) => v !== null),
    ) as Partial<BatchSettings>,
  });
  // 5. Claude's usage endpoint: per-model weekly bars and credits. Sends nothing until there is a login to use.
  const usageEndpoint = new UsageEndpointSource(
    {
      log,
      readCredentials: () => readClaudeCredentials({ claudeConfigDir: claudeDir, configDirFromEnv: Boolean(env.CLAUDE_CONFIG_DIR), now: () => clock.now() }),
      baseUrl: config.upstreams.claudeUsage,
      lockFile: join(paths.runtimeDir, 'usage-poller.lock'),
      stateFile: join(paths.runtimeDir, 'usage-poller.json'),
      userAgent: `sleds/${version} (usage poller)`,
    },
    { db: base.db, bars: base.bars, credits: base.credits, account: () => base.accounts.defaultClaude() },
    clock,
  );
  // 6. musher: the wall (its policy, key, gateway and hand-offs), the followers, the statusline, tasks and receipts.
  const musher = new Musher({
    paths,
    clock,
    log,
    prices,
    claudeConfigDir: claudeDir,
    codexSessionsDir: codexDir,
    homeDir: o.homeDir,
    version,
    timeZone,
    base,
    wall: daemonWallWiring({ policy, secrets, platformKey: base.platformKey, timeZone, gateway, handoff }),
    // The gateway's metering is a usage source: started (listening once a key is configured) and stopped with the others.
    extraSources: [usageEndpoint, new GatewayMeteringSource(gateway, log)],
    // Receipts are signed with the seat's Ed25519 key, read when a receipt is written (keys made later count).
    signingKey: async () => (await loadSeatKeys(secrets))?.ed25519 ?? null,
    // The quiet period before a task whose sessions all ended gets its receipt (default 30 minutes).
    taskQuietMs: quietMs(env.SLEDS_TASK_QUIET_MS),
    // The morning digest goes to the policy's channel with the bot token (`sleds slack set-token`).
    postToSlack: (channel, message) => postMessage(channel, message, { secrets, baseUrl: config.upstreams.slack, log }),
    binaries: () => findBinaries(config.binaries),
    onBackfillProgress: o.onBackfillProgress,
  });
  // 7. GitHub: the receipt in the PR body, the PR watcher (a PR opened ends its task), tracker intake (the comment
  // carries the task's estimate and the picker's suggestion).
  const github: GithubParts = buildGithub({
    db: base.db,
    tasks: musher.tasks,
    sessions: base.sessions,
    policy,
    secrets,
    receipts: musher.receipts,
    estimateText: async (task) => musher.estimates.forTask(task).text,
    pickerText: async (task) => (await musher.picker.picker(task)).text,
    clock,
    log,
    apiUrl: config.upstreams.github,
    ghBin: () => findBinary('gh', configuredBinary(config.binaries, 'gh'), env.PATH).bin,
    version,
  });
  // 8. Raw hook events are kept for retention.rawEventsDays: pruned now and daily.
  const retention = new RawEventRetention({
    events: base.hookEvents,
    days: config.retention.rawEventsDays,
    failedSpoolDir: join(paths.spoolDir, FAILED_DIR),
    clock,
    log,
  });
  // 9. Route nodes' parked questions as Slack two-button cards, answered through Socket Mode (started with musher).
  let slackQuestions: SlackQuestions | null = null;
  const startQuestionCards = () => {
    const rosterAt = (repo: string) => base.roster.rosterAt(repo);
    slackQuestions = startSlackQuestions({
      secrets,
      baseUrl: config.upstreams.slack,
      log,
      clock,
      timeZone,
      onAnswer: slackAnswerer({
        rosterAt,
        repoOf: (id) => {
          const q = musher.routes.question(id);
          return q ? (musher.routes.route(q.routeKey)?.repoRoot ?? null) : null;
        },
        answer: (a) => musher.routeQuestions.answerFromSlack(a),
      }),
    });
    musher.bindQuestionCards(routeQuestionCards({ slack: slackQuestions, rosterAt, seat: seatName, posted: (id, at) => musher.routes.setQuestionMessage(id, at), log }));
  };
  let pickupWatch: NodeJS.Timeout | undefined;
  // The ladder's escalations that ran out (issue 15 § 5) park once a minute: their cards say so, their slots go free.
  let escalationWatch: NodeJS.Timeout | undefined;
  return {
    musher,
    services: { core: musher, gateway, github, log },
    version,
    start: async () => {
      await musher.start();
      retention.start();
      github.start();
      startQuestionCards();
      // A sent hand-off's pickup is learnt from its remote: asked once a minute while any is outstanding (cheap when none).
      pickupWatch = setInterval(() => {
        handoff.refreshSent((sid) => base.sessions.get(sid)?.cwd ?? null, 55_000).catch((e: Error) => log.warn(`hand-off pickups: ${e.message}`));
      }, 60_000);
      pickupWatch.unref();
      escalationWatch = setInterval(() => {
        try {
          musher.routeQuestions.sweep(clock.now());
        } catch (e) {
          log.warn(`escalations: ${(e as Error).message}`);
        }
      }, 60_000);
      escalationWatch.unref();
    },
    stop: async () => {
      if (pickupWatch) clearInterval(pickupWatch);
      if (escalationWatch) clearInterval(escalationWatch);
      retention.stop();
      await github.stop();
      await slackQuestions?.stop();
      // Stops every usage source too: the followers, the usage endpoint's poller, the gateway.
      await musher.close();
    },
  };
}

/** SLEDS_TASK_QUIET_MS, when it is a whole number of milliseconds; else the default. */
function quietMs(v: string | undefined): number | undefined {
  return v !== undefined && /^\d+$/.test(v) ? Number(v) : undefined;
}
