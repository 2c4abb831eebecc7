import { repoSlug, type GithubRepo } from '../../core/github/remote.js';
import type { Task } from '../../core/task/task.js';
import type { Clock } from '../clock.js';
import type { Log } from '../log.js';
import type { CheckoutReader } from './checkout.js';
import type { GithubClient, GithubResult } from './client.js';
import type { FinishAnswer, SessionLookup, TaskLookup } from './ports.js';
import { Rounds } from './rounds.js';
import { realTimers, type Timers } from '../timers.js';
import { headLabel, taskBranch } from './task-checkout.js';
import { PullRequests, type PullRequest } from './wire.js';

/**
 * Notices a pull request opened for an open task's branch and ends the task (`finishTask(id, 'pr-opened')`: its
 * receipt is written then). Slow on purpose: a round every 2 minutes, one request per repository (the open PRs,
 * newest first — a further page only while it may still hold a PR newer than the oldest waiting task), matched
 * against where the open tasks' branches are pushed: `owner:branch`, the fork's owner for work pushed to a fork
 * (the PR lives on the team's repository, its head on the fork). A PR opened before the task started is an older
 * piece of work on the same branch, not this task's end.
 */

export const PR_WATCH_EVERY_MS = 120_000;
const STALE_TASK_MS = 14 * 86_400_000;
/** 1,000 open PRs on one repository: the ones further back are older than any task worth watching. */
const MAX_PULL_PAGES = 10;

export interface PrWatcherDeps {
  client: GithubClient;
  tasks: TaskLookup;
  sessions: SessionLookup;
  checkouts: CheckoutReader;
  finish: (taskId: string) => Promise<FinishAnswer>;
  clock: Clock;
  log: Log;
  timers?: Timers;
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
    this.rounds = new Rounds('pr watcher', () => this.round(), () => d.everyMs ?? PR_WATCH_EVERY_MS, d.timers ?? realTimers, d.log);
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
    const byRepo = new Map<string, { repo: GithubRepo; tasks: Array<{ task: Task; head: string }> }>();
    const now = this.d.clock.now();
    for (const task of this.d.tasks.list({ state: 'open', limit: 500 })) {
      // A task untouched for two weeks is not waiting for its PR: not worth a git call every round.
      if (this.handed.has(task.id) || now - task.updatedAt > STALE_TASK_MS) continue;
      const where = await taskBranch(task.id, this.d);
      if (!where) continue;
      const slug = repoSlug(where.repo);
      const entry = byRepo.get(slug) ?? { repo: where.repo, tasks: [] };
      entry.tasks.push({ task, head: headLabel(where) });
      byRepo.set(slug, entry);
    }
    for (const [slug, { tasks }] of byRepo) {
      out.repos.push(slug);
      const listed = await this.openPulls(slug, Math.min(...tasks.map((t) => t.task.createdAt)));
      if ('error' in listed) {
        out.errors.push(listed.error);
        if (listed.error !== this.lastWarned) this.d.log.warn(`pr watcher: ${listed.error}`);
        this.lastWarned = listed.error;
        if (listed.pulls.length === 0) continue;
      } else {
        this.lastWarned = '';
      }
      for (const { task, head } of tasks) {
        const pr = listed.pulls.find((p) => sameHead(headOf(p), head) && Date.parse(p.created_at) >= task.createdAt - 1000); // GitHub keeps whole seconds
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

  /**
   * A repository's open PRs, newest first, page after page while the last one read is not older than `since` (a
   * PR older than every waiting task ends none of them). A later page that fails keeps the PRs already read.
   */
  private async openPulls(slug: string, since: number): Promise<{ pulls: PullRequest[] } | { pulls: PullRequest[]; error: string }> {
    const pulls: PullRequest[] = [];
    let page: string | null = null;
    for (let n = 0; n < MAX_PULL_PAGES; n++) {
      const r: GithubResult<PullRequest[]> = await this.d.client.request('GET', page ?? `/repos/${slug}/pulls`, {
        query: page === null ? { state: 'open', sort: 'created', direction: 'desc', per_page: 100 } : undefined,
        schema: PullRequests,
        what: n === 0 ? `listing the open pull requests of ${slug}` : `listing the open pull requests of ${slug} (page ${n + 1})`,
      });
      if (!r.ok) return { pulls, error: r.error };
      pulls.push(...r.data);
      const last = r.data[r.data.length - 1];
      if (!r.next || !last || Date.parse(last.created_at) < since - 1000) break;
      page = r.next;
    }
    return { pulls };
  }
}

/** A PR's head as `owner:branch`: its label, or built from its head repository (null when the fork is gone). */
function headOf(p: PullRequest): string | null {
  if (p.head.label) return p.head.label;
  const owner = p.head.repo?.full_name.split('/')[0];
  return owner ? `${owner}:${p.head.ref}` : null;
}

/** `owner:branch` twice: logins compare without case (GitHub's), branch names exactly (git's). */
function sameHead(a: string | null, b: string): boolean {
  if (a === null) return false;
  const [ao, ...ar] = a.split(':');
  const [bo, ...br] = b.split(':');
  return ao!.toLowerCase() === bo!.toLowerCase() && ar.join(':') === br.join(':');
}
