import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { NIGHT_JOB_NODE, nightJobKey, sizeNightJob } from '../../core/overnight/night-job.js';
import { OVERNIGHT_DEFAULTS } from '../../core/policy/schema.js';
import type { RouteBand } from '../../core/routes/band.js';
import type { RouteStore } from './route-store.js';

/**
 * Every overnight job, whatever queued it (exit 3 at a wall, `/sled overnight`, the picker's Queue and the MCP
 * `dispatch`, a legacy scheduler job), is made here: sized first (its band at ½ price), capped (its own, else the
 * policy's), refused with its band when the band's low end is over the cap, else a one-node overnight route in the
 * RouteStore — armed, in auto mode, with no file — that `sleds engine` starts in the window (issue 15 § 1).
 */

export interface NightJobRequest {
  /** The task's repository (or the session's cwd): the job runs on the git top-level of it. */
  cwd: string | null;
  title: string;
  /** What the agent is asked to do: the task's request. */
  brief: string;
  harness: string | null;
  model: string | null;
  /** Its band at standard prices (null: none yet, and it is refused). */
  band: RouteBand | null;
  /** Its own cap, micro-dollars; null: the policy's. */
  capMicros: number | null;
  /**
   * The wall's session its first run resumes, with the transcript it left, and the folder it worked in (its HEAD and
   * uncommitted work are what the job's worktree starts from); null: the job starts fresh from the brief.
   */
  resume: { sessionId: string; transcript: string | null; workDir?: string | null } | null;
  /** What queued it, in the route's notes ("exit 3 at a wall"). */
  from: string;
  /** The wall it was queued at (exit 3), so `/sled cancel` there ends it; else null. */
  wallId: string | null;
  /** How its answer says "queue it with a higher cap" ("/sled overnight cap"). */
  raise: string;
}

export type NightJobAnswer =
  | { ok: true; job: string; band: RouteBand; capMicros: number; window: { startMs: number; endMs: number }; repoRoot: string }
  | { ok: false; line: string };

export interface NightJobsDeps {
  routes: Pick<RouteStore, 'addNightJob' | 'nightJobsOfWall' | 'nodes' | 'step'>;
  /** A repository's overnight window at `now` (in progress, else the next) with its cap; null: its policy has none. */
  nightOf(repoRoot: string, now: number): { startMs: number; endMs: number; capMicros: number } | null;
  clock: { now(): number };
  randomBytes(n: number): Uint8Array;
  /** The git top-level of a folder (null: not in a repository); default `git rev-parse --show-toplevel`. */
  repoRootOf?(cwd: string): Promise<string | null>;
  /** The commit of a folder's work now (HEAD with its uncommitted changes); default real git. */
  workCommit?(dir: string): Promise<string | null>;
  /** Keeps a commit under a ref of the repository (so git does not collect it); default real git. */
  pin?(repoRoot: string, ref: string, sha: string): Promise<void>;
}

const run = promisify(execFile);

/**
 * A folder's work as one commit, its tree the working tree's tracked files as they are: `git stash create` (which
 * touches neither the index nor the working tree, and prints nothing when nothing changed), else HEAD. Untracked
 * files are not carried. null when the folder has no commit.
 */
async function gitWorkCommit(dir: string): Promise<string | null> {
  try {
    const named = (await run('git', ['config', 'user.email'], { cwd: dir, encoding: 'utf8' }).catch(() => ({ stdout: '' }))).stdout.trim() !== '';
    // A stash commit needs a committer; where none is configured it is signed by sleds (only this commit).
    const who = named ? [] : ['-c', 'user.name=sleds', '-c', 'user.email=sleds@localhost'];
    const stash = (await run('git', [...who, 'stash', 'create', 'sleds: the session’s uncommitted work at its wall'], { cwd: dir, encoding: 'utf8' })).stdout.trim();
    const sha = stash || (await run('git', ['rev-parse', '--verify', 'HEAD^{commit}'], { cwd: dir, encoding: 'utf8' })).stdout.trim();
    return /^[0-9a-f]{40,64}$/.test(sha) ? sha : null;
  } catch {
    // no commit yet, or git refused: the job starts from the remote's base branch, as every node does
    return null;
  }
}

async function gitPin(repoRoot: string, ref: string, sha: string): Promise<void> {
  await run('git', ['update-ref', ref, sha], { cwd: repoRoot, encoding: 'utf8' });
}

async function gitTopLevel(cwd: string): Promise<string | null> {
  try {
    return (await promisify(execFile)('git', ['rev-parse', '--show-toplevel'], { cwd, encoding: 'utf8' })).stdout.trim() || null;
  } catch {
    // not a repository, or the folder is gone: the caller says so
    return null;
  }
}

export class NightJobs {
  constructor(private readonly d: NightJobsDeps) {}

  async queue(req: NightJobRequest): Promise<NightJobAnswer> {
    if (!req.cwd) return { ok: false, line: 'refused: it has no folder to run in — start the task in its repository first' };
    const repoRoot = await (this.d.repoRootOf ?? gitTopLevel)(req.cwd);
    if (!repoRoot) return { ok: false, line: `refused: ${req.cwd} is not in a git repository — an overnight job runs in a worktree of one` };
    const now = this.d.clock.now();
    const window = this.d.nightOf(repoRoot, now);
    if (!window) return { ok: false, line: 'the policy has no overnight window — add `overnight: {from: "22:00", to: "06:00"}` to .sleds/policy.yml' };
    const sized = sizeNightJob(req.band, req.capMicros, window.capMicros ?? OVERNIGHT_DEFAULTS.capMicros, req.raise);
    if (!sized.ok) return sized;
    const workDir = req.resume?.workDir ?? null;
    const baseRef = workDir ? await (this.d.workCommit ?? gitWorkCommit)(workDir) : null;
    for (let tries = 0; tries < 5; tries++) {
      const key = nightJobKey(this.d.randomBytes(6));
      const made = this.d.routes.addNightJob({
        key,
        nodeId: NIGHT_JOB_NODE,
        title: req.title,
        brief: req.brief,
        repoRoot,
        harness: req.harness,
        model: req.model,
        band: req.band,
        capMicros: req.capMicros,
        resumeFrom: req.resume?.sessionId ?? null,
        resumeTranscript: req.resume?.transcript ?? null,
        baseRef,
        from: req.from,
        wallId: req.wallId,
      });
      if (made && baseRef) await (this.d.pin ?? gitPin)(repoRoot, `refs/sleds/night/${key}`, baseRef);
      if (made) return { ok: true, job: key, band: sized.band, capMicros: sized.capMicros, window: { startMs: window.startMs, endMs: window.endMs }, repoRoot };
    }
    throw new Error('five job keys drawn were all taken');
  }

  /** `/sled cancel` at a wall whose exit 3 queued a job: the job is cancelled unless it has started. The ids cancelled. */
  cancelForWall(wallId: string, reason: string, keep?: string): string[] {
    const done: string[] = [];
    for (const r of this.d.routes.nightJobsOfWall(wallId))
      if (r.key !== keep)
        for (const n of this.d.routes.nodes(r.key))
        if (n.run.state === 'QUEUED' && this.d.routes.step(r.key, n.nodeId, n.fencingToken, { type: 'cancel', reason }, this.d.clock.now()).ok) done.push(r.key);
    return done;
  }
}
