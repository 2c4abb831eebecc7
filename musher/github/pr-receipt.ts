import { repoSlug } from '../../core/github/remote.js';
import { withReceiptBlock } from '../../core/receipt/pr-block.js';
import type { Log } from '../log.js';
import type { CheckoutReader } from './checkout.js';
import type { GithubClient } from './client.js';
import type { SessionLookup, TaskLookup } from './ports.js';
import { headLabel, taskBranch } from './task-checkout.js';
import { PullRequest, PullRequests } from './wire.js';

/**
 * Writes a task's receipt line into its pull request's body, between the sleds markers: the PR is the one on the
 * repository the checkout's pull requests go to whose head is where the task's branch is pushed (`head=owner:branch`,
 * the fork's owner when the work is pushed to a fork — a bare branch name is silently ignored by GitHub).
 * An open PR wins over closed ones; among several, the newest. A body that already says it is left alone.
 */

export type PrReceiptResult =
  | { ok: true; pr: { number: number; url: string }; changed: boolean }
  | { ok: false; error: string };

export interface PrReceiptDeps {
  client: GithubClient;
  tasks: TaskLookup;
  sessions: SessionLookup;
  checkouts: CheckoutReader;
  log: Log;
}

export class PrReceiptWriter {
  constructor(private readonly d: PrReceiptDeps) {}

  async write(taskId: string, line: string): Promise<PrReceiptResult> {
    const where = await taskBranch(taskId, this.d);
    if (!where) return { ok: false, error: `task ${taskId} has no session in a GitHub checkout on a branch — no pull request to put its receipt in` };
    const slug = repoSlug(where.repo);
    const head = headLabel(where);
    const listed = await this.d.client.request('GET', `/repos/${slug}/pulls`, {
      query: { head, state: 'all', per_page: 10 },
      schema: PullRequests,
      what: `looking for the pull request of ${slug} from ${head}`,
    });
    if (!listed.ok) return { ok: false, error: listed.error };
    // GitHub lists the newest first; an open one is the one being reviewed.
    const pr = listed.data.find((p) => p.state === 'open') ?? listed.data[0];
    if (!pr) return { ok: false, error: `no pull request on ${slug} from ${head} yet — the receipt goes in when one opens` };
    const body = withReceiptBlock(pr.body ?? '', line);
    if (body === (pr.body ?? '')) {
      return { ok: true, pr: { number: pr.number, url: pr.html_url }, changed: false };
    }
    const patched = await this.d.client.request('PATCH', `/repos/${slug}/pulls/${pr.number}`, {
      body: { body },
      schema: PullRequest,
      what: `writing the receipt into ${slug}#${pr.number}`,
    });
    if (!patched.ok) return { ok: false, error: patched.error };
    this.d.log.info(`github: receipt of task ${taskId} written into ${slug}#${pr.number}`);
    return { ok: true, pr: { number: pr.number, url: pr.html_url }, changed: true };
  }
}
