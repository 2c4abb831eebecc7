import { execFile } from 'node:child_process';
import { copyFile, lstat, mkdir, readFile, readdir, realpath, stat, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { firstLine, gitExec } from '../handoff/git-exec.js';
import { asUser } from '../user-umask.js';

/**
 * A node's own git worktree, on branch `sleds/<route>/<node>` from the base the engine chose (the merged tip of its
 * dependencies): the untracked files the policy lists (`.env` and the like) copied in, confined to the repository,
 * and the policy's setup run there with its block of ports in SLEDS_PORT_BASE. Real git through argv arrays; every
 * failure is one WorktreeError line saying what git said.
 */

export class WorktreeError extends Error {
  override readonly name = 'WorktreeError';
}

export interface WorktreeSpec {
  repoRoot: string;
  routeKey: string;
  nodeId: string;
  baseRef: string;
  worktreesDir: string;
  /** The policy's setup, each command an argv (no shell). */
  setup: string[][];
  /** Untracked files (or `*`/`?` patterns, segment by segment) to copy from the repository into the worktree. */
  include: string[];
  portBase: number;
  env: NodeJS.ProcessEnv;
}

export interface CreatedWorktree {
  path: string;
  branch: string;
  baseSha: string;
}

/** A route key or node id as it may appear in a branch name and a folder name. */
const SEGMENT = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const SETUP_TIMEOUT_MS = 15 * 60_000;
/** Marks a worktree whose setup has run to the end once (kept in its git dir, not in the working tree). */
const SETUP_DONE = 'sleds-setup-done';
/**
 * The files the include list copied in, kept in the worktree's git dir: commitAll leaves them out, so a `.env` that
 * the repository does not ignore is never committed and pushed with the node's PR.
 */
const INCLUDED = 'sleds-included.json';

async function gitDirOf(worktree: string): Promise<string> {
  return resolve(worktree, (await git(worktree, ['rev-parse', '--git-dir'], `reading the git dir of ${worktree}`)).trim());
}

async function includedIn(gitDir: string): Promise<string[]> {
  try {
    const list: unknown = JSON.parse(await readFile(join(gitDir, INCLUDED), 'utf8'));
    return Array.isArray(list) ? list.filter((x): x is string => typeof x === 'string') : [];
  } catch {
    // No include list was copied into this worktree (or it was not made by sleds): nothing to leave out.
    return [];
  }
}

export function nodeBranch(routeKey: string, nodeId: string): string {
  for (const [what, v] of [['route key', routeKey], ['node id', nodeId]] as const) {
    if (!SEGMENT.test(v) || v.includes('..') || v.endsWith('.lock') || v.endsWith('.')) {
      throw new WorktreeError(`the ${what} ${JSON.stringify(v)} cannot name a branch — use letters, digits, '.', '_' and '-'`);
    }
  }
  return `sleds/${routeKey}/${nodeId}`;
}

/** A name git takes as a ref or a remote, never as an option. */
function refArg(what: string, v: string): string {
  if (v === '' || v.startsWith('-') || /[\s\0~^:?*[\\]/.test(v.replace(/\^\{commit\}$/, '')) || v.includes('..')) {
    throw new WorktreeError(`the ${what} ${JSON.stringify(v)} is not a git name sleds passes on`);
  }
  return v;
}

async function git(cwd: string, args: string[], what: string, opts: { input?: string; env?: Record<string, string> } = {}): Promise<string> {
  let r;
  try {
    r = await gitExec(args, { cwd, ...(opts.input !== undefined ? { input: opts.input } : {}), ...(opts.env ? { env: opts.env } : {}) });
  } catch (e) {
    throw new WorktreeError(`${what}: git could not be started (${(e as Error).message})`);
  }
  if (r.code !== 0) throw new WorktreeError(`${what}: ${firstLine(r.stderr)}`);
  return r.stdout.toString('utf8');
}

async function gitMaybe(cwd: string, args: string[]): Promise<string | null> {
  const r = await gitExec(args, { cwd });
  return r.code === 0 ? r.stdout.toString('utf8').trim() : null;
}

export async function listWorktrees(repoRoot: string): Promise<Array<{ path: string; branch: string | null; head: string }>> {
  const out = await git(repoRoot, ['worktree', 'list', '--porcelain', '-z'], `listing the worktrees of ${repoRoot}`);
  const list: Array<{ path: string; branch: string | null; head: string }> = [];
  let cur: { path: string; branch: string | null; head: string } | null = null;
  for (const field of out.split('\0')) {
    if (field === '') {
      if (cur) list.push(cur);
      cur = null;
      continue;
    }
    if (field.startsWith('worktree ')) cur = { path: field.slice('worktree '.length), branch: null, head: '' };
    else if (cur && field.startsWith('HEAD ')) cur.head = field.slice('HEAD '.length);
    else if (cur && field.startsWith('branch ')) cur.branch = field.slice('branch '.length).replace(/^refs\/heads\//, '');
  }
  if (cur) list.push(cur);
  return list;
}

/** The same folder, however it was spelled (a symlinked temp dir, a trailing slash). */
async function samePath(a: string, b: string): Promise<boolean> {
  if (resolve(a) === resolve(b)) return true;
  try {
    return (await realpath(a)) === (await realpath(b));
  } catch {
    // One of them is not there: not the same folder.
    return false;
  }
}

function globToRegExp(segment: string): RegExp {
  const body = segment.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*').replace(/\?/g, '[^/]');
  return new RegExp(`^${body}$`);
}

/**
 * The files an include list names in the repository, each as a path relative to it. A pattern that leaves the
 * repository (absolute, `..`) or a match that resolves outside it (a symlink pointing away) is refused whole: the
 * worktree would otherwise carry a file from anywhere on the machine.
 */
export async function resolveIncludes(repoRoot: string, include: string[]): Promise<string[]> {
  const root = await realpath(repoRoot);
  const found = new Set<string>();
  for (const pattern of include) {
    const segments = pattern.split(/[\\/]+/).filter((s) => s !== '' && s !== '.');
    if (isAbsolute(pattern) || segments.length === 0 || segments.some((s) => s === '..')) {
      throw new WorktreeError(`the include ${JSON.stringify(pattern)} leaves the repository — list paths inside it, like .env or config/*.local`);
    }
    if (segments.includes('.git')) throw new WorktreeError(`the include ${JSON.stringify(pattern)} names git's own files — they are not copied`);
    let paths = [''];
    for (const seg of segments) {
      const next: string[] = [];
      for (const p of paths) {
        if (!/[*?]/.test(seg)) {
          next.push(p === '' ? seg : join(p, seg));
          continue;
        }
        const re = globToRegExp(seg);
        let names: string[] = [];
        try {
          names = await readdir(join(root, p));
        } catch {
          // Not a folder (or not there): nothing matches below it.
        }
        for (const n of names.sort()) if (n !== '.git' && re.test(n)) next.push(p === '' ? n : join(p, n));
      }
      paths = next;
    }
    for (const p of paths) for (const f of await filesUnder(root, p, pattern)) found.add(f);
  }
  return [...found].sort();
}

/** `rel` if it is a file, every file below it if it is a folder; each confined to `root` after symlinks. */
async function filesUnder(root: string, rel: string, pattern: string): Promise<string[]> {
  const abs = join(root, rel);
  if (!existsSync(abs)) return [];
  let real: string;
  try {
    real = await realpath(abs);
  } catch {
    return []; // a dangling symlink: nothing to copy
  }
  const inside = relative(root, real);
  if (inside === '' || inside.startsWith(`..${sep}`) || inside === '..' || isAbsolute(inside)) {
    throw new WorktreeError(`the include ${JSON.stringify(pattern)} matches ${rel}, which points outside the repository — not copied`);
  }
  const st = await stat(real);
  if (st.isFile()) return [rel];
  if (!st.isDirectory()) return [];
  const out: string[] = [];
  for (const n of (await readdir(abs)).sort()) if (n !== '.git') out.push(...(await filesUnder(root, join(rel, n), pattern)));
  return out;
}

function run(argv: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<{ code: number | null; tail: string }> {
  return new Promise((done) => {
    const [cmd, ...args] = argv;
    if (!cmd) return done({ code: 127, tail: 'an empty setup command' });
    asUser(() =>
      execFile(cmd, args, { cwd, env, timeout: SETUP_TIMEOUT_MS, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
        const text = `${stdout}${stderr}`.trim().split('\n').filter((l) => l.trim() !== '');
        const tail = text.at(-1) ?? '';
        if (!err) return done({ code: 0, tail });
        const e = err as NodeJS.ErrnoException & { code?: number | string };
        done({ code: typeof e.code === 'number' ? e.code : null, tail: tail || e.message.split('\n')[0]! });
      }),
    );
  });
}

export async function createWorktree(s: WorktreeSpec): Promise<CreatedWorktree> {
  const branch = nodeBranch(s.routeKey, s.nodeId);
  const path = resolve(s.worktreesDir, s.routeKey, s.nodeId);
  // The include list is checked before anything is made: a refused pattern leaves no half-made worktree.
  const includes = await resolveIncludes(s.repoRoot, s.include);
  const sources = await realpath(s.repoRoot);

  let existing = (await listWorktrees(s.repoRoot)).find((w) => w.branch === branch);
  if (existing && !existsSync(existing.path)) {
    // Its folder was deleted (a cleaned disk, a rebuilt machine): git's stale record goes, the branch is checked out anew.
    await git(s.repoRoot, ['worktree', 'prune'], 'pruning stale worktrees');
    existing = undefined;
  }
  let baseSha: string;
  if (existing && (await samePath(existing.path, path))) {
    // A restart: the worktree is there with the agent's work in it; nothing is reset.
    baseSha = (await gitMaybe(s.repoRoot, ['config', '--get', `branch.${branch}.sledsbase`])) ?? existing.head;
  } else {
    if (existing) throw new WorktreeError(`cannot create the worktree for ${branch}: the branch is checked out at ${existing.path} — remove that worktree or check out another branch there`);
    const base = refArg('base', s.baseRef);
    const sha = await gitMaybe(s.repoRoot, ['rev-parse', '--verify', '--quiet', `${base}^{commit}`]);
    if (!sha) throw new WorktreeError(`cannot create the worktree for ${branch}: the base ${base} is not a commit in ${s.repoRoot} — fetch it or fix the route's base`);
    await mkdir(dirname(path), { recursive: true });
    // A worktree folder deleted by hand leaves git's record of it behind; prune it so the branch can be checked out again.
    await git(s.repoRoot, ['worktree', 'prune'], 'pruning stale worktrees');
    const branchExists = (await gitMaybe(s.repoRoot, ['rev-parse', '--verify', '--quiet', `refs/heads/${branch}`])) !== null;
    if (branchExists) {
      // The node's branch outlived its worktree (a crash before the record): its commits are the agent's work, kept.
      await git(s.repoRoot, ['worktree', 'add', '--quiet', path, branch], `cannot create the worktree for ${branch}`);
      baseSha = (await gitMaybe(s.repoRoot, ['config', '--get', `branch.${branch}.sledsbase`])) ?? sha;
    } else {
      await git(s.repoRoot, ['worktree', 'add', '--quiet', '--no-track', '-b', branch, path, sha], `cannot create the worktree for ${branch}`);
      baseSha = sha;
    }
    await git(s.repoRoot, ['config', `branch.${branch}.sledsbase`, baseSha], `recording the base of ${branch}`);
  }

  const gitDir = await gitDirOf(path);
  const copied = new Set(await includedIn(gitDir));
  for (const rel of includes) {
    const to = join(path, rel);
    // A file the worktree has (tracked, or copied on an earlier start) is left as it is.
    if (existsSync(to) || (await lstat(to).catch(() => null))) continue;
    await mkdir(dirname(to), { recursive: true });
    await copyFile(join(sources, rel), to);
    copied.add(rel);
  }
  if (copied.size > 0) await writeFile(join(gitDir, INCLUDED), JSON.stringify([...copied].sort()));

  if (!existsSync(join(gitDir, SETUP_DONE))) {
    const env = { ...s.env, SLEDS_PORT_BASE: String(s.portBase) };
    for (const argv of s.setup) {
      const r = await run(argv, path, env);
      if (r.code !== 0) {
        throw new WorktreeError(`the setup ${JSON.stringify(argv.join(' '))} failed in ${path} (${r.code === null ? 'killed' : `exit ${r.code}`}): ${r.tail.slice(0, 300)}`);
      }
    }
    await writeFile(join(gitDir, SETUP_DONE), '');
  }
  return { path, branch, baseSha };
}

export async function removeWorktree(repoRoot: string, path: string): Promise<void> {
  const listed = await listWorktrees(repoRoot);
  let known = false;
  for (const w of listed) if (await samePath(w.path, path)) known = true;
  if (known) await git(repoRoot, ['worktree', 'remove', '--force', '--force', path], `removing the worktree ${path}`);
  // A folder deleted by hand: git's record of it goes too.
  await git(repoRoot, ['worktree', 'prune'], 'pruning stale worktrees');
}

/**
 * The base for a node: the remote's base branch after a fetch. A dependency lands there when a person merges its
 * PR (squash or merge commit alike), so the tip is the merged tip; `dependencyBranches` are checked only as names.
 */
export async function mergedTip(repoRoot: string, remote: string, baseBranch: string, dependencyBranches: string[]): Promise<string> {
  refArg('remote', remote);
  refArg('base branch', baseBranch);
  for (const b of dependencyBranches) refArg('dependency branch', b);
  const tracking = `refs/remotes/${remote}/${baseBranch}`;
  await git(repoRoot, ['fetch', '--quiet', '--no-tags', remote, `+refs/heads/${baseBranch}:${tracking}`], `fetching ${baseBranch} from ${remote}`);
  return (await git(repoRoot, ['rev-parse', '--verify', `${tracking}^{commit}`], `reading ${remote}/${baseBranch}`)).trim();
}

export async function pushBranch(worktree: string, remote: string, branch: string): Promise<void> {
  refArg('remote', remote);
  refArg('branch', branch);
  // The node's branch is its own: a rebase after a conflict is pushed over the last push.
  if (!branch.startsWith('sleds/')) throw new WorktreeError(`sleds pushes only its own sleds/… branches, not ${branch}`);
  await git(worktree, ['push', '--quiet', '--no-verify', remote, `+refs/heads/${branch}:refs/heads/${branch}`], `pushing ${branch} to ${remote}`);
}

/** Commits whatever the agent left in the worktree; the new commit's sha, or null when nothing had changed. */
export async function commitAll(worktree: string, message: string): Promise<string | null> {
  const leaveOut = (await includedIn(await gitDirOf(worktree))).map((rel) => `:(exclude,literal)${rel}`);
  await git(worktree, ['add', '--all', '--', '.', ...leaveOut], `staging the work in ${worktree}`);
  const staged = await gitExec(['diff', '--cached', '--quiet'], { cwd: worktree });
  if (staged.code === 0) return null;
  // An engineer's machine without a git identity still gets its work committed, under sleds' name.
  const identity: Record<string, string> = {};
  if (!(await gitMaybe(worktree, ['config', '--get', 'user.email']))) Object.assign(identity, { GIT_AUTHOR_NAME: 'sleds', GIT_AUTHOR_EMAIL: 'sleds@localhost', GIT_COMMITTER_NAME: 'sleds', GIT_COMMITTER_EMAIL: 'sleds@localhost' });
  await git(worktree, ['commit', '--quiet', '--no-verify', '-F', '-'], `committing the work in ${worktree}`, { input: message, env: identity });
  return (await git(worktree, ['rev-parse', 'HEAD'], `reading HEAD in ${worktree}`)).trim();
}

/** The files a node's branch changed since its base (`git diff --name-only base HEAD`), for its summary. */
export async function changedFiles(worktree: string, baseSha: string): Promise<string[]> {
  const out = await git(worktree, ['diff', '--name-only', '--no-renames', baseSha, 'HEAD', '--'], `listing what changed in ${worktree}`);
  return out.split('\n').filter((l) => l.trim() !== '');
}

/** Where a node's checkpoints are kept: a ref of sleds' own beside its branch, never pushed. */
export const checkpointRef = (branch: string): string => `refs/sleds/checkpoints/${refArg('branch', branch)}`;

/**
 * A checkpoint of the worktree (issue 15 § 4): its files as they are now — committed, uncommitted and untracked,
 * less what the include list copied in — as a commit on top of the branch's head, made through a private index so
 * the agent's branch, index and files are untouched. Kept under checkpointRef(branch) so git never collects it. The
 * head itself when the worktree has nothing uncommitted.
 */
export async function checkpointWorktree(worktree: string, branch: string, message: string): Promise<string> {
  const gitDir = await gitDirOf(worktree);
  const head = (await git(worktree, ['rev-parse', 'HEAD'], `reading HEAD in ${worktree}`)).trim();
  const index = { GIT_INDEX_FILE: join(gitDir, 'sleds-checkpoint-index') };
  const leaveOut = (await includedIn(gitDir)).map((rel) => `:(exclude,literal)${rel}`);
  // From a copy of the worktree's own index (its file stats spare hashing every file again), else from the head.
  const copied = await copyFile(join(gitDir, 'index'), index.GIT_INDEX_FILE).then(
    () => true,
    () => false,
  );
  if (!copied) await git(worktree, ['read-tree', 'HEAD'], `checkpointing ${worktree}`, { env: index });
  await git(worktree, ['add', '--all', '--', '.', ...leaveOut], `checkpointing ${worktree}`, { env: index });
  const tree = (await git(worktree, ['write-tree'], `checkpointing ${worktree}`, { env: index })).trim();
  const headTree = (await git(worktree, ['rev-parse', 'HEAD^{tree}'], `checkpointing ${worktree}`)).trim();
  let commit = head;
  if (tree !== headTree) {
    const identity = { GIT_AUTHOR_NAME: 'sleds', GIT_AUTHOR_EMAIL: 'sleds@localhost', GIT_COMMITTER_NAME: 'sleds', GIT_COMMITTER_EMAIL: 'sleds@localhost' };
    commit = (await git(worktree, ['commit-tree', tree, '-p', head, '-F', '-'], `checkpointing ${worktree}`, { input: message, env: identity })).trim();
  }
  await git(worktree, ['update-ref', checkpointRef(branch), commit], `keeping the checkpoint of ${branch}`);
  return commit;
}

/**
 * The worktree's files as the checkpoint left them, on its branch as it is: the checkpoint's changes on top of the
 * head come back as uncommitted work (the index is the head's again), so the agent carries on where it was.
 */
export async function restoreCheckpoint(worktree: string, commit: string): Promise<void> {
  if (!/^[0-9a-f]{40,64}$/.test(commit)) throw new WorktreeError(`the checkpoint ${JSON.stringify(commit.slice(0, 80))} is not a commit id`);
  const head = (await git(worktree, ['rev-parse', 'HEAD'], `reading HEAD in ${worktree}`)).trim();
  if (head === commit) return;
  await git(worktree, ['read-tree', '-u', '--reset', commit], `restoring the checkpoint ${commit.slice(0, 12)} in ${worktree}`);
  await git(worktree, ['reset', '--quiet'], `restoring the checkpoint ${commit.slice(0, 12)} in ${worktree}`);
}
