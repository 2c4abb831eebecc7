import { existsSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { RunStateName } from '../../core/lifecycle/run.js';
import { readCheckout } from '../github/checkout.js';
import type { GithubClient } from '../github/client.js';
import type { Clock } from '../clock.js';
import type { Db } from '../store/db.js';
import { Engine, type Packs } from './engine.js';
import { defaultRunsDir } from './run-files.js';
import { buildPack, readFieldBook } from './pack.js';
import type { Checks, EngineLog, EngineNode, EngineRoute, EngineStore, Harnesses, NodeFields, PrState, PullRequests, RouteTracker, Runner, Worktrees } from './ports.js';
import { followPullRequests, openPullRequest, prBody, prFeedback, updatePullRequestBody, type PrStatus } from './pull-request.js';
import { RouteStore, type NodeRow, type RouteRow } from './route-store.js';
import { failureReport, runChecks, type Check } from './verify.js';
import { changedFiles, checkpointWorktree, commitAll, createWorktree, mergedTip, pushBranch, removeWorktree, restoreCheckpoint } from './worktree.js';
import { gitText } from '../snapshot/run-git.js';
import { GithubTrackerAdapter } from '../tracker/github.js';
import { isRouteComment, routeComment } from '../../core/routes/route-comment.js';
import { routeLine } from '../../core/routes/route-line.js';
import { newQuestionId } from './questions.js';
import { ENGINE_DEFAULTS, OVERNIGHT_DEFAULTS, type AtLimitPolicy } from '../../core/policy/schema.js';
import { receiptLineOf } from '../../core/routes/node-receipt.js';
import type { PriceTable } from '../../core/price-table.js';
import type { SeatKeyPair } from '../handoff/keys.js';
import { loadPriceTable } from '../prices.js';
import { packageRoot } from '../package-root.js';
import { seatHandle } from '../config/handle.js';
import { nodeReceipts } from './node-receipts.js';
import { PlatformKeyStore } from '../store/platform-key.js';
import { nightSessionId, nightTierEnv, type MintBatchToken } from './night-tier.js';
import type { NightPort } from './ports.js';
import { sessionPlacer } from './place-session.js';

/**
 * The engine built from real parts: the route store on the user's SQLite, git worktrees, the policy's checks, GitHub
 * for the pull requests, detached harness processes. One function, in order, nothing assigned afterwards.
 */

export interface EngineConfig {
  owner: string;
  concurrency: number;
  leaseMs: number;
  /** What a repository's policy says of its worktrees and checks (`.sleds/policy.yml` engine block). */
  repoPolicy(repoRoot: string): RepoEnginePolicy;
  /** Ports per worktree: node n gets SLEDS_PORT_BASE = portStart + n × portBlock. */
  portStart: number;
  /** The remote nodes fetch their base from and push their branches to. */
  remote: string;
  /** The branch pull requests go to; null: the remote's default branch. */
  baseBranch: string | null;
  /** Where worktrees and run files go. */
  worktreesDir: string;
  runsDir: string;
  unknownResetWaitMs: number;
  /** Rounds further apart than this mean the machine slept (engine.ts EngineSettings); default 10 minutes. */
  asleepAfterMs?: number;
  /** A pack's largest size. */
  packMaxChars: number;
}

export interface RepoEnginePolicy {
  checks: Check[];
  /** `engine.at_limit`; none: wait for the reset. */
  atLimit?: AtLimitPolicy;
  maxVerifyAttempts: number;
  /** Each command an argv (no shell). */
  setup: string[][];
  include: string[];
  portBlock: number;
  /** The repository's overnight window at `now` (in progress, else the next) with its cap and concurrency; none: no night. */
  night?(now: number): { startMs: number; endMs: number; capMicros: number; concurrency: number } | null;
}

export interface EngineParts {
  db: Db;
  clock: Clock;
  log: EngineLog;
  github: GithubClient;
  harnesses: Harnesses;
  runner: Runner;
  env: NodeJS.ProcessEnv;
  config: EngineConfig;
  /** Each landed node's receipt is signed with the seat's Ed25519 key (as task receipts are); none or null: unsigned. */
  signingKey?: () => Promise<SeatKeyPair | null>;
  /** The price table receipts are priced with; default: the shipped one (prices/effective/). */
  prices?: PriceTable;
  /** A batch-tier gateway token from musher, for an overnight node; none: overnight nodes need a person. */
  mintBatchToken?: MintBatchToken;
  /** The seat receipts name; default: musher's (SLEDS_SEAT, config.yml's handle:, the OS user). */
  seat?: () => string;
  /** This machine's name on receipts; default: os.hostname(). */
  host?: string;
}

const OVER: readonly RunStateName[] = ['COMPLETED', 'FAILED', 'CANCELLED'];

function engineNode(r: NodeRow): EngineNode {
  return {
    routeKey: r.routeKey,
    nodeId: r.nodeId,
    title: r.title,
    brief: r.brief,
    dependsOn: r.dependsOn,
    harness: r.harness,
    model: r.model,
    state: r.run.state,
    enteredAt: r.run.enteredAt,
    sessionId: r.sessionId ?? r.run.sessionId,
    resetsAtMs: r.run.resetsAtMs,
    questionId: r.run.questionId,
    problem: r.run.problem ?? null,
    fencingToken: r.fencingToken,
    leaseOwner: r.leaseOwner,
    leaseExpiresAt: r.leaseExpiresAt,
    worktree: r.worktree,
    branch: r.branch,
    baseSha: r.baseSha,
    prNumber: r.prNumber,
    prUrl: r.prUrl,
    verifyFailures: r.verifyFailures,
    lastError: r.lastError,
    logPath: r.logPath,
    summary: r.summary,
    band: r.band,
    overnight: r.overnight,
    capMicros: r.capMicros,
    runtimeMs: r.run.runtimeMs,
    waitedMs: r.run.waitMs.limit + r.run.waitMs.input + r.run.waitMs.merge + r.run.waitMs.recovery + (r.run.waitMs.asleep ?? 0),
    receipt: r.receipt,
    checkpoint: r.checkpoint,
    resumeFrom: r.resumeFrom,
    resumeTranscript: r.resumeTranscript,
    baseRef: r.baseRef,
  };
}


function engineRoute(r: RouteRow): EngineRoute {
  return { key: r.key, title: r.title, tracker: r.tracker, notes: r.notes, repoRoot: r.repoRoot };
}

/** The route store as the engine sees it. */
export function engineStore(store: RouteStore): EngineStore {
  return {
    route: (key) => {
      const r = store.route(key);
      return r ? engineRoute(r) : null;
    },
    activeNodes: () => store.routes().flatMap((r) => store.nodes(r.key)).filter((n) => !OVER.includes(n.run.state)).map(engineNode),
    ready: (now) => store.ready(now).map(engineNode),
    claim: (k, id, owner, now, leaseMs) => store.claim(k, id, owner, now, leaseMs),
    takeOver: (k, id, owner, now, leaseMs) => store.takeOver(k, id, owner, now, leaseMs),
    renew: (k, id, owner, token, now, leaseMs) => store.renew(k, id, owner, token, now, leaseMs),
    step: (k, id, token, event, now, fields?: NodeFields) => {
      const r = store.step(k, id, token, event, now, fields ?? {});
      return r.ok ? { ok: true, node: engineNode(r.row) } : r;
    },
    patch: (k, id, token, fields) => store.patch(k, id, token, fields),
    node: (k, id) => {
      const r = store.node(k, id);
      return r ? engineNode(r) : null;
    },
    decisions: (k) => store.decisions(k).map((d) => ({ nodeId: d.nodeId, question: d.question, answer: d.answer, answeredBy: d.answeredBy, answeredAt: d.answeredAt })),
    answerTo: (k, id, questionId) => {
      const q = store.question(questionId);
      return q && q.routeKey === k && q.nodeId === id && q.state === 'answered' ? q.answer : null;
    },
    openQuestion: (k, id) => {
      const q = store.openQuestion(k, id);
      return q ? { id: q.id, question: q.question, escalateUntil: q.ladder.rung !== null ? q.ladder.escalateUntil : null } : null;
    },
    note: (k, id, line, at) => store.ladderNote(k, id, line, at),
    undeliveredAnswer: (k, id) => {
      const q = store.undeliveredAnswer(k, id);
      return q ? { id: q.id, question: q.question } : null;
    },
    markDelivered: (qid, at) => store.markDelivered(qid, at),
    latestQuestion: (k, id, since) => {
      const q = store.latestQuestion(k, id, since);
      return q ? { id: q.id } : null;
    },
    settleQuestion: (qid, answer, at) => {
      store.answerQuestion(qid, { choice: null, text: answer, by: 'sleds engine', at, source: 'engine' });
      store.markDelivered(qid, at);
    },
    askQuestion: (k, id, question, at, options) => store.addQuestion({ id: newQuestionId(), routeKey: k, nodeId: id, question, options: options ?? [], askedAt: at }).id,
  };
}

async function defaultBranchOf(repoRoot: string, remote: string): Promise<string> {
  const head = await gitText(['symbolic-ref', '--quiet', '--short', `refs/remotes/${remote}/HEAD`], repoRoot);
  return head ? head.slice(remote.length + 1) : 'main';
}

/** Runs git work on one repository one at a time: two fetches at once race for the same ref lock. */
function perRepository() {
  const tails = new Map<string, Promise<unknown>>();
  return <T>(repo: string, work: () => Promise<T>): Promise<T> => {
    const run = (tails.get(repo) ?? Promise.resolve()).then(work, work);
    tails.set(repo, run.catch(() => undefined));
    return run;
  };
}

function gitWorktrees(c: EngineConfig, env: NodeJS.ProcessEnv): Worktrees {
  const oneAtATime = perRepository();
  return {
    // A job made at a wall starts from that session's work (its HEAD and uncommitted changes), kept under refs/sleds/night/.
    baseFor: (route, n) => (n.baseRef ? Promise.resolve(n.baseRef) : oneAtATime(route.repoRoot, async () => mergedTip(route.repoRoot, c.remote, c.baseBranch ?? (await defaultBranchOf(route.repoRoot, c.remote)), []))),
    create: (route, node, baseRef, slot) => {
      const policy = c.repoPolicy(route.repoRoot);
      return oneAtATime(route.repoRoot, () => createWorktree({
        repoRoot: route.repoRoot,
        routeKey: route.key,
        nodeId: node.nodeId,
        baseRef,
        worktreesDir: c.worktreesDir,
        setup: policy.setup,
        include: policy.include,
        portBase: c.portStart + slot * policy.portBlock,
        env,
      }));
    },
    remove: (route, path) => removeWorktree(route.repoRoot, path),
    commitAll: (path, message) => commitAll(path, message),
    checkpoint: (path, branch, message) => checkpointWorktree(path, branch, message),
    restore: (path, commit) => restoreCheckpoint(path, commit),
    exists: (path) => existsSync(path),
    changedFiles: (path, baseSha) => changedFiles(path, baseSha),
    push: (route, path, branch) => oneAtATime(route.repoRoot, () => pushBranch(path, c.remote, branch)),
    fieldBook: (path) => readFieldBook(path),
  };
}

function policyChecks(c: EngineConfig, env: NodeJS.ProcessEnv, clock: Clock): Checks {
  return {
    maxAttempts: (route) => c.repoPolicy(route.repoRoot).maxVerifyAttempts,
    run: async (route, worktree) => {
      const v = await runChecks(worktree, c.repoPolicy(route.repoRoot).checks, env, clock);
      return { ok: v.ok, summary: v.summary, failures: failureReport(v) };
    },
  };
}

/** Why an open pull request goes back to its node's session, with a fingerprint so the same one sends it back once. */
export function sendBackOf(s: PrStatus, head: string): PrState['sendBack'] {
  const f = prFeedback(s);
  return f ? { ...f, fingerprint: `${f.kind}@${head}:${s.reviewComments.length}` } : null;
}

function githubPullRequests(gh: GithubClient, c: EngineConfig, clock: Clock, store: RouteStore): PullRequests {
  const repoOf = async (route: EngineRoute) => {
    const checkout = await readCheckout(route.repoRoot);
    if (!checkout?.repo) throw new Error(`the repository at ${route.repoRoot} has no GitHub remote — add one (git remote add …) so the engine can open its pull requests`);
    return checkout.repo;
  };
  return {
    open: async (route, node, body) => {
      const repo = await repoOf(route);
      const base = c.baseBranch ?? (await defaultBranchOf(route.repoRoot, c.remote));
      return openPullRequest(gh, { owner: repo.owner, repo: repo.name, head: node.branch!, base, title: `${node.title} (${route.key}/${node.nodeId})`, body });
    },
    updateBody: async (route, number, body) => {
      const repo = await repoOf(route);
      await updatePullRequestBody(gh, { owner: repo.owner, repo: repo.name, number, body });
    },
    follow: async (route, numbers) => {
      const repo = await repoOf(route);
      const round = await followPullRequests(gh, repo.owner, repo.name, numbers, clock);
      if (round.error && round.statuses.length === 0) throw new Error(round.error);
      const heads = new Map(store.nodes(route.key).map((n) => [n.prNumber, n.branch]));
      const states: PrState[] = [];
      for (const s of round.statuses) {
        const branch = heads.get(s.number);
        const head = branch ? ((await gitText(['rev-parse', '--verify', '--quiet', `refs/heads/${branch}`], route.repoRoot)) ?? '') : '';
        states.push({ number: s.number, state: s.state, sendBack: s.state === 'OPEN' ? sendBackOf(s, head) : null });
      }
      return { states, retryAfterMs: round.retryAfterMs };
    },
  };
}

function routePacks(store: RouteStore, worktrees: Worktrees, maxChars: number, clock: Clock, night?: NightPort): Packs {
  const decisionsOf = (key: string) => store.decisions(key).map((d) => ({ question: d.question, answer: d.answer, answeredBy: d.answeredBy, at: d.answeredAt }));
  return {
    forNode: async ({ route, node, feedback }) => {
      const nodes = store.nodes(route.key);
      const dependencies = node.dependsOn
        .map((id) => nodes.find((n) => n.nodeId === id))
        .filter((n): n is NodeRow => n !== undefined)
        .map((n) => ({ nodeId: n.nodeId, title: n.title, prUrl: n.prUrl, summary: n.summary ?? n.brief }));
      return buildPack({
        route: { key: route.key, title: route.title, notes: route.notes, tracker: route.tracker },
        node: { id: node.nodeId, title: node.title, brief: node.brief },
        fieldBook: node.worktree ? await worktrees.fieldBook(node.worktree) : [],
        decisions: decisionsOf(route.key),
        dependencies,
        feedback,
        limits: { maxChars },
      });
    },
    prBody: async (route, node, verification) =>
      prBody({
        brief: node.brief,
        summary: node.summary,
        decisions: store
          .decisions(route.key)
          .filter((d) => d.nodeId === node.nodeId)
          .map((d) => ({ question: d.question, answer: d.answer, answeredBy: d.answeredBy, at: d.answeredAt, rung: d.rung, reason: d.reason })),
        receipt: receiptLineOf(node.receipt),
        route: { key: route.key, title: route.title, nodeId: node.nodeId, tracker: route.tracker },
        verification,
        night: node.overnight && night ? { capMicros: node.capMicros ?? night.windowFor(route, clock.now())?.capMicros ?? OVERNIGHT_DEFAULTS.capMicros, spentMicros: night.spentMicros(node) } : null,
      }),
  };
}

/** A route whose `tracker:` is a GitHub issue (`acme/shop#12`) keeps one comment there; other trackers are not written to. */
const GITHUB_ITEM = /^[A-Za-z0-9][A-Za-z0-9-]{0,38}\/[A-Za-z0-9._-]{1,100}#\d{1,9}$/;

function githubRouteTracker(gh: GithubClient, store: RouteStore, clock: Clock, log: EngineLog): RouteTracker {
  const issues = new GithubTrackerAdapter(gh, () => null, clock);
  const commentOf = new Map<string, string>();
  return {
    changed: async (route) => {
      const item = route.tracker;
      if (!item || !GITHUB_ITEM.test(item)) return;
      const row = store.route(route.key);
      if (!row) return;
      const nodes = store.nodes(route.key);
      const line = routeLine(nodes.map((n) => ({ state: n.run.state, band: n.band, receipt: n.receipt })), row, store.decisions(route.key));
      const body = routeComment(route, nodes.map((n) => ({ nodeId: n.nodeId, title: n.title, wave: n.wave, state: n.run.state, prNumber: n.prNumber, prUrl: n.prUrl })), line);
      let ref = commentOf.get(route.key) ?? null;
      if (ref === null) {
        const found = await issues.findComment(item, (b) => isRouteComment(b, route.key));
        if (!found.ok) return log.warn(`${route.key}: the comment on ${item} was not updated: ${found.error}`);
        ref = found.value;
      }
      const r = ref === null ? await issues.comment(item, body) : await issues.updateComment(item, ref, body);
      if (!r.ok) return log.warn(`${route.key}: the comment on ${item} was not updated: ${r.error}`);
      if (ref === null && typeof r.value === 'string') commentOf.set(route.key, r.value);
      else if (ref !== null) commentOf.set(route.key, ref);
    },
  };
}

export function composeEngine(p: EngineParts): { engine: Engine; store: RouteStore } {
  const store = new RouteStore(p.db, p.clock);
  const es = engineStore(store);
  const worktrees = gitWorktrees(p.config, p.env);
  const night = nightPort(p);
  const engine = new Engine({
    store: es,
    worktrees,
    checks: policyChecks(p.config, p.env, p.clock),
    prs: githubPullRequests(p.github, p.config, p.clock, store),
    runner: p.runner,
    harnesses: p.harnesses,
    packs: routePacks(store, worktrees, p.config.packMaxChars, p.clock, night),
    clock: p.clock,
    log: p.log,
    tracker: githubRouteTracker(p.github, store, p.clock, p.log),
    atLimit: (route) => p.config.repoPolicy(route.repoRoot).atLimit ?? ENGINE_DEFAULTS.atLimit,
    night,
    sessions: sessionPlacer(p.env),
    receipts: nodeReceipts({
      runner: p.runner,
      prices: p.prices ?? loadPriceTable(packageRoot()),
      clock: p.clock,
      log: p.log,
      seat: p.seat ?? (() => seatHandle() ?? 'me'),
      host: p.host ?? hostname(),
      signingKey: p.signingKey ?? (async () => null),
      repoOf: async (repoRoot) => {
        const repo = (await readCheckout(repoRoot))?.repo;
        return repo ? `${repo.owner}/${repo.name}` : null;
      },
    }),
    settings: { owner: p.config.owner, leaseMs: p.config.leaseMs, concurrency: p.config.concurrency, runsDir: p.config.runsDir, unknownResetWaitMs: p.config.unknownResetWaitMs, ...(p.config.asleepAfterMs ? { asleepAfterMs: p.config.asleepAfterMs } : {}) },
  });
  return { engine, store };
}

/** The night from the repository's policy, the gateway's metering on the same store, and musher's batch-tier tokens. */
function nightPort(p: EngineParts): NightPort {
  const spend = new PlatformKeyStore(p.db);
  return {
    windowFor: (route, now) => p.config.repoPolicy(route.repoRoot).night?.(now) ?? null,
    spentMicros: (n) => spend.sessionsSpendMicros([nightSessionId(n)]),
    env: async (route, n, harness, untilMs) => {
      if (!p.mintBatchToken) return { ok: false, why: 'this engine cannot reach musher for a half-price gateway token' };
      // Good until the window closes, and an hour more: a job that started before the close may run on past it.
      const ttlMs = Math.max(untilMs - p.clock.now(), 0) + 3_600_000;
      return nightTierEnv(p.mintBatchToken, route, n, harness, ttlMs);
    },
  };
}

export const DEFAULT_WORKTREES_DIR = (dataDir: string) => join(dataDir, 'worktrees');
/** Where the engine keeps its runs (musher/engine/run-files.ts: `sleds attach` reads them there too). */
export const DEFAULT_RUNS_DIR = defaultRunsDir;
