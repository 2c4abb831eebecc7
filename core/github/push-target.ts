import { githubRepoOfRemote, type GithubRepo } from './remote.js';

/**
 * Where a checkout's branch goes on GitHub, from its git configuration — the way `git push` and `gh pr create`
 * decide it, so a session working in a fork (origin = the user's fork, upstream = the team's repository) is
 * followed to the team's pull requests:
 * - the **head** is where `git push` sends the branch: `branch.<b>.pushRemote`, else `remote.pushDefault`, else
 *   `branch.<b>.remote`, else origin (and the remote's pushurl when it has one), under the same branch name unless
 *   `push.default` is `upstream`/`tracking`, which pushes to the tracked branch;
 * - the **base** (where the pull request lives) is gh's default repository: a remote marked
 *   `remote.<r>.gh-resolved = base` (`gh repo set-default`), else the first GitHub remote among upstream, github,
 *   origin, then any other (alphabetical).
 * Pure: the caller runs git.
 */

export interface RemoteUrls {
  /** The URL fetched from (`git remote -v` "(fetch)"). */
  fetch: string | null;
  /** The URL pushed to (`remote.<r>.pushurl`, else the fetch URL). */
  push: string | null;
}

export interface PushConfig {
  /** Local branch; null when HEAD is detached. */
  branch: string | null;
  remotes: Map<string, RemoteUrls>;
  /** Remotes with `gh-resolved = base`. */
  ghResolvedBase: string[];
  /** The remote a push goes to; null when none is configured (then origin). */
  pushRemote: string | null;
  /** `branch.<b>.remote` and `branch.<b>.merge` ("refs/heads/x"). */
  upstreamRemote: string | null;
  upstreamRef: string | null;
  /** `push.default`; git's default is simple. */
  pushDefault: string | null;
}

export interface PushTarget {
  /** Where pull requests for the branch live; null when no remote is on GitHub. */
  base: GithubRepo | null;
  /** Where the branch is pushed: the PR's `head` is `repo.owner:branch`. Null when detached or not on GitHub. */
  head: { repo: GithubRepo; branch: string } | null;
}

/** `git remote -v`: "name\turl (fetch)" and "name\turl (push)" lines. */
export function parseRemoteList(text: string): Map<string, RemoteUrls> {
  const out = new Map<string, RemoteUrls>();
  for (const line of text.split('\n')) {
    const m = /^(\S+)\s+(.+?)\s+\((fetch|push)\)\s*$/.exec(line);
    if (!m) continue;
    const entry = out.get(m[1]!) ?? { fetch: null, push: null };
    if (m[3] === 'fetch') entry.fetch = m[2]!;
    else entry.push = m[2]!;
    out.set(m[1]!, entry);
  }
  return out;
}

/** The git settings that decide a push, asked for in one `git config -z --get-regexp` (see PUSH_CONFIG_REGEXP). */
export const PUSH_CONFIG_REGEXP = '^(branch\\..+\\.(pushremote|remote|merge)|remote\\.pushdefault|push\\.default|remote\\..+\\.gh-resolved)$';

/** `git config -z --get-regexp` output: "key\nvalue\0" entries (section and variable names lower-cased by git). */
export function parseConfigZ(text: string): Array<[string, string]> {
  return text
    .split('\0')
    .filter((e) => e !== '')
    .map((e) => {
      const nl = e.indexOf('\n');
      return nl < 0 ? [e, ''] : [e.slice(0, nl), e.slice(nl + 1)];
    });
}

/**
 * The push settings of a branch, resolved in git's order: the push remote is `branch.<b>.pushRemote`, else
 * `remote.pushDefault`, else `branch.<b>.remote` (else origin, in pushTarget). Read from the configuration rather
 * than `for-each-ref %(push:remotename)`, which says nothing for a branch with no commit yet.
 */
export function pushConfigOf(branch: string | null, remotes: Map<string, RemoteUrls>, entries: Array<[string, string]>): PushConfig {
  const last = (key: string): string | null => {
    let v: string | null = null;
    for (const [k, val] of entries) if (k === key) v = val; // the last one wins, as in git
    return v;
  };
  const ofBranch = (name: string): string | null => (branch === null ? null : last(`branch.${branch}.${name}`));
  const upstreamRemote = ofBranch('remote');
  return {
    branch,
    remotes,
    ghResolvedBase: entries.filter(([k, v]) => /^remote\..+\.gh-resolved$/.test(k) && v.trim() === 'base').map(([k]) => k.slice('remote.'.length, -'.gh-resolved'.length)),
    pushRemote: ofBranch('pushremote') || last('remote.pushdefault') || upstreamRemote || null,
    upstreamRemote: upstreamRemote || null,
    upstreamRef: ofBranch('merge') || null,
    pushDefault: last('push.default'),
  };
}

const BASE_PRIORITY = ['upstream', 'github', 'origin'];

export function pushTarget(c: PushConfig, extraHosts: string[] = []): PushTarget {
  const repoOf = (name: string, which: keyof RemoteUrls): GithubRepo | null => {
    const r = c.remotes.get(name);
    const url = which === 'push' ? (r?.push ?? r?.fetch) : r?.fetch;
    return url ? githubRepoOfRemote(url, extraHosts) : null;
  };
  const ordered = [
    ...c.ghResolvedBase,
    ...BASE_PRIORITY,
    ...[...c.remotes.keys()].filter((n) => !BASE_PRIORITY.includes(n)).sort(),
  ];
  let base: GithubRepo | null = null;
  for (const name of ordered) {
    base = repoOf(name, 'fetch');
    if (base) break;
  }
  if (!c.branch) return { base, head: null };
  const remote = c.pushRemote || 'origin';
  const headRepo = repoOf(remote, 'push');
  if (!headRepo) return { base, head: null };
  const toTracked = (c.pushDefault === 'upstream' || c.pushDefault === 'tracking') && c.upstreamRemote === remote && c.upstreamRef?.startsWith('refs/heads/');
  const branch = toTracked ? c.upstreamRef!.slice('refs/heads/'.length) : c.branch;
  return { base: base ?? headRepo, head: { repo: headRepo, branch } };
}
