import { z } from 'zod';
import { repoSlug, type GithubRepo } from '../../core/github/remote.js';
import { githubIssueQuery, repoOfIssueUrl } from '../../core/tracker/github-query.js';
import { beginWalk, walkCut, walkDone, wantsNextPage, type SearchWalkState } from '../../core/tracker/search-walk.js';
import type { Clock } from '../clock.js';
import type { GithubClient, GithubResult } from '../github/client.js';
import { IssueComment, IssueComments, IssueSearch } from '../github/wire.js';
import type { AdapterResult, SearchAnswer, TrackerAdapter, TrackerItem } from './adapter.js';

/** What the policy's `tracker.github` says, with the repositories parsed. */
export interface GithubTrackerConfig {
  repos: GithubRepo[];
  label: string;
  everyMs: number;
}

/** GitHub's largest page; the search gives at most 1,000 results, so 10 pages. */
const PER_PAGE = 100;
const MAX_SEARCH_PAGES = 10;
/** Comments are listed oldest first; sleds' is usually on the first page, and 10,000 comments is beyond any issue. */
const MAX_COMMENT_PAGES = 100;

/**
 * GitHub issues as a tracker: one `GET /search/issues` per round (open issues with the label in the configured
 * repositories; the search API allows 30 a minute), most recently updated first, its `Link: rel="next"` pages
 * followed only as far as the last walk's start (core/tracker/search-walk.ts); comments through the issues API
 * (`PATCH` of a comment takes no issue number).
 */
export class GithubTrackerAdapter implements TrackerAdapter {
  readonly name = 'github';
  private walk: SearchWalkState | null = null;
  constructor(
    private readonly client: GithubClient,
    private readonly config: () => GithubTrackerConfig | null,
    private readonly clock: Clock,
  ) {}

  interval(): number | null {
    const c = this.config();
    return c && c.repos.length > 0 ? c.everyMs : null;
  }

  async search(): Promise<AdapterResult<SearchAnswer>> {
    const c = this.config();
    if (!c || c.repos.length === 0) return { ok: true, value: { items: [], cut: null } };
    const q = githubIssueQuery(c.repos, c.label);
    const walk = beginWalk(this.walk, q, this.clock.now());
    const what = `searching for issues labelled ${c.label}`;
    const items: TrackerItem[] = [];
    let page: string | null = walk.from;
    for (let n = 0; ; n++) {
      const r = await this.client.request('GET', page ?? '/search/issues', {
        // The first page is built here; a later one is GitHub's own `next` URL, followed verbatim.
        query: page === null ? { q, advanced_search: 'true', per_page: PER_PAGE, sort: 'updated', order: 'desc' } : undefined,
        schema: IssueSearch,
        what: n === 0 ? what : `${what} (page ${n + 1})`,
      });
      if (!r.ok) {
        // Cut short: the pages read count; the rest waits for the next round (the client holds back until the limit
        // passes, so nothing is sent before then).
        if (page !== null) this.walk = walkCut(this.walk, q, walk, page);
        return n === 0 ? { ok: false, error: r.error } : { ok: true, value: { items, cut: r.error } };
      }
      let oldest: number | null = null;
      for (const issue of r.data.items) {
        const updated = issue.updated_at ? Date.parse(issue.updated_at) : NaN;
        if (!Number.isNaN(updated)) oldest = oldest === null ? updated : Math.min(oldest, updated);
        if (issue.pull_request !== undefined) continue; // a PR is an issue too; only issues are asked for
        const repo = repoOfIssueUrl(issue.repository_url);
        if (!repo) continue;
        items.push({ ref: issue.html_url, key: `${repoSlug(repo)}#${issue.number}`, title: issue.title, body: issue.body ?? '', repo: repoSlug(repo) });
      }
      if (!r.next || n + 1 >= MAX_SEARCH_PAGES || !wantsNextPage(walk, oldest)) {
        this.walk = walkDone(this.walk, q, walk);
        return { ok: true, value: { items, cut: null } };
      }
      page = r.next;
    }
  }

  async findComment(itemKey: string, isOurs: (body: string) => boolean): Promise<AdapterResult<string | null>> {
    const at = parseKey(itemKey);
    if (!at) return { ok: false, error: `'${itemKey}' is not a GitHub issue key` };
    // Oldest first, 100 a page: an issue with a long discussion before it was labelled has sleds' mark further on.
    let page: string | null = null;
    for (let n = 0; n < MAX_COMMENT_PAGES; n++) {
      const r: GithubResult<z.infer<typeof IssueComments>> = await this.client.request('GET', page ?? `/repos/${at.slug}/issues/${at.number}/comments`, {
        query: page === null ? { per_page: PER_PAGE } : undefined,
        schema: IssueComments,
        what: n === 0 ? `reading the comments of ${itemKey}` : `reading the comments of ${itemKey} (page ${n + 1})`,
      });
      if (!r.ok) return { ok: false, error: r.error };
      const ours = r.data.find((c) => isOurs(c.body ?? ''));
      if (ours) return { ok: true, value: String(ours.id) };
      if (!r.next) return { ok: true, value: null };
      page = r.next;
    }
    // Not "none": a second comment is worse than waiting for someone to look.
    return { ok: false, error: `${itemKey} has more than ${MAX_COMMENT_PAGES * PER_PAGE} comments — sleds did not look for its own among them all; comment by hand` };
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
