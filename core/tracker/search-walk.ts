/**
 * How a tracker search walks GitHub's pages without paying for the whole list every round. The search is sorted by
 * `updated` (newest first): labelling, reopening or editing an issue moves it to the top, so after one complete
 * walk a round only has to read down to where the last walk began (less a margin for the search index's lag and
 * the two clocks' skew) — usually one page. A walk cut short (a rate limit, an error on a later page) resumes where
 * it stopped next round, and keeps its start, so nothing updated meanwhile is skipped. A full walk still runs every
 * hour, and whenever the query changes (a repository added to the policy brings its older issues). Pure: time is
 * passed in.
 */

export const WALK_MARGIN_MS = 10 * 60_000;
export const FULL_WALK_EVERY_MS = 60 * 60_000;

export interface SearchWalkState {
  query: string;
  /** Every match updated before this (epoch ms) has been read; null until a walk completes. */
  readFrom: number | null;
  /** When the last complete full walk began. */
  fullAt: number | null;
  /** A walk cut short: the page to ask next, and when and how that walk began. */
  resume: { url: string; startedAt: number; full: boolean } | null;
}

export interface Walk {
  /** The page to start at: null for the first page of the query. */
  from: string | null;
  startedAt: number;
  /** A full walk reads every page; otherwise it stops at `stopBefore`. */
  full: boolean;
  stopBefore: number | null;
}

export function beginWalk(state: SearchWalkState | null, query: string, now: number): Walk {
  const s = state?.query === query ? state : null;
  if (s?.resume) return { from: s.resume.url, startedAt: s.resume.startedAt, full: s.resume.full, stopBefore: s.resume.full || s.readFrom === null ? null : s.readFrom - WALK_MARGIN_MS };
  const full = s?.readFrom == null || s.fullAt === null || now - s.fullAt >= FULL_WALK_EVERY_MS;
  return { from: null, startedAt: now, full, stopBefore: full ? null : s!.readFrom! - WALK_MARGIN_MS };
}

/** After a page: whether the next one is worth asking for (the page's oldest update is still inside the window). */
export function wantsNextPage(walk: Walk, oldestUpdatedOnPage: number | null): boolean {
  if (walk.stopBefore === null) return true;
  return oldestUpdatedOnPage !== null && oldestUpdatedOnPage >= walk.stopBefore;
}

/** The state after a walk that read to its end (or to its window's edge). */
export function walkDone(state: SearchWalkState | null, query: string, walk: Walk): SearchWalkState {
  const s = state?.query === query ? state : null;
  return { query, readFrom: walk.startedAt, fullAt: walk.full ? walk.startedAt : (s?.fullAt ?? null), resume: null };
}

/** The state after a walk cut short before the page at `next`. */
export function walkCut(state: SearchWalkState | null, query: string, walk: Walk, next: string): SearchWalkState {
  const s = state?.query === query ? state : null;
  return { query, readFrom: s?.readFrom ?? null, fullAt: s?.fullAt ?? null, resume: { url: next, startedAt: walk.startedAt, full: walk.full } };
}
