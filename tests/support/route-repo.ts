import { execFileSync } from 'node:child_process';
import { writeFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';

const IDENTITY = { GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@x', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@x' };

/** Real git, argv only, with a fixed identity; its trimmed stdout. */
export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', env: { ...process.env, ...IDENTITY } }).trim();
}

/** The identity an agent commits with, for an engine's (or harness's) environment. */
export const AGENT_GIT_IDENTITY = { GIT_AUTHOR_NAME: 'agent', GIT_AUTHOR_EMAIL: 'agent@x', GIT_COMMITTER_NAME: 'agent', GIT_COMMITTER_EMAIL: 'agent@x' };

/**
 * A repository the engine can run a route in, under `root`: a bare remote (`remote.git`, where the fake GitHub
 * merges), a clone (`repo`) on main with `files` committed and pushed, origin's HEAD set, and a `github` remote that
 * names it on GitHub (acme/shop; never fetched) so its pull requests have a repository.
 */
export function routeRepo(root: string, files: Record<string, string>): { bare: string; repo: string } {
  const bare = join(root, 'remote.git');
  const repo = join(root, 'repo');
  git(root, 'init', '-q', '--bare', '-b', 'main', bare);
  git(root, 'clone', '-q', bare, repo);
  git(repo, 'checkout', '-q', '-b', 'main');
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(dirname(join(repo, name)), { recursive: true });
    writeFileSync(join(repo, name), text);
  }
  git(repo, 'add', '.');
  git(repo, 'commit', '-q', '-m', 'start');
  git(repo, 'push', '-q', 'origin', 'main');
  git(repo, 'remote', 'set-head', 'origin', 'main');
  git(repo, 'remote', 'add', 'github', 'https://github.com/acme/shop.git');
  return { bare, repo };
}
