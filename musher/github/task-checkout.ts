import type { GithubRepo } from '../../core/github/remote.js';
import type { CheckoutReader } from './checkout.js';
import type { SessionLookup, TaskLookup } from './ports.js';

export interface TaskBranch {
  root: string;
  /** Where the task's pull request lives (the team's repository, also when the work is pushed to a fork). */
  repo: GithubRepo;
  /** The local branch. */
  branch: string;
  /** Where the branch is pushed: the PR's head is `head.repo.owner:head.branch` (a fork's owner for a fork). */
  head: { repo: GithubRepo; branch: string };
}

/** The `head` filter of GitHub's pulls list, and a PR's `head.label`: `owner:branch`. */
export function headLabel(t: TaskBranch): string {
  return `${t.head.repo.owner}:${t.head.branch}`;
}

/**
 * The branch a task's work is on: the checkout of its most recently seen session that has a GitHub repository for
 * its pull requests and whose HEAD is on a branch pushed to GitHub. Null when it has none (no session yet, a
 * detached HEAD, no GitHub remote).
 */
export async function taskBranch(taskId: string, d: { tasks: TaskLookup; sessions: SessionLookup; checkouts: CheckoutReader }): Promise<TaskBranch | null> {
  const sessions = d.tasks
    .sessionsOf(taskId)
    .map((id) => d.sessions.get(id))
    .filter((s): s is { cwd: string; lastSeenAt: number } => Boolean(s?.cwd))
    .sort((a, b) => b.lastSeenAt - a.lastSeenAt);
  for (const s of sessions) {
    const c = await d.checkouts.read(s.cwd);
    if (c?.repo && c.branch && c.head) return { root: c.root, repo: c.repo, branch: c.branch, head: c.head };
  }
  return null;
}
