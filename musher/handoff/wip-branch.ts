import { pathExists } from '../fs-atomic.js';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import type { OpenedSnapshot } from '../snapshot/files.js';
import { firstLine, gitExec, gitOk } from './git-exec.js';
import type { WipSource } from './transport.js';

/**
 * The work in progress as a commit: on top of the snapshot's HEAD, its binary patch applied and its untracked files
 * added. Built with plumbing in a temporary index (`GIT_INDEX_FILE`), so the user's index, worktree and HEAD are
 * never touched; only new objects land in the repository's object store. On pickup, `checkoutWip` turns that commit
 * back into what the sender had: HEAD at the sender's commit, the changes uncommitted on top.
 */

/** The local ref the WIP commit is kept under once fetched (out of the user's branch list). */
export function localWipRef(id: string): string {
  return `refs/sleds/wip/${id}`;
}

/** The branch name the WIP travels under, and the one a pickup creates. */
export function wipBranchName(id: string): string {
  return `sleds/handoff/${id}`;
}

export async function repoTopLevel(dir: string): Promise<string> {
  const r = await gitExec(['rev-parse', '--show-toplevel'], { cwd: dir }).catch((e: Error) => ({ code: 1, stdout: Buffer.alloc(0), stderr: e.message }));
  if (r.code !== 0) throw new Error(`${dir} is not in a git repository — run this from the repository the hand-off belongs to`);
  return r.stdout.toString('utf8').trim();
}

/** An author for the plumbing's commits when the user has none configured (a fresh machine, CI). */
export async function identityEnv(top: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const name = await gitExec(['config', 'user.name'], { cwd: top });
  const email = await gitExec(['config', 'user.email'], { cwd: top });
  if (name.code !== 0 || name.stdout.toString().trim() === '') {
    out.GIT_AUTHOR_NAME = 'sleds';
    out.GIT_COMMITTER_NAME = 'sleds';
  }
  if (email.code !== 0 || email.stdout.toString().trim() === '') {
    out.GIT_AUTHOR_EMAIL = 'sleds@localhost';
    out.GIT_COMMITTER_EMAIL = 'sleds@localhost';
  }
  return out;
}

/** Writes bytes as a blob object (as they are: no filters), returns its sha. */
export async function writeBlob(top: string, bytes: Buffer): Promise<string> {
  return (await gitOk(['hash-object', '-w', '--stdin', '--no-filters'], { cwd: top, input: bytes }, 'could not store a blob in the repository')).toString('utf8').trim();
}

/** A parentless commit holding one file: how bundles and pickup marks travel as refs any host accepts. */
export async function commitOneFile(top: string, file: string, bytes: Buffer, message: string): Promise<string> {
  const blob = await writeBlob(top, bytes);
  const tree = (await gitOk(['mktree'], { cwd: top, input: `100644 blob ${blob}\t${file}\n` }, 'could not make a tree')).toString('utf8').trim();
  const env = await identityEnv(top);
  return (await gitOk(['commit-tree', tree, '-m', message], { cwd: top, env }, 'could not make a commit')).toString('utf8').trim();
}

/** Builds the WIP commit in `repoDir`'s repository; returns its sha. `scratchDir` holds the temporary index. */
export async function buildWipCommit(repoDir: string, id: string, wip: WipSource, scratchDir?: string): Promise<string> {
  const top = await repoTopLevel(repoDir);
  const scratch = await mkdtemp(join(scratchDir ?? tmpdir(), `sleds-wip-${id}-`));
  try {
    const env = { ...(await identityEnv(top)), GIT_INDEX_FILE: join(scratch, 'index') };
    if (wip.head !== null) {
      const has = await gitExec(['cat-file', '-e', `${wip.head}^{commit}`], { cwd: top });
      if (has.code !== 0) throw new Error(`the snapshot's HEAD ${wip.head.slice(0, 12)} is not in ${top} — hand off from the repository the session worked in`);
      await gitOk(['read-tree', wip.head], { cwd: top, env }, 'could not read the snapshot HEAD into a temporary index');
    } else {
      await gitOk(['read-tree', '--empty'], { cwd: top, env }, 'could not start a temporary index');
    }
    if (wip.patch !== null && wip.patch.length > 0) {
      const patchFile = join(scratch, 'changes.patch');
      await writeFile(patchFile, wip.patch, { mode: 0o600 });
      await gitOk(['apply', '--cached', '--binary', '--whitespace=nowarn', patchFile], { cwd: top, env }, "the snapshot's changes do not apply to its HEAD");
    }
    if (wip.untracked.length > 0) {
      const records: string[] = [];
      for (const f of wip.untracked) records.push(`${f.mode} ${await writeBlob(top, f.bytes)}\t${f.path}\0`);
      await gitOk(['update-index', '-z', '--add', '--index-info'], { cwd: top, env, input: records.join('') }, "could not add the snapshot's untracked files");
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

/** The WIP a stored snapshot describes; null when the session was not in a git repository. */
export async function wipFromSnapshot(snap: OpenedSnapshot): Promise<WipSource | null> {
  const g = snap.manifest.git;
  if (g === null) return null;
  const untracked: WipSource['untracked'] = [];
  for (const u of g.untracked) untracked.push({ path: u.path, mode: u.mode, bytes: await snap.readBlob(u.hash) });
  return { head: g.head, branch: g.branch, patch: g.patch !== null ? await snap.readBlob(g.patch.hash) : null, untracked };
}


export interface CheckedOutWip {
  /** The folder holding the work: the new worktree, or the current checkout. */
  dir: string;
  /** The local branch created for it (`sleds/handoff/<id>`), at the sender's HEAD. */
  branch: string;
}

/**
 * Checks out a fetched WIP (`refs/sleds/wip/<id>`) as the sender had it: a branch `sleds/handoff/<id>` at the
 * sender's HEAD with the changes uncommitted on top (untracked files untracked again), either in a new worktree at
 * `<repo>/../<name>-handoff-<id>` or in the current checkout, which must be clean.
 */
export async function checkoutWip(repoDir: string, id: string, target: 'worktree' | 'current'): Promise<CheckedOutWip> {
  const top = await repoTopLevel(repoDir);
  const found = await gitExec(['rev-parse', '--verify', '-q', `${localWipRef(id)}^{commit}`], { cwd: top });
  if (found.code !== 0) throw new Error(`no work in progress for hand-off ${id} in ${top} — fetch the hand-off first`);
  const wip = found.stdout.toString('utf8').trim();
  const parentR = await gitExec(['rev-parse', '--verify', '-q', `${wip}^`], { cwd: top });
  const parent = parentR.code === 0 ? parentR.stdout.toString('utf8').trim() : null;
  const branch = wipBranchName(id);
  if ((await gitExec(['rev-parse', '--verify', '-q', `refs/heads/${branch}`], { cwd: top })).code === 0) {
    throw new Error(`branch ${branch} exists already in ${top} — this hand-off was checked out here before; delete the branch to check it out again`);
  }

  let dir: string;
  if (target === 'worktree') {
    dir = join(dirname(top), `${basename(top)}-handoff-${id}`);
    if (await pathExists(dir)) throw new Error(`${dir} exists already — remove it, or pick up into the current checkout`);
    const r = await gitExec(['worktree', 'add', '-q', '-b', branch, dir, wip], { cwd: top });
    if (r.code !== 0) throw new Error(`could not make a worktree at ${dir}: ${firstLine(r.stderr)}`);
  } else {
    const status = await gitExec(['status', '--porcelain', '--untracked-files=normal'], { cwd: top });
    if (status.code !== 0) throw new Error(`could not read the state of ${top}: ${firstLine(status.stderr)}`);
    if (status.stdout.toString('utf8').trim() !== '') throw new Error(`${top} has uncommitted changes — commit or stash them, or pick up into a new worktree`);
    const r = await gitExec(['checkout', '-q', '-b', branch, wip], { cwd: top });
    if (r.code !== 0) throw new Error(`could not check out hand-off ${id} in ${top}: ${firstLine(r.stderr)}`);
    dir = top;
  }
  // Back to the sender's state: HEAD at their commit, the work uncommitted (mixed reset keeps the files as they are).
  if (parent !== null) {
    const r = await gitExec(['reset', '-q', '--mixed', parent], { cwd: dir });
    if (r.code !== 0) throw new Error(`checked out hand-off ${id} in ${dir}, but could not uncommit its changes: ${firstLine(r.stderr)}`);
  }
  return { dir, branch };
}
