import type { GithubRepo } from '../../core/github/remote.js';
import type { CheckoutReader } from './checkout.js';
import type { SessionLookup, TaskLookup } from './ports.js';

export interface TaskBranch {
  root: string;
  repo: GithubRepo;
  branch: string;
}

/**
 * The branch a task's work is on: the checkout of its most recently seen session whose origin is on GitHub and whose
 * HEAD is on a branch. Null when it has none (no session yet, a detached HEAD, no GitHub origin).
 */
export async function taskBranch(taskId: string, d: { tasks: TaskLookup; sessions: SessionLookup; checkouts: CheckoutReader }): Promise<TaskBranch | null> {
  const sessions = d.tasks
    .sessionsOf(taskId)
    .map((id) => d.sessions.get(id))
    .filter((s): s is { cwd: string; lastSeenAt: number } => Boolean(s?.cwd))
    .sort((a, b) => b.lastSeenAt - a.lastSeenAt);
  for (const s of sessions) {
    const c = await d.checkouts.read(s.cwd);
    if (c?.repo && c.branch) return { root: c.root, repo: c.repo, branch: c.branch };
  }
  return null;
}
