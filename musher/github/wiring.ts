import { parseRepoSlug, repoSlug, type GithubRepo } from '../../core/github/remote.js';
import type { Task } from '../../core/task/task.js';
import type { Clock } from '../clock.js';
import type { Log } from '../log.js';
import type { SecretStore } from '../secrets/store.js';
import type { SessionStore } from '../store/sessions.js';
import type { Db } from '../store/db.js';
import { TrackerItemStore } from '../store/tracker-items.js';
import type { TaskService } from '../tasks/service.js';
import type { PolicyPort } from '../walls/ports.js';
import { GithubTrackerAdapter, type GithubTrackerConfig } from '../tracker/github.js';
import { TrackerIntake } from '../tracker/intake.js';
import { CheckoutReader } from './checkout.js';
import { ghHostnameFor, GithubClient, githubApiUrl } from './client.js';
import type { ReceiptsPort } from './ports.js';
import { PrReceiptWriter } from './pr-receipt.js';
import { PrWatcher } from './pr-watcher.js';
import type { Timers } from '../timers.js';
import { githubTokenSource } from './token.js';

/**
 * Everything of sleds that talks to GitHub, built once by the daemon: the REST client, the receipt in the PR body,
 * the PR watcher and tracker intake. The receipts (`musher.receipts`), the estimate text and the picker text come in
 * as ports.
 */

export interface GithubWiringDeps {
  db: Db;
  tasks: TaskService;
  sessions: SessionStore;
  policy: PolicyPort;
  secrets: Pick<SecretStore, 'get'>;
  receipts: ReceiptsPort;
  /** `POST /v1/estimate {taskId}`'s text; default "no band yet". */
  estimateText?: (task: Task) => Promise<string>;
  /** `GET /v1/tasks/<id>/picker`'s text; default none. */
  pickerText?: (task: Task) => Promise<string | null>;
  clock: Clock;
  log: Log;
  /** config.yml's upstreams.github; default https://api.github.com. */
  apiUrl?: string;
  /** The `gh` asked for a token when none is stored (config.yml's binaries.gh, else PATH); null: none. */
  ghBin?: () => string | null;
  version: string;
  timers?: Timers;
  sleep?: (ms: number) => Promise<void>;
}

export interface GithubParts {
  client: GithubClient;
  prReceipts: PrReceiptWriter;
  prWatcher: PrWatcher;
  tracker: TrackerIntake;
  start(): void;
  stop(): Promise<void>;
}

export const NO_BAND_YET = 'no band yet: sizing is not available in this version yet';

/** Folders whose policies may name tracker repositories: the user's own (null) and each recent session's checkout. */
function policyFolders(sessions: SessionStore): Array<string | null> {
  const cwds = new Set(sessions.recent(50).map((s) => s.cwd).filter((c): c is string => Boolean(c)));
  return [null, ...cwds];
}

/** The union of what the policies say under `tracker.github`: every repository, the first label, the shortest wait. */
export function trackerConfig(policy: PolicyPort, folders: Array<string | null>): GithubTrackerConfig | null {
  const repos = new Map<string, GithubRepo>();
  let label: string | null = null;
  let everyMs: number | null = null;
  for (const dir of folders) {
    const gh = policy.forDirectory(dir).tracker.github;
    if (!gh) continue;
    for (const slug of gh.repos) {
      const r = parseRepoSlug(slug);
      if (r) repos.set(repoSlug(r).toLowerCase(), r);
    }
    label ??= gh.label;
    everyMs = everyMs === null ? gh.everyMs : Math.min(everyMs, gh.everyMs);
  }
  return repos.size > 0 && label !== null && everyMs !== null ? { repos: [...repos.values()], label, everyMs } : null;
}

export function buildGithub(d: GithubWiringDeps): GithubParts {
  const apiUrl = githubApiUrl({ baseUrl: d.apiUrl });
  const ghHost = ghHostnameFor(apiUrl);
  const client = new GithubClient({
    token: githubTokenSource({ secrets: d.secrets, ghBin: d.ghBin, ghHostname: ghHost }),
    clock: d.clock,
    sleep: d.sleep,
    baseUrl: apiUrl,
    userAgent: `sleds/${d.version}`,
    log: d.log,
  });
  const checkouts = new CheckoutReader(d.clock, ghHost ? [ghHost] : []);
  const taskStore = d.tasks.store;
  const prReceipts = new PrReceiptWriter({ client, tasks: taskStore, sessions: d.sessions, checkouts, log: d.log });
  const prWatcher = new PrWatcher({
    client,
    tasks: taskStore,
    sessions: d.sessions,
    checkouts,
    finish: (id) => d.receipts.finishTask(id, 'pr-opened'),
    clock: d.clock,
    log: d.log,
    timers: d.timers,
  });
  const adapter = new GithubTrackerAdapter(client, () => trackerConfig(d.policy, policyFolders(d.sessions)), d.clock);
  const tracker = new TrackerIntake({
    adapters: [adapter],
    tasks: { create: (intake) => d.tasks.create(intake), get: (id) => taskStore.get(id) },
    items: new TrackerItemStore(d.db),
    estimateText: d.estimateText ?? (async () => NO_BAND_YET),
    pickerText: d.pickerText ?? (async () => null),
    worthLevels: (task) => d.policy.forDirectory(task.repo).worthLevels,
    localRepo: async (slug) => {
      for (const s of d.sessions.recent(50)) {
        if (!s.cwd) continue;
        const c = await checkouts.read(s.cwd);
        if (c?.repo && repoSlug(c.repo).toLowerCase() === slug.toLowerCase()) return c.root;
      }
      return null;
    },
    clock: d.clock,
    log: d.log,
    timers: d.timers,
  });
  // A receipt goes into the task's PR body and onto its tracker comment.
  d.receipts.onReceipt((r, line) => {
    const taskId = r.body.taskId;
    prReceipts
      .write(taskId, line)
      .then((w) => {
        if (!w.ok) d.log.info(`github: receipt of task ${taskId} not in a PR body: ${w.error}`);
      })
      .catch((e: Error) => d.log.error(`github: receipt of task ${taskId}: ${e.message}`));
    tracker.onReceipt(taskId, line).catch((e: Error) => d.log.error(`tracker: receipt of task ${taskId}: ${e.message}`));
  });
  return {
    client,
    prReceipts,
    prWatcher,
    tracker,
    start: () => {
      prWatcher.start(PR_FIRST_ROUND_MS);
      tracker.start(0);
    },
    stop: async () => {
      await Promise.all([prWatcher.stop(), tracker.stop()]);
    },
  };
}

/** The PR watcher's first round waits a little: musher has just started and sessions are still being read. */
const PR_FIRST_ROUND_MS = 30_000;
