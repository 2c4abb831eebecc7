import type { RunEvent, RunStateName } from '../../core/lifecycle/run.js';
import type { RouteBand } from '../../core/routes/band.js';
import type { HarnessAdapter } from '../../harnesses/port.js';
import type { HarnessEvent } from '../../harnesses/events.js';

/**
 * What the engine (engine.ts) needs of the world, as ports: the route store, git worktrees, the checks, the pull
 * requests, and the harness processes. compose-engine.ts binds the real ones; tests bind real git and SQLite with a
 * fake GitHub. The engine itself names no harness and runs no process: it decides, these act.
 */

export interface EngineNode {
  routeKey: string;
  nodeId: string;
  title: string;
  brief: string;
  dependsOn: string[];
  harness: string | null;
  model: string | null;
  state: RunStateName;
  /** When it entered its state. */
  enteredAt: number;
  sessionId: string | null;
  resetsAtMs: number | null;
  questionId: string | null;
  problem: string | null;
  fencingToken: number;
  leaseOwner: string | null;
  leaseExpiresAt: number | null;
  worktree: string | null;
  branch: string | null;
  baseSha: string | null;
  prNumber: number | null;
  prUrl: string | null;
  verifyFailures: number;
  lastError: string | null;
  /** The stream of its latest run (its run dir is the folder). */
  logPath: string | null;
  /** What its agent said it did and what it changed (set when it is verified). */
  summary: string | null;
  /** Its band from the estimator (the route file's), or null. */
  band: RouteBand | null;
  /** An overnight job (issue 15): it starts only in the overnight window, on the half-price tier, under its cap. */
  overnight: boolean;
  /** Its own cap (micro-dollars); null: the policy's. */
  capMicros: number | null;
  /** Time at work so far (core/lifecycle/run.ts runtimeMs), and time waiting (for a limit, an answer, a merge, a person). */
  runtimeMs: number;
  waitedMs: number;
  /** Its signed receipt (core/routes/route-line.ts NodeReceipt) once it was verified; null before. */
  receipt: unknown;
  /** Its last checkpoint: the session and the worktree commit a resume starts from (issue 15 § 4); null before one. */
  checkpoint: { sessionId: string | null; commit: string; at: number } | null;
  /** An overnight job made at a wall: the wall's harness session its first run resumes (null: it starts fresh). */
  resumeFrom: string | null;
  /** That session's transcript, placed for the node's worktree before the first run (the harness finds it by cwd). */
  resumeTranscript: string | null;
  /** The commit its worktree starts from (a wall session's work, carried); null: the remote's base branch. */
  baseRef: string | null;
}

/** Puts a session's transcript where its harness looks for it when it resumes in `cwd` (musher/engine/place-session.ts). */
export interface SessionPlacer {
  place(adapter: HarnessAdapter, transcript: string | null, cwd: string, env: Record<string, string>): Promise<void>;
}

export interface EngineRoute {
  key: string;
  title: string;
  tracker: string | null;
  notes: string | null;
  repoRoot: string;
}

export type NodeFields = Partial<Pick<EngineNode, 'sessionId' | 'worktree' | 'branch' | 'baseSha' | 'prNumber' | 'prUrl' | 'verifyFailures' | 'lastError' | 'harness' | 'model' | 'summary' | 'receipt' | 'checkpoint'>> & {
  pid?: number | null;
  logPath?: string | null;
};

/** The route store as the engine uses it (musher/engine/route-store.ts). Every write is fenced by the claim's token. */
export interface EngineStore {
  route(key: string): EngineRoute | null;
  /** Every node not over (any route), for reconcile. */
  activeNodes(): EngineNode[];
  ready(now: number): EngineNode[];
  claim(key: string, id: string, owner: string, now: number, leaseMs: number): number | null;
  takeOver(key: string, id: string, owner: string, now: number, leaseMs: number): number | null;
  renew(key: string, id: string, owner: string, token: number, now: number, leaseMs: number): boolean;
  step(key: string, id: string, token: number, event: RunEvent, now: number, fields?: NodeFields): { ok: true; node: EngineNode } | { ok: false; error: string };
  patch(key: string, id: string, token: number, fields: NodeFields): boolean;
  node(key: string, id: string): EngineNode | null;
  decisions(key: string): Array<{ nodeId: string; question: string; answer: string; answeredBy: string; answeredAt: number; rung?: string | null; reason?: string | null }>;
  /** The answer to a parked question, once a person gave it. */
  answerTo(key: string, id: string, questionId: string): string | null;
  /**
   * The node's open question (its agent called the `park` or `ask` verb during its run), if any; `escalateUntil`: an
   * escalation to the overnight on-call holds the job's slot until then (null: not escalated; past: it parked).
   */
  openQuestion(key: string, id: string): { id: string; question: string; escalateUntil?: number | null } | null;
  /** A line in the node's log (`sleds queue`): the ladder's parking of a question, the next job started. */
  note?(key: string, id: string, line: string, at: number): void;
  /** The node's question answered before its agent's turn ended, its answer not handed over yet; null when none. */
  undeliveredAnswer(key: string, id: string): { id: string; question: string } | null;
  /** The answer reached the agent, or the engine acted on it: it is never handed over again. */
  markDelivered(questionId: string, at: number): void;
  /** Parks a question the harness's own ask tool put (answered in words): its id. */
  askQuestion(key: string, id: string, question: string, at: number, options?: string[]): string;
  /** The node's latest question since `since` (its state's start), open or answered. */
  latestQuestion(key: string, id: string, since: number): { id: string } | null;
  /** Answers an open question the engine asked itself, once it no longer matters (the limit reset first). */
  settleQuestion(questionId: string, answer: string, at: number): void;
}

/**
 * The night, as the engine asks it (issue 15 § 2–4): the overnight window of a route's repository, what an overnight
 * node has spent on the half-price tier, and the environment that sends its harness there.
 */
export interface NightPort {
  /** The window in progress, else the next, with the policy's cap and concurrency; null: the policy has none. */
  windowFor(route: EngineRoute, now: number): { startMs: number; endMs: number; capMicros: number; concurrency: number } | null;
  /** What the node's overnight runs have spent so far (the gateway's metering of its batch-tier token), micro-dollars. */
  spentMicros(n: EngineNode): number;
  /** The environment that points the node's harness at the gateway's half-price tier, good until `untilMs`. */
  env(route: EngineRoute, n: EngineNode, harness: string, untilMs: number): Promise<{ ok: true; env: Record<string, string>; args: string[] } | { ok: false; why: string }>;
}

export interface Worktrees {
  /** The base a node starts from: the remote's base branch after a fetch (its dependencies are merged into it). */
  baseFor(route: EngineRoute, node: EngineNode): Promise<string>;
  create(route: EngineRoute, node: EngineNode, baseRef: string, slot: number): Promise<{ path: string; branch: string; baseSha: string }>;
  remove(route: EngineRoute, path: string): Promise<void>;
  /** The files the node's branch changed since its base. */
  changedFiles(path: string, baseSha: string): Promise<string[]>;
  /** Commits what the agent left uncommitted; null when nothing changed. */
  commitAll(path: string, message: string): Promise<string | null>;
  /**
   * A commit of the worktree as it is now (tracked, untracked, uncommitted), made without touching its branch, index
   * or files, and kept under refs/sleds/checkpoints/<branch>: the branch's head itself when nothing is uncommitted.
   */
  checkpoint(path: string, branch: string, message: string): Promise<string>;
  /** The worktree's files as a checkpoint left them (its branch and index untouched: the work is uncommitted again). */
  restore(path: string, commit: string): Promise<void>;
  /** Whether the worktree is still there (a folder deleted, a machine rebuilt: it is not). */
  exists(path: string): boolean;
  push(route: EngineRoute, path: string, branch: string): Promise<void>;
  /** The field book the pack carries (CLAUDE.md, AGENTS.md of the worktree). */
  fieldBook(path: string): Promise<Array<{ name: string; text: string }>>;
}

export interface CheckReport {
  ok: boolean;
  summary: string;
  /** The failing checks' log tails, for the agent. */
  failures: string;
}

export interface Checks {
  /** The route's repository's checks (its policy's `engine.verify`), run in the node's worktree. */
  run(route: EngineRoute, worktree: string): Promise<CheckReport>;
  /** How many failed verifications send a node back before it needs a person. */
  maxAttempts(route: EngineRoute): number;
}

export interface PrState {
  number: number;
  state: 'OPEN' | 'MERGED' | 'CLOSED';
  /** Why the node must go back to its session (failing checks, changes requested, a conflict), with what failed; else null. */
  sendBack: { kind: 'checks-failed' | 'changes-requested' | 'conflict'; text: string; fingerprint: string } | null;
}

export interface PullRequests {
  open(route: EngineRoute, node: EngineNode, body: string): Promise<{ number: number; url: string }>;
  /** Writes the body again (a node verified after a send-back: its new receipt). */
  updateBody(route: EngineRoute, number: number, body: string): Promise<void>;
  /** One round for every open pull request of a repository; `retryAfterMs` when GitHub asked to wait. */
  follow(route: EngineRoute, numbers: number[]): Promise<{ states: PrState[]; retryAfterMs: number | null }>;
}

/** A harness process the engine started, or found still running after a restart. */
export interface RunHandle {
  readonly pid: number;
  readonly logPath: string;
  /** The stream's events since the last call, in order (the whole log again after a restart: events are idempotent). */
  read(): HarnessEvent[];
  /** Whether the process has ended (read() then returns what was left). */
  ended(): boolean;
  /** Calls back when the stream grows or the process ends; returns the unsubscribe. */
  onActivity(cb: () => void): () => void;
  stop(): void;
}

export interface StartRun {
  adapter: HarnessAdapter;
  /** The harness binary (absolute). */
  bin: string;
  cwd: string;
  prompt: string;
  model: string | null;
  resumeSessionId: string | null;
  /** The node's folder: each run gets the next numbered folder in it (stdout, stderr, prompt, process record). */
  nodeDir: string;
  env: Record<string, string>;
  /** Options for the harness itself, after its own (the half-price tier's, for an overnight node); never a secret. */
  harnessArgs?: string[];
  /** The sleds MCP server the run's agent parks its questions through. */
  sledsMcp?: { command: string; args: string[]; env?: Record<string, string> } | null;
}

export interface Runner {
  start(r: StartRun): RunHandle;
  /** The run recorded in `runDir` if its process is still alive (the same process: pid and start time match), else null. */
  reattach(adapter: HarnessAdapter, runDir: string): RunHandle | null;
  /** The events a dead run left in `runDir` (read once, after a restart). */
  leftover(adapter: HarnessAdapter, runDir: string): HarnessEvent[];
}

export interface Harnesses {
  /** The adapter of a node's harness (its own, else the seat's default), or why there is none. */
  forNode(node: EngineNode): { ok: true; adapter: HarnessAdapter; bin: string; env: Record<string, string>; sledsMcp?: { command: string; args: string[]; env?: Record<string, string> } | null } | { ok: false; error: string };
}

/** A node's signed receipt, made when it is verified (musher/engine/node-receipts.ts). */
export interface NodeReceipts {
  /**
   * The receipt of a node just verified: the usage of every run in `nodeDir` (each attempt's stream, read through its
   * harness adapter) priced by model, its runtime against its band, signed with the seat's key (unsigned without one).
   */
  make(r: { route: EngineRoute; node: EngineNode; adapter: HarnessAdapter; nodeDir: string; filesTouched: number }): Promise<{ receipt: unknown; line: string }>;
}

/** The route's tracker item, kept up to date with the route (its one comment: waves, pull requests, the route's line). */
export interface RouteTracker {
  /** A node of the route opened its pull request, landed or was cancelled. Never throws: a tracker that is away is logged. */
  changed(route: EngineRoute): Promise<void>;
}

export interface EngineLog {
  info(line: string): void;
  warn(line: string): void;
}
