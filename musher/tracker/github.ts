import { z } from 'zod';
import { repoSlug, type GithubRepo } from '../../core/github/remote.js';
import { githubIssueQuery, repoOfIssueUrl } from '../../core/tracker/github-query.js';
import type { GithubClient } from '../github/client.js';
import { IssueComment, IssueComments, IssueSearch } from '../github/wire.js';
import type { AdapterResult, TrackerAdapter, TrackerItem } from './adapter.js';

/** What the policy's `tracker.github` says, with the repositories parsed. */
export interface GithubTrackerConfig {
  repos: GithubRepo[];
  label: string;
  everyMs: number;
}

/**
 * GitHub issues as a tracker: one `GET /search/issues` per round (open issues with the label in the configured
 * repositories; the search API allows 30 a minute), comments through the issues API (`PATCH` of a comment takes
 * no issue number).
 */
export class GithubTrackerAdapter implements TrackerAdapter {
  readonly name = 'github';
  constructor(
    private readonly client: GithubClient,
    private readonly config: () => GithubTrackerConfig | null,
  ) {}

  interval(): number | null {
    const c = this.config();
    return c && c.repos.length > 0 ? c.everyMs : null;
  }

  async search(): Promise<AdapterResult<TrackerItem[]>> {
    const c = this.config();
    if (!c || c.repos.length === 0) return { ok: true, value: [] };
    const q = githubIssueQuery(c.repos, c.label);
    const r = await this.client.request('GET', '/search/issues', {
      // Newest first: beyond 100 open items, the ones not seen yet are the new ones.
      query: { q, advanced_search: 'true', per_page: 100, sort: 'created', order: 'desc' },
      schema: IssueSearch,
      what: `searching for issues labelled ${c.label}`,
    });
    if (!r.ok) return { ok: false, error: r.error };
    const items: TrackerItem[] = [];
    for (const issue of r.data.items) {
      if (issue.pull_request !== undefined) continue; // a PR is an issue too; only issues are asked for
      const repo = repoOfIssueUrl(issue.repository_url);
      if (!repo) continue;
      items.push({ ref: issue.html_url, key: `${repoSlug(repo)}#${issue.number}`, title: issue.title, body: issue.body ?? '', repo: repoSlug(repo) });
    }
    return { ok: true, value: items };
  }

  async findComment(itemKey: string, isOurs: (body: string) => boolean): Promise<AdapterResult<string | null>> {
    const at = parseKey(itemKey);
    if (!at) return { ok: false, error: `'${itemKey}' is not a GitHub issue key` };
    const r = await this.client.request('GET', `/repos/${at.slug}/issues/${at.number}/comments`, {
      query: { per_page: 100 },
      schema: IssueComments,
      what: `reading the comments of ${itemKey}`,
    });
    if (!r.ok) return { ok: false, error: r.error };
    const ours = r.data.find((c) => isOurs(c.body ?? ''));
    return { ok: true, value: ours ? String(ours.id) : null };
  }

  async comment(itemKey: string, body: string): Promise<AdapterResult<string>> {
    const at = parseKey(itemKey);
    if (!at) return { ok: false, error: `'${itemKey}' is not a GitHub issue key` };
    const r = await this.client.request('POST', `/repos/${at.slug}/issues/${at.number}/comments`, { body: { body }, schema: IssueComment, what: `commenting on ${itemKey}` });
    return r.ok ? { ok: true, value: String(r.data.id) } : { ok: false, error: r.error };
  }

  async updateComment(itemKey: string, commentRef: string, body: string): Promise<AdapterResult<void>> {
    const at = parseKey(itemKey);
    if (!at || !/^\d+$/.test(commentRef)) return { ok: false, error: `'${itemKey}' comment ${commentRef} is not a GitHub issue comment` };
    const r = await this.client.request('PATCH', `/repos/${at.slug}/issues/comments/${commentRef}`, { body: { body }, schema: z.unknown(), what: `updating sleds' comment on ${itemKey}` });
    return r.ok ? { ok: true, value: undefined } : { ok: false, error: r.error };
  }
}

function parseKey(key: string): { slug: string; number: number } | null {
  const m = /^([^/#\s]+\/[^/#\s]+)#(\d+)$/.exec(key);
  return m ? { slug: m[1]!, number: Number(m[2]) } : null;
}
