import type { GithubRepo } from '../github/remote.js';

/**
 * The one search query a tracker round sends: open issues with the label, in any of the repositories. GitHub's
 * issue search is "advanced" by default since 2025-09-04, and under it adjacent `repo:` qualifiers may combine with
 * AND (shared/facts/integrations.md §4.2), so several repositories are joined with an explicit OR in parentheses and the
 * request opts in with `advanced_search=true`. Pure.
 */
export function githubIssueQuery(repos: GithubRepo[], label: string): string {
  const quoted = /[\s"]/.test(label) ? `"${label.replace(/"/g, '')}"` : label;
  const scope = repos.map((r) => `repo:${r.owner}/${r.name}`);
  const where = scope.length === 1 ? scope[0]! : `(${scope.join(' OR ')})`;
  return `is:issue is:open label:${quoted} ${where}`;
}

/** The owner/name of an issue from its `repository_url` (`https://api.github.com/repos/o/r`). */
export function repoOfIssueUrl(repositoryUrl: string): GithubRepo | null {
  const m = /\/repos\/([^/]+)\/([^/]+?)\/?$/.exec(repositoryUrl);
  return m ? { owner: decodeURIComponent(m[1]!), name: decodeURIComponent(m[2]!) } : null;
}
