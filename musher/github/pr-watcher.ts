import { repoSlug, type GithubRepo } from '../../core/github/remote.js';
import type { Task } from '../../core/task/task.js';
import type { Clock } from '../clock.js';
import type { Log } from '../log.js';
import type { CheckoutReader } from './checkout.js';
import type { GithubClient } from './client.js';
import type { FinishAnswer, SessionLookup, TaskLookup } from './ports.js';
import { realRoundTimers, Rounds, type RoundTimers } from './rounds.js';
import { taskBranch } from './task-checkout.js';
import { PullRequests } from './wire.js';

/**
 * Notices a pull request opened for an open task's branch and ends the task (`finishTask(id, 'pr-opened')`: its
 * receipt is written then). Slow on purpose: a round every 2 minutes, one request per repository (the open PRs,
 * newest first), matched against the branches of the open tasks there. A PR opened before the task started is an
 * older piece of work on the same branch, not this task's end.
 */

export const PR_WATCH_EVERY_MS = 120_000;
const STALE_TASK_MS = 14 * 86_400_000;

export interface PrWatcherDeps {
  client: GithubClient;
  tasks: TaskLookup;
  sessions: SessionLookup;
  checkouts: CheckoutReader;
  finish: (taskId: string) => Promise<FinishAnswer>;
  clock: Clock;
  log: Log;
  timers?: RoundTimers;
  everyMs?: number;
}

export interface PrWatchRound {
  /** Repositories asked. */
  repos: string[];
  /** Tasks ended, with the PR that ended each. */
  finished: Array<{ taskId: string; pr: string }>;
  errors: string[];
}

export class PrWatcher {
  private readonly rounds: Rounds<PrWatchRound>;
  /** Tasks handed to finish already: not again, even if the receipt side failed (it says so in its log). */
  private readonly handed = new Set<string>();
  /** The last trouble logged: the same one every 2 minutes is logged once. */
  private lastWarned = '';

  constructor(private readonly d: PrWatcherDeps) {
    this.rounds = new Rounds('pr watcher', () => this.round(), () => d.everyMs ?? PR_WATCH_EVERY_MS, d.timers ?? realRoundTimers, d.log);
  }

  start(firstInMs = 0): void {
    this.rounds.start(firstInMs);
  }

  stop(): Promise<void> {
    return this.rounds.stop();
  }

  runNow(): Promise<PrWatchRound> {
    return this.rounds.runNow();
  }

  private async round(): Promise<PrWatchRound> {
    const out: PrWatchRound = { repos: [], finished: [], errors: [] };
    const byRepo = new Map<string, { repo: GithubRepo; tasks: Array<{ task: Task; branch: string }> }>();
    const now = this.d.clock.now();
    for (const task of this.d.tasks.list({ state: 'open', limit: 500 })) {
      // A task untouched for two weeks is not waiting for its PR: not worth a git call every round.
      if (this.handed.has(task.id) || now - task.updatedAt > STALE_TASK_MS) continue;
      const where = await taskBranch(task.id, this.d);
      if (!where) continue;
      const slug = repoSlug(where.repo);
      const entry = byRepo.get(slug) ?? { repo: where.repo, tasks: [] };
      entry.tasks.push({ task, branch: where.branch });
      byRepo.set(slug, entry);
    }
    for (const [slug, { repo, tasks }] of byRepo) {
      out.repos.push(slug);
      const listed = await this.d.client.request('GET', `/repos/${slug}/pulls`, {
        query: { state: 'open', sort: 'created', direction: 'desc', per_page: 100 },
        schema: PullRequests,
        what: `listing the open pull requests of ${slug}`,
      });
      if (!listed.ok) {
        out.errors.push(listed.error);
        if (listed.error !== this.lastWarned) this.d.log.warn(`pr watcher: ${listed.error}`);
        this.lastWarned = listed.error;
        continue;
      }
      this.lastWarned = '';
      for (const { task, branch } of tasks) {
        const pr = listed.data.find(
          (p) => p.head.ref === branch && (p.head.label === undefined || p.head.label === `${repo.owner}:${branch}`) && Date.parse(p.created_at) >= task.createdAt - 1000, // GitHub keeps whole seconds
        );
        if (!pr) continue;
        this.handed.add(task.id);
        const answer = await this.d.finish(task.id);
        if ('error' in answer) this.d.log.warn(`pr watcher: ${slug}#${pr.number} opened for task ${task.id}, but its receipt failed: ${answer.error}`);
        else this.d.log.info(`pr watcher: ${slug}#${pr.number} opened — task ${task.id} done: ${answer.line}`);
        out.finished.push({ taskId: task.id, pr: pr.html_url });
      }
    }
    return out;
  }
}
