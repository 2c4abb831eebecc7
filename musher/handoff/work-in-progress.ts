import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { formatMegabytes } from '../../core/format.js';
import type { SnapshotGit } from '../../core/snapshot.js';
import { pathExists } from '../fs-atomic.js';
import { firstLine, gitExec, gitOk } from './git-exec.js';
import { hasCommit, identityEnv, ordinaryRemote, writeBlob } from './git-plumbing.js';
import type { WipSource } from './transport.js';

/**
 * The work in progress travels only inside the sealed bundle: the base commit (named), the binary patch and the
 * untracked files (as the snapshot kept them), and — when the sender's remote lacks the base — the commits it needs
 * as a `git bundle`. The teammate's side rebuilds the worktree from them: the base fetched from the ordinary remote
 * (or unbundled from the sealed history), the WIP commit built with plumbing in a temporary index (the user's index,
 * worktree and HEAD are never touched), then checked out into a new worktree with the changes uncommitted on top.
 * git itself refuses a patch or an index entry that reaches outside the worktree or into .git; the manifest's paths
 * were checked before this (core/handoff/confine.ts).
 */

/** A private temp folder under `dir` (made when missing), else under the system's temp folder. */
async function makeScratch(dir: string | undefined, prefix: string): Promise<string> {
  const base = dir ?? tmpdir();
  await mkdir(base, { recursive: true, mode: 0o700 });
  return mkdtemp(join(base, prefix));
}

/** The largest history a bundle carries; beyond it the teammate's repository must have the base from the remote. */
export const MAX_HISTORY_BYTES = 64 * 1024 * 1024;

/** The branch a pickup creates, local to the teammate's repository (nothing of a hand-off travels as a branch). */
export function pickupBranchName(id: string): string {
  return `sleds/handoff/${id}`;
}

/** The work in progress a snapshot's git state describes, its bytes from `blob(hash)`; null outside a repository. */
export function wipFromGit(g: SnapshotGit | null, blob: (hash: string) => Buffer | undefined): WipSource | null {
  if (g === null) return null;
  const need = (hash: string): Buffer => {
    const b = blob(hash);
    if (b === undefined) throw new Error(`blob ${hash.slice(0, 12)} of the work in progress is missing`);
    return b;
  };
  return {
    head: g.head,
    branch: g.branch,
    patch: g.patch !== null ? need(g.patch.hash) : null,
    untracked: g.untracked.map((u) => ({ path: u.path, mode: u.mode, bytes: need(u.hash) })),
  };
}

/**
 * The sender's side: the commits up to `head` that the ordinary remote's tracking refs do not hold, as a git bundle
 * (every commit when there is no remote). Null with no note when the remote has them all; null with a note when they
 * could not be bundled or are over `maxBytes`. A short-lived ref names the tip (a bundle lists refs), removed after.
 */
export async function historyFor(top: string, id: string, head: string | null, opts: { maxBytes?: number; scratchDir?: string } = {}): Promise<{ history: Buffer | null; note: string | null }> {
  if (head === null) return { history: null, note: null };
  const maxBytes = opts.maxBytes ?? MAX_HISTORY_BYTES;
  const remote = await ordinaryRemote(top);
  const ref = `refs/sleds/send/${id}`;
  const scratch = await makeScratch(opts.scratchDir, `sleds-history-${id}-`);
  try {
    await gitOk(['update-ref', ref, head], { cwd: top }, `could not name the base commit ${head.slice(0, 12)}`);
    const file = join(scratch, 'history.bundle');
    const not = remote !== null ? ['--not', `--remotes=${remote}`] : [];
    const r = await gitExec(['bundle', 'create', '-q', file, ref, ...not], { cwd: top });
    if (r.code !== 0) {
      if (/empty bundle/i.test(r.stderr)) return { history: null, note: null };
      return { history: null, note: `the commits up to ${head.slice(0, 12)} could not be bundled (${firstLine(r.stderr)})` };
    }
    const size = (await stat(file)).size;
    if (size > maxBytes) return { history: null, note: `the commits up to ${head.slice(0, 12)}${remote !== null ? ` that ${remote} lacks` : ' (no remote: the whole history)'} are ${formatMegabytes(size)}, over the ${formatMegabytes(maxBytes)} a hand-off carries` };
    return { history: await readFile(file), note: null };
  } finally {
    await gitExec(['update-ref', '-d', ref], { cwd: top });
    await rm(scratch, { recursive: true, force: true });
  }
}

/**
 * The teammate's side: makes sure the base commit is in `top`'s repository — there already, fetched by id from the
 * ordinary remote, or unbundled from the sealed history (whose own prerequisites come from the remote). Throws one
 * line naming the commit when none of these has it.
 */
export async function ensureBase(top: string, head: string, history: Buffer | null, sender: string, opts: { scratchDir?: string; historyNote?: string | null } = {}): Promise<void> {
  if (await hasCommit(top, head)) return;
  const remote = await ordinaryRemote(top);
  if (remote !== null) {
    // By id first (only what is needed, no ref moved); then the ordinary fetch of the remote's branches.
    const byId = await gitExec(['fetch', '-q', '--no-tags', '--no-write-fetch-head', remote, head], { cwd: top });
    if (byId.code !== 0 || !(await hasCommit(top, head))) await gitExec(['fetch', '-q', '--no-tags', '--no-write-fetch-head', remote], { cwd: top });
    if (await hasCommit(top, head)) return;
  }
  if (history !== null) {
    const scratch = await makeScratch(opts.scratchDir, 'sleds-history-');
    try {
      const file = join(scratch, 'history.bundle');
      await writeFile(file, history, { mode: 0o600 });
      const verify = await gitExec(['bundle', 'verify', '-q', file], { cwd: top });
      if (verify.code !== 0) {
        throw new Error(`the base commit ${head.slice(0, 12)} of this hand-off needs commits this repository lacks (${firstLine(verify.stderr)}) — pull from ${remote ?? 'the remote'}, or ask ${sender} to push their branch`);
      }
      // Objects only: unbundle stores them and moves no ref; the pickup's branch makes them reachable.
      await gitOk(['bundle', 'unbundle', file], { cwd: top }, 'could not read the commits the hand-off carries');
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
    if (await hasCommit(top, head)) return;
  }
  const why = opts.historyNote ? ` (${opts.historyNote})` : '';
  throw new Error(`the base commit ${head.slice(0, 12)} of this hand-off is not on ${remote ?? 'any remote'} and did not come with it${why} — ask ${sender} to push their branch, then pick up again`);
}

/**
 * Builds the WIP commit in `top`'s repository: on top of `wip.head`, its binary patch applied and its untracked files
 * added, in a temporary index under `scratchDir`. Returns its sha. Throws when the patch does not apply.
 */
export async function buildWipCommit(top: string, id: string, wip: WipSource, scratchDir?: string): Promise<string> {
  const scratch = await makeScratch(scratchDir, `sleds-wip-${id}-`);
  try {
    const env = { ...(await identityEnv(top)), GIT_INDEX_FILE: join(scratch, 'index') };
    if (wip.head !== null) {
      if (!(await hasCommit(top, wip.head))) throw new Error(`the base commit ${wip.head.slice(0, 12)} is not in ${top} — fetch it first`);
      await gitOk(['read-tree', wip.head], { cwd: top, env }, 'could not read the base commit into a temporary index');
    } else {
      await gitOk(['read-tree', '--empty'], { cwd: top, env }, 'could not start a temporary index');
    }
    if (wip.patch !== null && wip.patch.length > 0) {
      const patchFile = join(scratch, 'changes.patch');
      await writeFile(patchFile, wip.patch, { mode: 0o600 });
      await gitOk(['apply', '--cached', '--binary', '--whitespace=nowarn', patchFile], { cwd: top, env }, `the hand-off's changes do not apply to its base commit ${wip.head?.slice(0, 12) ?? '(none)'}`);
    }
    if (wip.untracked.length > 0) {
      const records: string[] = [];
      for (const f of wip.untracked) records.push(`${f.mode} ${await writeBlob(top, f.bytes)}\t${f.path}\0`);
      await gitOk(['update-index', '-z', '--add', '--index-info'], { cwd: top, env, input: records.join('') }, "could not add the hand-off's untracked files");
    }
    const tree = (await gitOk(['write-tree'], { cwd: top, env }, 'could not write the work-in-progress tree')).toString('utf8').trim();
    const on = wip.branch !== null ? ` (on ${wip.branch})` : '';
    const message = `sleds hand-off ${id}: work in progress${on}\n\nThe sender's uncommitted changes and untracked files, on top of ${wip.head ?? 'an empty repository'}.\n`;
    const parents = wip.head !== null ? ['-p', wip.head] : [];
    return (await gitOk(['commit-tree', tree, ...parents, '-m', message], { cwd: top, env }, 'could not make the work-in-progress commit')).toString('utf8').trim();
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

export interface CheckedOutWip {
  /** The new worktree holding the work. */
  dir: string;
  /** The local branch created for it (`sleds/handoff/<id>`), at the sender's base commit. */
  branch: string;
}

/** Where a pickup's worktree goes: beside the repository, `<repo>-handoff-<id>`. */
export function pickupWorktreeDir(top: string, id: string): string {
  return `${top}-handoff-${id}`;
}

/**
 * Checks the WIP commit out as the sender had it: a new worktree at `dir` on a branch `sleds/handoff/<id>` at the
 * base commit, the changes uncommitted on top (untracked files untracked again). The pickup has checked that neither
 * the folder nor the branch exists (and git refuses both anyway).
 */
export async function checkoutWip(top: string, id: string, wipCommit: string, dir: string): Promise<CheckedOutWip> {
  const branch = pickupBranchName(id);
  const parentR = await gitExec(['rev-parse', '--verify', '-q', `${wipCommit}^`], { cwd: top });
  const parent = parentR.code === 0 ? parentR.stdout.toString('utf8').trim() : null;
  const r = await gitExec(['worktree', 'add', '-q', '-b', branch, dir, wipCommit], { cwd: top });
  if (r.code !== 0) throw new Error(`could not make a worktree at ${dir}: ${firstLine(r.stderr)}`);
  // Back to the sender's state: HEAD at their commit, the work uncommitted (mixed reset keeps the files as they are).
  if (parent !== null) {
    const reset = await gitExec(['reset', '-q', '--mixed', parent], { cwd: dir });
    if (reset.code !== 0) throw new Error(`checked out hand-off ${id} in ${dir}, but could not uncommit its changes: ${firstLine(reset.stderr)}`);
  }
  return { dir, branch };
}

/**
 * Undoes what a pickup that did not finish left of its worktree: the worktree at `dir` when git lists it as this
 * hand-off's (never a folder git does not know as ours), then the branch. Safe to run when neither exists.
 */
export async function removePickupWorktree(top: string, id: string, dir: string): Promise<void> {
  const branch = pickupBranchName(id);
  const list = await gitExec(['worktree', 'list', '--porcelain'], { cwd: top });
  const ours = list.stdout
    .toString('utf8')
    .split('\n\n')
    .some((block) => block.split('\n').includes(`worktree ${dir}`));
  if (ours) {
    const r = await gitExec(['worktree', 'remove', '--force', '--force', dir], { cwd: top });
    if (r.code !== 0) throw new Error(`could not remove the half-made worktree ${dir}: ${firstLine(r.stderr)} — remove it by hand, then pick up again`);
  }
  else if (await pathExists(dir)) {
    // Killed inside `worktree add` before git listed it: only a folder with nothing but git's pointer in it is ours.
    const names = await readdir(dir).catch(() => null);
    if (names !== null && names.every((n) => n === '.git')) await rm(dir, { recursive: true, force: true });
  }
  await gitExec(['worktree', 'prune'], { cwd: top });
  if ((await gitExec(['rev-parse', '--verify', '-q', `refs/heads/${branch}`], { cwd: top })).code === 0) {
    await gitOk(['branch', '-D', '-q', branch], { cwd: top }, `could not remove the half-made branch ${branch}`);
  }
}
