import type { Db } from '../store/db.js';
import type { Clock } from '../clock.js';
import { LifecycleEvents } from '../store/lifecycle-events.js';
import { newRun, stepRun, type RunEffect, type RunEvent, type RunState, type RunStateName } from '../../core/lifecycle/run.js';
import type { ParsedRoute, RouteMode } from '../../core/routes/route-file.js';
import type { RouteBand } from '../../core/routes/band.js';
import type { Rung } from '../../core/overnight/ladder.js';

export type { RouteMode } from '../../core/routes/route-file.js';
export type { RouteBand } from '../../core/routes/band.js';

/**
 * The routes, their nodes and the decisions taken on them (issue 14 § 2); the only writer of these tables.
 *
 * Every move of a node's run is a step of core/lifecycle/run.ts, applied with `UPDATE … WHERE state = ? AND
 * fencing_token = ?` and appended to lifecycle_events (kind 'run', id and correlation id `<route>/<node>`) in one
 * transaction. Claims and take-overs raise the fencing token in one conditional UPDATE, so of two engines on the same
 * store (two processes, two connections) exactly one gets a node, and the one that lost its lease writes nothing.
 * Writes run in IMMEDIATE transactions: the read that the conditional UPDATE checks is never a stale snapshot.
 */

export interface RouteRow {
  key: string;
  title: string;
  tracker: string | null;
  mode: RouteMode;
  notes: string | null;
  repoRoot: string;
  filePath: string;
  createdAt: number;
  updatedAt: number;
}

export interface NodeRow {
  routeKey: string;
  nodeId: string;
  title: string;
  brief: string;
  dependsOn: string[];
  area: string | null;
  harness: string | null;
  model: string | null;
  overnight: boolean;
  /** Its own overnight cap (micro-dollars); null: the policy's. */
  capMicros: number | null;
  band: RouteBand | null;
  wave: number;
  armed: boolean;
  approved: boolean;
  run: RunState;
  fencingToken: number;
  leaseOwner: string | null;
  leaseExpiresAt: number | null;
  sessionId: string | null;
  pid: number | null;
  logPath: string | null;
  worktree: string | null;
  branch: string | null;
  baseSha: string | null;
  prNumber: number | null;
  prUrl: string | null;
  verifyFailures: number;
  lastError: string | null;
  receipt: unknown | null;
  /** What its agent said it did (the last turn's final text), for its PR and the nodes after it. */
  summary: string | null;
  /** An overnight job made at a wall: the wall's harness session its first run resumes; null: it starts fresh. */
  resumeFrom: string | null;
  /** That session's transcript as the wall's session left it (placed for the node's worktree before it resumes). */
  resumeTranscript: string | null;
  /** The commit its worktree starts from (a wall session's work, carried); null: the remote's base branch. */
  baseRef: string | null;
  /** Its last checkpoint (issue 15 § 4): the session and the worktree's commit a resume starts from; null before one. */
  checkpoint: NodeCheckpoint | null;
}

export interface NodeCheckpoint {
  sessionId: string | null;
  /** A commit of the worktree as it was (on the branch's head, kept under refs/sleds/checkpoints/…). */
  commit: string;
  at: number;
}

/** An overnight job (core/overnight/night-job.ts): a route of one node, made by musher, with no file in the repository. */
export interface NewNightJob {
  key: string;
  nodeId: string;
  title: string;
  brief: string;
  repoRoot: string;
  harness: string | null;
  model: string | null;
  /** At standard prices, as every node's band (the night halves it). */
  band: RouteBand | null;
  capMicros: number | null;
  resumeFrom: string | null;
  resumeTranscript: string | null;
  baseRef: string | null;
  /** What queued it (`exit 3 at a wall`, `/sled overnight`, `the picker`), kept as the route's notes. */
  from: string;
  /** The wall it was queued at (exit 3): `/sled cancel` there ends it. */
  wallId: string | null;
}

/** A job route's file path: it has no file (route files are loaded around it, never over it). */
export const NIGHT_JOB_FILE = '';
export const isNightJobRoute = (r: Pick<RouteRow, 'filePath'>): boolean => r.filePath === NIGHT_JOB_FILE;

export type NodePatch = Partial<
  Pick<NodeRow, 'sessionId' | 'pid' | 'logPath' | 'worktree' | 'branch' | 'baseSha' | 'prNumber' | 'prUrl' | 'verifyFailures' | 'lastError' | 'receipt' | 'harness' | 'model' | 'summary' | 'checkpoint'>
>;

export interface DecisionRow {
  id: number;
  routeKey: string;
  nodeId: string;
  question: string;
  options: string[];
  answer: string;
  answeredBy: string;
  answeredAt: number;
  source: string;
  /** The ladder's rung that took it (issue 15 § 5); null: a decision from before the ladder. */
  rung: Rung | null;
  /** Why that rung took it ("reversible, low risk: took the agent's first option"); null when a person simply answered. */
  reason: string | null;
}

export type NewDecision = Omit<DecisionRow, 'id' | 'rung' | 'reason'> & { rung?: Rung; reason?: string | null };

/** A letter answer: A and B for the park verb, up to D for the ask verb's options. */
export type AnswerChoice = 'A' | 'B' | 'C' | 'D';
const CHOICE_INDEX: Record<AnswerChoice, number> = { A: 0, B: 1, C: 2, D: 3 };
const isChoice = (v: unknown): v is AnswerChoice => v === 'A' || v === 'B' || v === 'C' || v === 'D';

/** How an ask-verb question was handled on the ladder (null fields: a question parked with the park verb). */
export interface QuestionLadder {
  reversible: boolean | null;
  risk: 'low' | 'high' | null;
  /** 'escalated' while its on-call may answer; 'parked' once the time ran out (a late answer still resumes it). */
  rung: 'escalated' | 'parked' | null;
  escalatedTo: string | null;
  /** Until when it holds its job's overnight slot. */
  escalateUntil: number | null;
  parkedAt: number | null;
}

/** A node's parked question (issue 14 § 10), open until someone answers it. */
export interface RouteQuestionRow {
  id: string;
  routeKey: string;
  nodeId: string;
  question: string;
  /** Two for the park verb (A, B); none when the harness's own ask tool asked (any answer in words). */
  options: string[];
  askedAt: number;
  state: 'open' | 'answered';
  choice: AnswerChoice | null;
  answer: string | null;
  answeredBy: string | null;
  answeredAt: number | null;
  source: string | null;
  slack: { channel: string; ts: string } | null;
  ladder: QuestionLadder;
}

export type AnswerOutcome =
  | { ok: true; question: RouteQuestionRow }
  /** Answered before (by someone else, or the same tap twice): the first answer stands. */
  | { ok: false; kind: 'answered'; question: RouteQuestionRow }
  | { ok: false; kind: 'unknown' | 'bad-choice'; error: string };

const TERMINAL: readonly RunStateName[] = ['COMPLETED', 'FAILED', 'CANCELLED'];

/** A node's entity id in lifecycle_events, and its correlation id. */
export const runId = (key: string, id: string): string => `${key}/${id}`;

const PATCH_COLUMNS: Record<keyof NodePatch, string> = {
  sessionId: 'session_id',
  pid: 'pid',
  logPath: 'log_path',
  worktree: 'worktree',
  branch: 'branch',
  baseSha: 'base_sha',
  prNumber: 'pr_number',
  prUrl: 'pr_url',
  verifyFailures: 'verify_failures',
  lastError: 'last_error',
  receipt: 'receipt',
  checkpoint: 'checkpoint',
  summary: 'summary',
  harness: 'harness',
  model: 'model',
};

function patchSql(patch: NodePatch): { sets: string[]; params: Record<string, unknown> } {
  const sets: string[] = [];
  const params: Record<string, unknown> = {};
  for (const [field, column] of Object.entries(PATCH_COLUMNS) as Array<[keyof NodePatch, string]>) {
    if (!(field in patch)) continue;
    const v = patch[field];
    sets.push(`${column} = @p_${column}`);
    params[`p_${column}`] = field === 'receipt' || field === 'checkpoint' ? (v === null || v === undefined ? null : JSON.stringify(v)) : (v ?? null);
  }
  return { sets, params };
}

function toQuestion(r: Record<string, unknown>): RouteQuestionRow {
  return {
    id: r.id as string,
    routeKey: r.route_key as string,
    nodeId: r.node_id as string,
    question: r.question as string,
    options: parseJson<string[]>(r.options, []),
    askedAt: r.asked_at as number,
    state: r.state === 'answered' ? 'answered' : 'open',
    choice: isChoice(r.choice) ? r.choice : null,
    answer: (r.answer as string | null) ?? null,
    answeredBy: (r.answered_by as string | null) ?? null,
    answeredAt: (r.answered_at as number | null) ?? null,
    source: (r.source as string | null) ?? null,
    slack: r.slack_channel && r.slack_ts ? { channel: r.slack_channel as string, ts: r.slack_ts as string } : null,
    ladder: {
      reversible: r.reversible === null || r.reversible === undefined ? null : r.reversible === 1,
      risk: r.risk === 'low' || r.risk === 'high' ? r.risk : null,
      rung: r.rung === 'escalated' || r.rung === 'parked' ? r.rung : null,
      escalatedTo: (r.escalated_to as string | null) ?? null,
      escalateUntil: (r.escalate_until as number | null) ?? null,
      parkedAt: (r.parked_at as number | null) ?? null,
    },
  };
}

function parseJson<T>(text: unknown, fallback: T): T {
  if (typeof text !== 'string') return fallback;
  try {
    return JSON.parse(text) as T;
  } catch {
    // a column we wrote as JSON that does not parse: read as absent
    return fallback;
  }
}

const RUNGS: readonly Rung[] = ['context', 'decided', 'on-call', 'person'];

function toDecision(r: Record<string, unknown>): DecisionRow {
  return {
    id: r.id as number,
    routeKey: r.route_key as string,
    nodeId: r.node_id as string,
    question: r.question as string,
    options: parseJson<string[]>(r.options, []),
    answer: r.answer as string,
    answeredBy: r.answered_by as string,
    answeredAt: r.answered_at as number,
    source: r.source as string,
    rung: RUNGS.includes(r.rung as Rung) ? (r.rung as Rung) : null,
    reason: (r.reason as string | null) ?? null,
  };
}

function toRoute(r: Record<string, unknown>): RouteRow {
  return {
    key: r.key as string,
    title: r.title as string,
    tracker: (r.tracker as string | null) ?? null,
    mode: r.mode as RouteMode,
    notes: (r.notes as string | null) ?? null,
    repoRoot: r.repo_root as string,
    filePath: r.file_path as string,
    createdAt: r.created_at as number,
    updatedAt: r.updated_at as number,
  };
}

function toNode(r: Record<string, unknown>): NodeRow {
  return {
    routeKey: r.route_key as string,
    nodeId: r.node_id as string,
    title: r.title as string,
    brief: r.brief as string,
    dependsOn: parseJson<string[]>(r.depends_on, []),
    area: (r.area as string | null) ?? null,
    harness: (r.harness as string | null) ?? null,
    model: (r.model as string | null) ?? null,
    overnight: r.overnight === 1,
    capMicros: (r.cap_micros as number | null) ?? null,
    band: parseJson<RouteBand | null>(r.band, null),
    wave: r.wave as number,
    armed: r.armed === 1,
    approved: r.approved === 1,
    run: parseJson<RunState>(r.run, newRun(r.updated_at as number)),
    fencingToken: r.fencing_token as number,
    leaseOwner: (r.lease_owner as string | null) ?? null,
    leaseExpiresAt: (r.lease_expires_at as number | null) ?? null,
    sessionId: (r.session_id as string | null) ?? null,
    pid: (r.pid as number | null) ?? null,
    logPath: (r.log_path as string | null) ?? null,
    worktree: (r.worktree as string | null) ?? null,
    branch: (r.branch as string | null) ?? null,
    baseSha: (r.base_sha as string | null) ?? null,
    prNumber: (r.pr_number as number | null) ?? null,
    prUrl: (r.pr_url as string | null) ?? null,
    verifyFailures: r.verify_failures as number,
    lastError: (r.last_error as string | null) ?? null,
    receipt: parseJson<unknown>(r.receipt, null),
    summary: (r.summary as string | null) ?? null,
    resumeFrom: (r.resume_from as string | null) ?? null,
    resumeTranscript: (r.resume_transcript as string | null) ?? null,
    baseRef: (r.base_ref as string | null) ?? null,
    checkpoint: parseJson<NodeCheckpoint | null>(r.checkpoint, null),
  };
}

export class RouteStore {
  private readonly events: LifecycleEvents;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {
    this.events = new LifecycleEvents(db);
  }

  /** One write, whole, holding the write lock from its first read. */
  private write<T>(fn: () => T): T {
    return this.db.transaction(fn).immediate();
  }

  /**
   * Loads a parsed route file. The route's mode is the file's (or `defaultMode`, the policy's) when it is first
   * loaded; later loads keep the stored mode, which `setMode` changes. New nodes are QUEUED (not armed). A node that
   * has not started (QUEUED, never claimed) takes the file's fields; one that has started keeps the fields it started
   * with (only its wave is recomputed). A node gone from the file that never started is deleted; one that started is
   * kept, so its run, branch and PR stay on the record.
   */
  upsertRoute(route: ParsedRoute, where: { repoRoot: string; filePath: string }, defaultMode: RouteMode = 'approve'): void {
    const now = this.clock.now();
    this.write(() => {
      this.db
        .prepare(
          `INSERT INTO routes (key, title, tracker, mode, notes, repo_root, file_path, created_at, updated_at)
           VALUES (@key, @title, @tracker, @mode, @notes, @repoRoot, @filePath, @now, @now)
           ON CONFLICT(key) DO UPDATE SET title = excluded.title, tracker = excluded.tracker, notes = excluded.notes,
             repo_root = excluded.repo_root, file_path = excluded.file_path, updated_at = excluded.updated_at`,
        )
        .run({ key: route.key, title: route.title, tracker: route.tracker, mode: route.mode ?? defaultMode, notes: route.notes, repoRoot: where.repoRoot, filePath: where.filePath, now });
      const waveOf = new Map(route.waves.flatMap((ids, wave) => ids.map((id) => [id, wave] as const)));
      const existing = new Map(this.nodes(route.key).map((n) => [n.nodeId, n]));
      const insert = this.db.prepare(
        `INSERT INTO route_nodes (route_key, node_id, position, title, brief, depends_on, area, harness, model, overnight, cap_micros, band, wave, state, run, updated_at)
         VALUES (@key, @id, @position, @title, @brief, @dependsOn, @area, @harness, @model, @overnight, @cap, @band, @wave, 'QUEUED', @run, @now)`,
      );
      const refresh = this.db.prepare(
        `UPDATE route_nodes SET position = @position, title = @title, brief = @brief, depends_on = @dependsOn, area = @area, harness = @harness,
           model = @model, overnight = @overnight, cap_micros = @cap, band = @band, wave = @wave, updated_at = @now WHERE route_key = @key AND node_id = @id`,
      );
      // A started node keeps what it started with, but its cap may be raised (or lowered) by the file at any time.
      const rewave = this.db.prepare(`UPDATE route_nodes SET position = @position, wave = @wave, cap_micros = @cap WHERE route_key = @key AND node_id = @id`);
      route.nodes.forEach((n, position) => {
        const params = {
          key: route.key,
          id: n.id,
          position,
          title: n.title,
          brief: n.brief,
          dependsOn: JSON.stringify(n.dependsOn),
          area: n.area,
          harness: n.harness,
          model: n.model,
          overnight: n.overnight ? 1 : 0,
          cap: n.capMicros,
          band: n.band === null ? null : JSON.stringify(n.band),
          wave: waveOf.get(n.id) ?? 0,
          now,
        };
        const had = existing.get(n.id);
        if (!had) {
          insert.run({ ...params, run: JSON.stringify(newRun(now)) });
          this.events.created('run', runId(route.key, n.id), 'QUEUED', runId(route.key, n.id), now);
        } else if (had.run.state === 'QUEUED' && had.run.claims === 0) refresh.run(params);
        else rewave.run({ key: route.key, id: n.id, position, wave: params.wave, cap: params.cap });
      });
      const inFile = new Set(route.nodes.map((n) => n.id));
      const drop = this.db.prepare(`DELETE FROM route_nodes WHERE route_key = ? AND node_id = ? AND state = 'QUEUED'`);
      const keepAfter = this.db.prepare(`UPDATE route_nodes SET position = ? WHERE route_key = ? AND node_id = ?`);
      let after = route.nodes.length;
      for (const n of existing.values()) {
        if (inFile.has(n.nodeId)) continue;
        if (n.run.state === 'QUEUED' && n.run.claims === 0) drop.run(route.key, n.nodeId);
        else keepAfter.run(after++, route.key, n.nodeId); // kept for the record, listed after the file's nodes
      }
    });
  }

  /**
   * Makes an overnight job's route and its one node, armed, in an auto route (it was asked for by name: nothing is left
   * to approve). false when the key is taken (the caller draws another).
   */
  addNightJob(j: NewNightJob): boolean {
    const now = this.clock.now();
    return this.write(() => {
      if (this.route(j.key)) return false;
      this.db
        .prepare(
          `INSERT INTO routes (key, title, tracker, mode, notes, repo_root, file_path, wall_id, created_at, updated_at)
           VALUES (@key, @title, NULL, 'auto', @notes, @repoRoot, @filePath, @wallId, @now, @now)`,
        )
        .run({ key: j.key, title: j.title, notes: `overnight job, queued by ${j.from}`, repoRoot: j.repoRoot, filePath: NIGHT_JOB_FILE, wallId: j.wallId, now });
      this.db
        .prepare(
          `INSERT INTO route_nodes (route_key, node_id, position, title, brief, depends_on, area, harness, model, overnight, cap_micros, band, wave, state, run, armed, resume_from, resume_transcript, base_ref, updated_at)
           VALUES (@key, @id, 0, @title, @brief, '[]', NULL, @harness, @model, 1, @cap, @band, 0, 'QUEUED', @run, 1, @resumeFrom, @resumeTranscript, @baseRef, @now)`,
        )
        .run({
          key: j.key,
          id: j.nodeId,
          title: j.title,
          brief: j.brief,
          harness: j.harness,
          model: j.model,
          cap: j.capMicros,
          band: j.band === null ? null : JSON.stringify(j.band),
          run: JSON.stringify(newRun(now)),
          resumeFrom: j.resumeFrom,
          resumeTranscript: j.resumeTranscript,
          baseRef: j.baseRef,
          now,
        });
      this.events.created('run', runId(j.key, j.nodeId), 'QUEUED', runId(j.key, j.nodeId), now);
      return true;
    });
  }

  /** Whether an overnight job that resumes this session has not ended yet (its task's receipt waits for it). */
  nightJobResumes(sessionId: string): boolean {
    return this.db.prepare(`SELECT 1 FROM route_nodes WHERE resume_from = ? AND state NOT IN ('COMPLETED', 'FAILED', 'CANCELLED') LIMIT 1`).get(sessionId) !== undefined;
  }

  /** The job routes queued at a wall (exit 3), newest first. */
  nightJobsOfWall(wallId: string): RouteRow[] {
    return (this.db.prepare(`SELECT * FROM routes WHERE wall_id = ? AND file_path = ? ORDER BY created_at DESC`).all(wallId, NIGHT_JOB_FILE) as Array<Record<string, unknown>>).map(toRoute);
  }

  routes(): RouteRow[] {
    return (this.db.prepare(`SELECT * FROM routes ORDER BY created_at, key`).all() as Array<Record<string, unknown>>).map(toRoute);
  }

  route(key: string): RouteRow | null {
    const r = this.db.prepare(`SELECT * FROM routes WHERE key = ?`).get(key) as Record<string, unknown> | undefined;
    return r ? toRoute(r) : null;
  }

  nodes(key: string): NodeRow[] {
    return (this.db.prepare(`SELECT * FROM route_nodes WHERE route_key = ? ORDER BY wave, position`).all(key) as Array<Record<string, unknown>>).map(toNode);
  }

  node(key: string, id: string): NodeRow | null {
    const r = this.db.prepare(`SELECT * FROM route_nodes WHERE route_key = ? AND node_id = ?`).get(key, id) as Record<string, unknown> | undefined;
    return r ? toNode(r) : null;
  }

  /** Arms the named nodes (null: every node of the route). Refused whole when the route or a node is not there. */
  arm(key: string, ids: string[] | null): { ok: true; armed: string[] } | { ok: false; error: string } {
    return this.write(() => {
      if (!this.route(key)) return { ok: false as const, error: `no route '${key}' — load it first (sleds route load ${key})` };
      const have = this.nodes(key).map((n) => n.nodeId);
      const wanted = ids ?? have;
      const unknown = wanted.filter((id) => !have.includes(id));
      if (unknown.length > 0) return { ok: false as const, error: `route '${key}' has no node ${unknown.map((u) => `'${u}'`).join(', ')} (it has ${have.join(', ')})` };
      const stmt = this.db.prepare(`UPDATE route_nodes SET armed = 1, updated_at = ? WHERE route_key = ? AND node_id = ?`);
      const now = this.clock.now();
      for (const id of wanted) stmt.run(now, key, id);
      return { ok: true as const, armed: wanted };
    });
  }

  setMode(key: string, mode: RouteMode): void {
    this.db.prepare(`UPDATE routes SET mode = ?, updated_at = ? WHERE key = ?`).run(mode, this.clock.now(), key);
  }

  /**
   * `sleds start <node>`: the node may start in an approve-mode route. Starting a node by name arms it too (asking to
   * start it is the stronger intent). It still starts only when its dependencies are merged.
   */
  approve(key: string, id: string): { ok: true } | { ok: false; error: string } {
    const n = this.node(key, id);
    if (!n) return { ok: false, error: this.route(key) ? `route '${key}' has no node '${id}'` : `no route '${key}' — load it first (sleds route load ${key})` };
    if (TERMINAL.includes(n.run.state)) return { ok: false, error: `node ${runId(key, id)} is ${n.run.state} (${n.run.reason ?? 'over'}); nothing to start` };
    this.db.prepare(`UPDATE route_nodes SET approved = 1, armed = 1, updated_at = ? WHERE route_key = ? AND node_id = ?`).run(this.clock.now(), key, id);
    return { ok: true };
  }

  /** Nodes an engine may claim now: armed, QUEUED, every dependency COMPLETED (merged), in an auto route or approved; wave order across routes. */
  ready(_now: number): NodeRow[] {
    const rows = this.db
      .prepare(
        `SELECT n.*, r.mode AS route_mode FROM route_nodes n JOIN routes r ON r.key = n.route_key
         WHERE n.state = 'QUEUED' AND n.armed = 1 AND (r.mode = 'auto' OR n.approved = 1)
         ORDER BY n.wave, r.created_at, r.key, n.position`,
      )
      .all() as Array<Record<string, unknown>>;
    const completed = new Set(
      (this.db.prepare(`SELECT route_key, node_id FROM route_nodes WHERE state = 'COMPLETED'`).all() as Array<{ route_key: string; node_id: string }>).map((r) => runId(r.route_key, r.node_id)),
    );
    return rows.map(toNode).filter((n) => n.dependsOn.every((d) => completed.has(runId(n.routeKey, d))));
  }

  /** QUEUED → CLAIMING with the fencing token raised and the lease set, in one conditional UPDATE; null when another engine got it first. */
  claim(key: string, id: string, owner: string, now: number, leaseMs: number): number | null {
    return this.write(() => {
      const n = this.node(key, id);
      if (!n || n.run.state !== 'QUEUED') return null;
      const token = n.fencingToken + 1;
      const moved = this.move(n, { type: 'claim' }, now, (to) =>
        this.db
          .prepare(
            `UPDATE route_nodes SET state = @state, run = @run, fencing_token = @token, lease_owner = @owner, lease_expires_at = @expires, updated_at = @now
             WHERE route_key = @key AND node_id = @id AND state = 'QUEUED' AND fencing_token = @was`,
          )
          .run({ state: to.state, run: JSON.stringify(to), token, owner, expires: now + leaseMs, now, key, id, was: n.fencingToken }).changes,
      );
      return moved.ok ? token : null;
    });
  }

  /**
   * An active node past QUEUED whose lease has expired (its engine died) or that no engine holds: a new token, a new
   * lease, the same state (the engine reconciles it with the world next). null when its lease is still live or another
   * engine took it first.
   */
  takeOver(key: string, id: string, owner: string, now: number, leaseMs: number): number | null {
    return this.write(() => {
      const n = this.node(key, id);
      if (!n || n.run.state === 'QUEUED' || TERMINAL.includes(n.run.state)) return null;
      if (n.leaseOwner !== null && n.leaseExpiresAt !== null && n.leaseExpiresAt > now) return null;
      const changed = this.db
        .prepare(
          `UPDATE route_nodes SET fencing_token = fencing_token + 1, lease_owner = ?, lease_expires_at = ?, updated_at = ?
           WHERE route_key = ? AND node_id = ? AND state = ? AND fencing_token = ?`,
        )
        .run(owner, now + leaseMs, now, key, id, n.run.state, n.fencingToken).changes;
      return changed === 1 ? n.fencingToken + 1 : null;
    });
  }

  /** Extends the lease of the holder of `token`; false when it is no longer the holder. */
  renew(key: string, id: string, owner: string, token: number, now: number, leaseMs: number): boolean {
    return (
      this.db
        .prepare(`UPDATE route_nodes SET lease_expires_at = ? WHERE route_key = ? AND node_id = ? AND lease_owner = ? AND fencing_token = ?`)
        .run(now + leaseMs, key, id, owner, token).changes === 1
    );
  }

  /** Lets go of the lease (the node stays in its state; another engine may take it over at once). */
  release(key: string, id: string, token: number): void {
    this.db.prepare(`UPDATE route_nodes SET lease_owner = NULL, lease_expires_at = NULL WHERE route_key = ? AND node_id = ? AND fencing_token = ?`).run(key, id, token);
  }

  /** One move of the node's run by the holder of `token`, with the patch written in the same UPDATE. */
  step(key: string, id: string, token: number, event: RunEvent, now: number, patch: NodePatch = {}): { ok: true; row: NodeRow; effects: RunEffect[] } | { ok: false; error: string } {
    return this.write(() => {
      const n = this.node(key, id);
      if (!n) return { ok: false as const, error: `no node ${runId(key, id)}` };
      if (n.fencingToken !== token) return { ok: false as const, error: `node ${runId(key, id)}: token ${token} is stale (it is ${n.fencingToken} now) — another engine holds it; let it go` };
      const { sets, params } = patchSql(patch);
      const moved = this.move(n, event, now, (to) =>
        this.db
          .prepare(
            `UPDATE route_nodes SET state = @state, run = @run, updated_at = @now${sets.map((s) => `, ${s}`).join('')}
             WHERE route_key = @key AND node_id = @id AND state = @from AND fencing_token = @token`,
          )
          .run({ ...params, state: to.state, run: JSON.stringify(to), now, key, id, from: n.run.state, token }).changes,
      );
      if (!moved.ok) return moved;
      return { ok: true as const, row: this.node(key, id)!, effects: moved.effects };
    });
  }

  /** Writes the patch if `token` still holds the node. */
  patch(key: string, id: string, token: number, patch: NodePatch): boolean {
    const { sets, params } = patchSql(patch);
    if (sets.length === 0) return this.node(key, id)?.fencingToken === token;
    return (
      this.db
        .prepare(`UPDATE route_nodes SET ${sets.join(', ')}, updated_at = @now WHERE route_key = @key AND node_id = @id AND fencing_token = @token`)
        .run({ ...params, now: this.clock.now(), key, id, token }).changes === 1
    );
  }

  /** The nodes whose lease `owner` holds. */
  held(owner: string): NodeRow[] {
    return (this.db.prepare(`SELECT * FROM route_nodes WHERE lease_owner = ? ORDER BY wave, route_key, position`).all(owner) as Array<Record<string, unknown>>).map(toNode);
  }

  addDecision(d: NewDecision): void {
    this.db
      .prepare(
        `INSERT INTO route_decisions (route_key, node_id, question, options, answer, answered_by, answered_at, source, rung, reason)
         VALUES (@routeKey, @nodeId, @question, @options, @answer, @answeredBy, @answeredAt, @source, @rung, @reason)`,
      )
      .run({ ...d, options: JSON.stringify(d.options), rung: d.rung ?? null, reason: d.reason ?? null });
  }

  /** Parks a question for a node; its id is the caller's (validated by it). `ladder`: how the ask verb handled it. */
  addQuestion(q: { id: string; routeKey: string; nodeId: string; question: string; options: string[]; askedAt: number; ladder?: Partial<QuestionLadder> }): RouteQuestionRow {
    const l = q.ladder ?? {};
    this.db
      .prepare(
        `INSERT INTO route_questions (id, route_key, node_id, question, options, asked_at, state, reversible, risk, rung, escalated_to, escalate_until)
         VALUES (@id, @routeKey, @nodeId, @question, @options, @askedAt, 'open', @reversible, @risk, @rung, @escalatedTo, @escalateUntil)`,
      )
      .run({
        id: q.id,
        routeKey: q.routeKey,
        nodeId: q.nodeId,
        question: q.question,
        askedAt: q.askedAt,
        options: JSON.stringify(q.options),
        reversible: l.reversible === undefined || l.reversible === null ? null : l.reversible ? 1 : 0,
        risk: l.risk ?? null,
        rung: l.rung ?? null,
        escalatedTo: l.escalatedTo ?? null,
        escalateUntil: l.escalateUntil ?? null,
      });
    return this.question(q.id)!;
  }

  /** Escalated questions still open whose time to answer is over at `now` (they park; their job's slot goes free). */
  dueEscalations(now: number): RouteQuestionRow[] {
    return (
      this.db.prepare(`SELECT * FROM route_questions WHERE state = 'open' AND rung = 'escalated' AND escalate_until <= ? ORDER BY escalate_until, rowid`).all(now) as Array<Record<string, unknown>>
    ).map(toQuestion);
  }

  /** An escalated question nobody answered in time is parked (once: true for the call that parked it). */
  parkEscalation(id: string, at: number): boolean {
    return this.db.prepare(`UPDATE route_questions SET rung = 'parked', parked_at = ? WHERE id = ? AND state = 'open' AND rung = 'escalated'`).run(at, id).changes === 1;
  }

  /**
   * A line in a node's log (`sleds queue`): a rung of the ladder, a parking. Kept in lifecycle_events with the node's
   * moves (event type 'ladder', its state unchanged), so its timeline reads in order.
   */
  ladderNote(key: string, id: string, line: string, at: number): void {
    const n = this.node(key, id);
    if (!n) return;
    this.events.append({ entityKind: 'run', entityId: runId(key, id), eventType: 'ladder', fromState: n.run.state, toState: n.run.state, correlationId: runId(key, id), at, payload: { line } });
  }

  question(id: string): RouteQuestionRow | null {
    const r = this.db.prepare(`SELECT * FROM route_questions WHERE id = ?`).get(id) as Record<string, unknown> | undefined;
    return r ? toQuestion(r) : null;
  }

  /** The node's open question asked at or after `since` (its run's start), newest first; null when none. */
  openQuestion(key: string, id: string, since = 0): RouteQuestionRow | null {
    const r = this.db
      .prepare(`SELECT * FROM route_questions WHERE route_key = ? AND node_id = ? AND state = 'open' AND asked_at >= ? ORDER BY asked_at DESC, rowid DESC LIMIT 1`)
      .get(key, id, since) as Record<string, unknown> | undefined;
    return r ? toQuestion(r) : null;
  }

  /** The node's latest question asked at or after `since`, open or answered; null when none. */
  latestQuestion(key: string, id: string, since: number): RouteQuestionRow | null {
    const r = this.db
      .prepare(`SELECT * FROM route_questions WHERE route_key = ? AND node_id = ? AND asked_at >= ? ORDER BY asked_at DESC, rowid DESC LIMIT 1`)
      .get(key, id, since) as Record<string, unknown> | undefined;
    return r ? toQuestion(r) : null;
  }

  /** Every question a node asked, open or answered, oldest first (its timeline in `sleds queue`). */
  questionsOf(key: string, id: string): RouteQuestionRow[] {
    return (this.db.prepare(`SELECT * FROM route_questions WHERE route_key = ? AND node_id = ? ORDER BY asked_at, rowid`).all(key, id) as Array<Record<string, unknown>>).map(toQuestion);
  }

  /** Every open question (for `sleds needs`), oldest first. */
  openQuestions(): RouteQuestionRow[] {
    return (this.db.prepare(`SELECT * FROM route_questions WHERE state = 'open' ORDER BY asked_at, rowid`).all() as Array<Record<string, unknown>>).map(toQuestion);
  }

  /** The node's answered question whose answer has not reached its agent yet (answered before its turn ended). */
  undeliveredAnswer(key: string, id: string): RouteQuestionRow | null {
    const r = this.db
      .prepare(`SELECT * FROM route_questions WHERE route_key = ? AND node_id = ? AND state = 'answered' AND delivered_at IS NULL ORDER BY asked_at DESC, rowid DESC LIMIT 1`)
      .get(key, id) as Record<string, unknown> | undefined;
    return r ? toQuestion(r) : null;
  }

  /** The answer reached the agent (or, for a question the engine asked itself, the engine acted on it). */
  markDelivered(id: string, at: number): void {
    this.db.prepare(`UPDATE route_questions SET delivered_at = ? WHERE id = ? AND delivered_at IS NULL`).run(at, id);
  }

  setQuestionMessage(id: string, slack: { channel: string; ts: string }): void {
    this.db.prepare(`UPDATE route_questions SET slack_channel = ?, slack_ts = ? WHERE id = ?`).run(slack.channel, slack.ts, id);
  }

  /**
   * Answers a question once: the first answer wins (two people tapping at once, a tap delivered twice), and it is kept
   * as the route's decision (who, when, from where) in the same transaction.
   */
  answerQuestion(id: string, a: { choice: AnswerChoice | null; text: string | null; by: string; at: number; source: string }): AnswerOutcome {
    return this.db.transaction((): AnswerOutcome => {
      const q = this.question(id);
      if (!q) return { ok: false, kind: 'unknown', error: `no question '${id}' — sleds needs lists the open ones` };
      if (q.state !== 'open') return { ok: false, kind: 'answered', question: q };
      let answer: string;
      if (a.choice !== null) {
        const picked = q.options[CHOICE_INDEX[a.choice]];
        if (picked === undefined) {
          const letters = ['A', 'B', 'C', 'D'].slice(0, q.options.length).join(', ');
          return { ok: false, kind: 'bad-choice', error: q.options.length === 0 ? `question '${id}' has no options to choose from — answer it in words` : `question '${id}' has no option ${a.choice} — choose one of ${letters}` };
        }
        answer = a.text ? `${picked} — ${a.text}` : picked;
      } else if (a.text) {
        answer = a.text;
      } else {
        return { ok: false, kind: 'bad-choice', error: q.options.length > 0 ? 'choose A or B (or answer in words)' : 'say the answer' };
      }
      this.db
        .prepare(`UPDATE route_questions SET state = 'answered', choice = ?, answer = ?, answered_by = ?, answered_at = ?, source = ? WHERE id = ? AND state = 'open'`)
        .run(a.choice, answer, a.by, a.at, a.source, id);
      // An escalated question is the on-call's to answer (late, after it parked, too); any other a person's.
      const onCall = q.ladder.escalatedTo !== null;
      const reason = onCall ? `escalated to ${q.ladder.escalatedTo}${q.ladder.parkedAt !== null ? '; answered after it parked' : ''}` : null;
      this.addDecision({ routeKey: q.routeKey, nodeId: q.nodeId, question: q.question, options: q.options, answer, answeredBy: a.by, answeredAt: a.at, source: a.source, rung: onCall ? 'on-call' : 'person', reason });
      return { ok: true, question: this.question(id)! };
    }).immediate();
  }

  /** The decisions of every route of a repository (the org's earlier decisions, for the ladder), oldest first. */
  repoDecisions(repoRoot: string): DecisionRow[] {
    return (
      this.db
        .prepare(`SELECT d.* FROM route_decisions d JOIN routes r ON r.key = d.route_key WHERE r.repo_root = ? ORDER BY d.answered_at, d.id`)
        .all(repoRoot) as Array<Record<string, unknown>>
    ).map(toDecision);
  }

  decisions(key: string): DecisionRow[] {
    return (this.db.prepare(`SELECT * FROM route_decisions WHERE route_key = ? ORDER BY answered_at, id`).all(key) as Array<Record<string, unknown>>).map(toDecision);
  }

  private move(n: NodeRow, event: RunEvent, now: number, write: (to: RunState) => number) {
    const id = runId(n.routeKey, n.nodeId);
    return this.events.apply({
      kind: 'run',
      id,
      correlationId: id,
      event,
      at: now,
      read: () => n.run,
      step: stepRun,
      write: (_from, to) => write(to),
    });
  }
}
