import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { commitAll, createWorktree, listWorktrees, mergedTip, pushBranch, removeWorktree, WorktreeError, type WorktreeSpec } from '../../musher/engine/worktree.js';

/** A real bare remote, the engineer's clone of it, and a teammate's clone that pushes what a person merged. */
let root: string;
let remote: string;
let repo: string;
let teammate: string;

const GIT_ENV = { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@x', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@x' };
function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, env: GIT_ENV, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

beforeEach(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), 'sl-wt-')));
  remote = join(root, 'remote.git');
  git(root, 'init', '-q', '--bare', '-b', 'main', remote);
  repo = join(root, 'repo');
  git(root, 'clone', '-q', remote, repo);
  writeFileSync(join(repo, 'README.md'), '# shop\n');
  writeFileSync(join(repo, '.gitignore'), '.env\nconfig/*.local\n');
  git(repo, 'add', '.');
  git(repo, 'commit', '-q', '-m', 'first');
  git(repo, 'push', '-q', 'origin', 'HEAD:main');
  teammate = join(root, 'teammate');
  git(root, 'clone', '-q', remote, teammate);
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

function spec(over: Partial<WorktreeSpec> = {}): WorktreeSpec {
  return { repoRoot: repo, routeKey: 'eng-503', nodeId: 'export-api', baseRef: 'HEAD', worktreesDir: join(root, 'worktrees'), setup: [], include: [], portBase: 41000, env: { PATH: process.env.PATH }, ...over };
}

async function thrown(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (e) {
    return e as Error;
  }
  throw new Error('expected a rejection');
}

describe('a node worktree (real git, a real bare remote)', () => {
  it('is made on sleds/<route>/<node> from the merged tip the remote has after a person merged a dependency', async () => {
    writeFileSync(join(teammate, 'dep.txt'), 'merged dependency\n');
    git(teammate, 'add', '.');
    git(teammate, 'commit', '-q', '-m', 'merge #1: the dependency');
    git(teammate, 'push', '-q', 'origin', 'HEAD:main');
    const merged = git(teammate, 'rev-parse', 'HEAD');

    const tip = await mergedTip(repo, 'origin', 'main', ['sleds/eng-503/schema']);
    expect(tip).toBe(merged);
    const wt = await createWorktree(spec({ baseRef: tip }));
    expect(wt.branch).toBe('sleds/eng-503/export-api');
    expect(wt.path).toBe(join(root, 'worktrees', 'eng-503', 'export-api'));
    expect(wt.baseSha).toBe(merged);
    expect(git(wt.path, 'rev-parse', 'HEAD')).toBe(merged);
    expect(git(wt.path, 'symbolic-ref', '--short', 'HEAD')).toBe('sleds/eng-503/export-api');
    expect(readFileSync(join(wt.path, 'dep.txt'), 'utf8')).toBe('merged dependency\n');
    const listed = await listWorktrees(repo);
    expect(listed).toContainEqual({ path: wt.path, branch: 'sleds/eng-503/export-api', head: merged });
  });

  it('copies the included untracked files (.env, a glob) with their mode, and runs the setup with SLEDS_PORT_BASE', async () => {
    writeFileSync(join(repo, '.env'), 'DATABASE_URL=postgres://localhost/shop\n');
    chmodSync(join(repo, '.env'), 0o600);
    mkdirSync(join(repo, 'config'));
    writeFileSync(join(repo, 'config', 'db.local'), 'local db\n');
    writeFileSync(join(repo, 'config', 'other.txt'), 'not included\n');
    const script = "require('fs').writeFileSync('port.txt', String(process.env.SLEDS_PORT_BASE))";
    const wt = await createWorktree(spec({ include: ['.env', 'config/*.local', 'missing.env'], setup: [[process.execPath, '-e', script]], portBase: 41230 }));
    expect(readFileSync(join(wt.path, '.env'), 'utf8')).toBe('DATABASE_URL=postgres://localhost/shop\n');
    expect(statSync(join(wt.path, '.env')).mode & 0o777).toBe(0o600);
    expect(readFileSync(join(wt.path, 'config', 'db.local'), 'utf8')).toBe('local db\n');
    expect(existsSync(join(wt.path, 'config', 'other.txt'))).toBe(false);
    expect(readFileSync(join(wt.path, 'port.txt'), 'utf8')).toBe('41230');
  });

  it("refuses an include that leaves the repository, and one whose symlink points outside it, before making anything", async () => {
    const e1 = await thrown(createWorktree(spec({ include: ['../secrets.txt'] })));
    expect(e1).toBeInstanceOf(WorktreeError);
    expect(e1.message).toMatch(/the include "\.\.\/secrets\.txt" leaves the repository/);
    expect(e1.message).not.toContain('\n');

    const outside = join(root, 'outside');
    mkdirSync(outside);
    writeFileSync(join(outside, 'id_ed25519'), 'PRIVATE KEY\n');
    symlinkSync(join(outside, 'id_ed25519'), join(repo, 'key.local'));
    const e2 = await thrown(createWorktree(spec({ include: ['*.local'] })));
    expect(e2).toBeInstanceOf(WorktreeError);
    expect(e2.message).toMatch(/key\.local, which points outside the repository/);
    expect(existsSync(join(root, 'worktrees', 'eng-503', 'export-api'))).toBe(false);
  });

  it('a second create (a restart) finds the same worktree with the work in it, and does not run the setup again', async () => {
    const script = "require('fs').appendFileSync(require('path').join(process.env.COUNT_DIR, 'runs'), 'x')";
    const s = spec({ setup: [[process.execPath, '-e', script]], env: { PATH: process.env.PATH, COUNT_DIR: root } });
    const first = await createWorktree(s);
    writeFileSync(join(first.path, 'work.ts'), 'export const half = 1;\n');
    const again = await createWorktree(s);
    expect(again).toEqual(first);
    expect(readFileSync(join(again.path, 'work.ts'), 'utf8')).toBe('export const half = 1;\n');
    expect(readFileSync(join(root, 'runs'), 'utf8')).toBe('x');
    expect((await listWorktrees(repo)).filter((w) => w.branch === first.branch)).toHaveLength(1);
  });

  it('a setup that fails is one WorktreeError line naming the command and its last output line', async () => {
    const e = await thrown(createWorktree(spec({ setup: [[process.execPath, '-e', "console.error('npm ERR! missing lockfile'); process.exit(3)"]] })));
    expect(e).toBeInstanceOf(WorktreeError);
    expect(e.message).toMatch(/the setup ".*" failed in .* \(exit 3\): npm ERR! missing lockfile$/);
    expect(e.message).not.toContain('\n');
  });

  it('remove cleans the folder and git’s record of it; the branch (with the PR’s commits) stays', async () => {
    const wt = await createWorktree(spec());
    await removeWorktree(repo, wt.path);
    expect(existsSync(wt.path)).toBe(false);
    expect((await listWorktrees(repo)).map((w) => w.path)).not.toContain(wt.path);
    expect(git(repo, 'branch', '--list', wt.branch)).toContain(wt.branch);
    await removeWorktree(repo, wt.path); // gone already: nothing to do, no error
  });

  it('cannot be made when the branch is checked out elsewhere or the base is not a commit: one WorktreeError line each', async () => {
    git(repo, 'worktree', 'add', '-q', '-b', 'sleds/eng-503/export-api', join(root, 'by-hand'), 'HEAD');
    const e1 = await thrown(createWorktree(spec()));
    expect(e1).toBeInstanceOf(WorktreeError);
    expect(e1.message).toMatch(/sleds\/eng-503\/export-api: the branch is checked out at .*by-hand/);
    expect(e1.message).not.toContain('\n');

    const e2 = await thrown(createWorktree(spec({ nodeId: 'other', baseRef: 'no-such-branch' })));
    expect(e2).toBeInstanceOf(WorktreeError);
    expect(e2.message).toMatch(/the base no-such-branch is not a commit/);
    const e3 = await thrown(createWorktree(spec({ nodeId: '../../etc' })));
    expect(e3).toBeInstanceOf(WorktreeError);
    expect(e3.message).toMatch(/cannot name a branch/);
  });

  it('never commits what the include list copied in, even a .env the repository does not ignore', async () => {
    writeFileSync(join(repo, 'secrets.env'), 'STRIPE_KEY=sk_live_x\n');
    const wt = await createWorktree(spec({ include: ['secrets.env'] }));
    writeFileSync(join(wt.path, 'export.ts'), 'export const rows = [];\n');
    const sha = await commitAll(wt.path, 'export-api: rows');
    expect(git(wt.path, 'show', '--name-only', '--format=', sha!)).toBe('export.ts');
    expect(existsSync(join(wt.path, 'secrets.env'))).toBe(true);
    // After a restart too.
    await createWorktree(spec({ include: ['secrets.env'] }));
    writeFileSync(join(wt.path, 'more.ts'), 'export const more = 1;\n');
    const next = await commitAll(wt.path, 'more');
    expect(git(wt.path, 'show', '--name-only', '--format=', next!)).toBe('more.ts');
    expect(await commitAll(wt.path, 'only the copied file is left')).toBeNull();
  });

  it('refuses a base, remote or branch that git would read as an option', async () => {
    await expect(createWorktree(spec({ baseRef: '--output=/tmp/x' }))).rejects.toThrow(/the base "--output=\/tmp\/x" is not a git name/);
    await expect(mergedTip(repo, '--upload-pack=touch /tmp/pwned', 'main', [])).rejects.toThrow(WorktreeError);
    await expect(pushBranch(repo, '-oProxyCommand=x', 'sleds/r/n')).rejects.toThrow(/the remote "-oProxyCommand=x" is not a git name/);
  });

  it('commits what the agent left uncommitted (null when nothing changed) and pushes the branch to the remote', async () => {
    const wt = await createWorktree(spec());
    expect(await commitAll(wt.path, 'nothing yet')).toBeNull();
    writeFileSync(join(wt.path, 'export.ts'), 'export const rows = [];\n');
    const sha = await commitAll(wt.path, 'export-api: the export endpoint\n\nRoute eng-503.');
    expect(sha).toMatch(/^[0-9a-f]{40}$/);
    expect(git(wt.path, 'log', '-1', '--format=%s')).toBe('export-api: the export endpoint');
    await pushBranch(wt.path, 'origin', wt.branch);
    expect(git(remote, 'rev-parse', `refs/heads/${wt.branch}`)).toBe(sha);
    const e = await thrown(pushBranch(wt.path, 'origin', 'main'));
    expect(e.message).toMatch(/only its own sleds\/… branches/);
  });
});
