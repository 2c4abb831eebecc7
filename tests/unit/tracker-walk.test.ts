import { describe, expect, it } from 'vitest';
import { beginWalk, FULL_WALK_EVERY_MS, WALK_MARGIN_MS, walkCut, walkDone, wantsNextPage, type SearchWalkState } from '../../core/tracker/search-walk.js';

const T0 = Date.UTC(2026, 10, 30, 9, 0);
const Q = 'is:issue is:open label:sleds repo:acme/shop';
const PAGE2 = 'https://api.github.com/search/issues?q=x&page=2';

describe('the tracker search walk', () => {
  it('the first walk reads every page; the next one reads down to where the last began, less the margin', () => {
    const first = beginWalk(null, Q, T0);
    expect(first).toEqual({ from: null, startedAt: T0, full: true, stopBefore: null });
    expect(wantsNextPage(first, T0 - 30 * 86_400_000)).toBe(true);
    const state = walkDone(null, Q, first);
    expect(state).toEqual({ query: Q, readFrom: T0, fullAt: T0, resume: null });

    const next = beginWalk(state, Q, T0 + 120_000);
    expect(next).toEqual({ from: null, startedAt: T0 + 120_000, full: false, stopBefore: T0 - WALK_MARGIN_MS });
    expect(wantsNextPage(next, T0 - WALK_MARGIN_MS)).toBe(true);
    expect(wantsNextPage(next, T0 - WALK_MARGIN_MS - 1)).toBe(false);
    expect(wantsNextPage(next, null)).toBe(false); // an empty page: nothing further
    expect(walkDone(state, Q, next)).toEqual({ query: Q, readFrom: T0 + 120_000, fullAt: T0, resume: null });
  });

  it('a full walk again every hour, and whenever the query changes', () => {
    const state: SearchWalkState = { query: Q, readFrom: T0 + FULL_WALK_EVERY_MS - 60_000, fullAt: T0, resume: null };
    expect(beginWalk(state, Q, T0 + FULL_WALK_EVERY_MS - 1).full).toBe(false);
    expect(beginWalk(state, Q, T0 + FULL_WALK_EVERY_MS)).toMatchObject({ full: true, stopBefore: null });
    expect(beginWalk(state, `${Q} repo:acme/api`, T0 + 60_000)).toMatchObject({ full: true, stopBefore: null, from: null });
  });

  it('a walk cut short resumes at the page it could not read, keeping its start; a new query forgets it', () => {
    const first = beginWalk(null, Q, T0);
    const cut = walkCut(null, Q, first, PAGE2);
    expect(cut).toEqual({ query: Q, readFrom: null, fullAt: null, resume: { url: PAGE2, startedAt: T0, full: true } });
    const resumed = beginWalk(cut, Q, T0 + 60_000);
    expect(resumed).toEqual({ from: PAGE2, startedAt: T0, full: true, stopBefore: null });
    // Cut again on the same page: still there next round.
    expect(walkCut(cut, Q, resumed, PAGE2).resume).toEqual({ url: PAGE2, startedAt: T0, full: true });
    // Done: read through the walk's start, so what changed while it waited is read next round.
    expect(walkDone(cut, Q, resumed)).toEqual({ query: Q, readFrom: T0, fullAt: T0, resume: null });
    expect(beginWalk(cut, 'is:issue is:open label:other repo:acme/shop', T0 + 60_000).from).toBeNull();

    // An incremental walk that is cut keeps its window.
    const known: SearchWalkState = { query: Q, readFrom: T0, fullAt: T0, resume: null };
    const inc = beginWalk(known, Q, T0 + 120_000);
    const incCut = walkCut(known, Q, inc, PAGE2);
    expect(beginWalk(incCut, Q, T0 + 240_000)).toEqual({ from: PAGE2, startedAt: T0 + 120_000, full: false, stopBefore: T0 - WALK_MARGIN_MS });
  });
});
