/**
 * Which GitHub repository a checkout's remote points at. git accepts many spellings of one remote: https (with or
 * without credentials, `.git`, a trailing slash), scp-like ssh (`git@github.com:o/r.git`), `ssh://` (with a port,
 * e.g. ssh.github.com:443), `git://`. Pure: the URL comes from `git remote get-url origin`.
 */

export interface GithubRepo {
  owner: string;
  name: string;
}

/** `owner/name`, as the REST paths and search qualifiers spell it. */
export function repoSlug(r: GithubRepo): string {
  return `${r.owner}/${r.name}`;
}

// GitHub's own limits: a login is letters, digits and single hyphens; a repository name adds '.' and '_'.
const OWNER = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$/;
const NAME = /^[A-Za-z0-9._-]{1,100}$/;

/** `owner/name` typed by a person (the policy's tracker repos); null when it is not one. */
export function parseRepoSlug(text: string): GithubRepo | null {
  const m = /^\s*([^/\s]+)\/([^/\s]+?)\s*$/.exec(text);
  return m ? checked(m[1]!, m[2]!) : null;
}

function checked(owner: string, rawName: string): GithubRepo | null {
  const name = rawName.replace(/\.git$/i, '');
  if (!OWNER.test(owner) || !NAME.test(name) || name === '.' || name === '..') return null;
  return { owner, name };
}

/** The host and path of a remote URL in any of git's spellings; null for local paths and file:// remotes. */
export function splitRemote(url: string): { host: string; path: string } | null {
  const u = url.trim();
  // scheme://[user[:password]@]host[:port]/path
  const withScheme = /^(?:https?|ssh|git|git\+ssh|ssh\+git):\/\/(?:[^@/]*@)?([^/:]+)(?::\d*)?\/(.+)$/i.exec(u);
  if (withScheme) return { host: withScheme[1]!.toLowerCase(), path: withScheme[2]! };
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(u)) return null; // file://, or a scheme git does not use for GitHub
  // scp-like: [user@]host:path (a colon before any slash; not a Windows drive letter)
  const scp = /^(?:[^@/:]+@)?([^/:]{2,}):(?!\/\/)(.+)$/.exec(u);
  if (scp) return { host: scp[1]!.toLowerCase(), path: scp[2]! };
  return null;
}

/** ssh over port 443 goes to ssh.github.com; www. is the same site. */
const GITHUB_HOSTS = new Set(['github.com', 'www.github.com', 'ssh.github.com']);

/**
 * The GitHub repository a remote URL names, or null when it is not a GitHub remote. `extraHosts` adds a GitHub
 * Enterprise host (the one config.yml's upstreams.github points at).
 */
export function githubRepoOfRemote(url: string, extraHosts: string[] = []): GithubRepo | null {
  const split = splitRemote(url);
  if (!split) return null;
  if (!GITHUB_HOSTS.has(split.host) && !extraHosts.map((h) => h.toLowerCase()).includes(split.host)) return null;
  const parts = split.path.replace(/^\/+/, '').replace(/\/+$/, '').split('/');
  if (parts.length !== 2) return null;
  return checked(parts[0]!, parts[1]!);
}
