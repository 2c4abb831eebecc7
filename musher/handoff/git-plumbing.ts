import { firstLine, gitExec, gitOk } from './git-exec.js';

/** The few git plumbing steps the hand-off's transports and worktree rebuild share. */

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

/** The remote a repository's hand-off work is fetched from: origin, else the first; null when it has none. */
export async function ordinaryRemote(top: string): Promise<string | null> {
  const r = await gitExec(['remote'], { cwd: top });
  if (r.code !== 0) throw new Error(`could not list the remotes of ${top}: ${firstLine(r.stderr)}`);
  const names = r.stdout.toString('utf8').split('\n').filter((n) => n.length > 0);
  return names.includes('origin') ? 'origin' : (names[0] ?? null);
}

export async function hasCommit(top: string, sha: string): Promise<boolean> {
  return (await gitExec(['cat-file', '-e', `${sha}^{commit}`], { cwd: top })).code === 0;
}
