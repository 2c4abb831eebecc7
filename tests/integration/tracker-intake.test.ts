import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Log } from '../../musher/log.js';
import { GithubClient } from '../../musher/github/client.js';
import { openStore, type Db } from '../../musher/store/db.js';
import { SessionStore } from '../../musher/store/sessions.js';
import { TaskStore } from '../../musher/store/tasks.js';
import { TrackerItemStore } from '../../musher/store/tracker-items.js';
import { TaskService } from '../../musher/tasks/service.js';
import type { TrackerAdapter } from '../../musher/tracker/adapter.js';
import { GithubTrackerAdapter } from '../../musher/tracker/github.js';
import { TrackerIntake } from '../../musher/tracker/intake.js';
import { startFakeGithub, type FakeGithub } from '../support/fake-github.js';

const TOKEN = 'ghp_tracker_test_token';
const T0 = Date.UTC(2026, 10, 30, 9, 0);

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function rig(wrap: (a: TrackerAdapter) => TrackerAdapter = (a) => a, limits?: { search?: number }) {
  const clock = { t: T0, now: () => clock.t };
  const gh = await startFakeGithub({ token: TOKEN, now: () => clock.t, limits });
  cleanups.push(() => gh.close());
  const dir = mkdtempSync(join(tmpdir(), 'sl-trk-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const db = openStore(join(dir, 'sleds.db'));
  cleanups.push(() => void db.close());
  const logs: string[] = [];
  const log: Log = { info: (m) => logs.push(m), warn: (m) => logs.push(m), error: (m) => logs.push(m) };
  const tasks = new TaskService({ store: new TaskStore(db), sessions: new SessionStore(db), clock, log, worthLevels: () => ['high', 'normal', 'low'] });
  const client = new GithubClient({ token: async () => ({ ok: true, token: TOKEN, source: 'secret-store' }), clock, baseUrl: gh.apiUrl, sleep: async () => undefined });
  const adapter = wrap(new GithubTrackerAdapter(client, () => ({ repos: [{ owner: 'acme', name: 'shop' }], label: 'sleds', everyMs: 120_000 }), clock));
  const intake = new TrackerIntake({
    adapters: [adapter],
    tasks: { create: (i) => tasks.create(i), get: (id) => tasks.store.get(id) },
    items: new TrackerItemStore(db),
    estimateText: async () => 'no band yet: 0 similar receipts (5 needed)',
    pickerText: async (t) => `Dispatch ${t.id} here on claude-opus-5-5 (62% of the bar left).`,
    worthLevels: () => ['high', 'normal', 'low'],
    clock,
    log,
  });
  return { gh, clock, tasks, intake, logs, db };
}

/** The GitHub adapter, but musher "dies" once right after its first comment is posted, before it is recorded. */
function crashAfterFirstComment(a: TrackerAdapter): TrackerAdapter {
  let crashOnce = true;
  return {
    name: a.name,
    interval: () => a.interval(),
    search: () => a.search(),
    findComment: (k, ours) => a.findComment(k, ours),
    updateComment: (k, ref, b) => a.updateComment(k, ref, b),
    comment: async (k, b) => {
      const r = await a.comment(k, b);
      if (crashOnce) {
        crashOnce = false;
        throw new Error('musher died here');
      }
      return r;
    },
  };
}

describe('tracker intake (in musher, against the fake GitHub)', () => {
  it("the task's receipt updates the same comment; the same receipt twice sends nothing", async () => {
    const { gh, intake, tasks } = await rig();
    const issue = gh.openIssue('acme/shop', { title: 'Checkout double-charges', body: 'Steps: click twice.', labels: ['sleds'], createdAt: T0 });
    await intake.pollNow();
    const [comment] = gh.comments('acme/shop', issue.number);
    const before = comment!.body;
    const task = tasks.store.bySource('tracker', `https://github.com/acme/shop/issues/${issue.number}`)!;
    expect(task).toMatchObject({ title: 'Checkout double-charges', source: 'tracker', state: 'open' });
    expect(comment!.body).toContain('- **Picker:** Dispatch');
    expect(comment!.body).toContain('- **Band:** no band yet: 0 similar receipts (5 needed)');

    const line = '31 min · $7.40 · no band · seat dana · claude-opus-5-5 · signed';
    expect(await intake.onReceipt(task.id, line)).toEqual({ updated: true });
    const after = gh.comments('acme/shop', issue.number);
    expect(after).toHaveLength(1);
    expect(after[0]!.id).toBe(comment!.id);
    expect(after[0]!.body).toBe(`${before}\n- **Receipt:** ${line}`);
    const patch = gh.requests.find((q) => q.method === 'PATCH')!;
    expect(patch.path).toBe(`/repos/acme/shop/issues/comments/${comment!.id}`);

    expect(await intake.onReceipt(task.id, line)).toEqual({ updated: false });
    expect(gh.requests.filter((q) => q.method === 'PATCH')).toHaveLength(1);
    // A task that did not come from a tracker: nothing to update.
    const other = tasks.create({ title: 'local work', source: 'verb' });
    expect(await intake.onReceipt(other.id, line)).toEqual({ updated: false });
  });

  it('a crash between posting the comment and recording it does not make a second comment: the mark is found', async () => {
    const { gh, intake } = await rig(crashAfterFirstComment);
    const issue = gh.openIssue('acme/shop', { title: 'Slow search', labels: ['sleds'], createdAt: T0 });
    const first = await intake.pollNow();
    expect(first.adapters[0]!.errors).toEqual([`acme/shop#${issue.number}: musher died here`]);
    expect(gh.comments('acme/shop', issue.number)).toHaveLength(1);
    const second = await intake.pollNow();
    expect(second.adapters[0]!.errors).toEqual([]);
    expect(gh.comments('acme/shop', issue.number)).toHaveLength(1);
    expect(gh.posted()).toBe(1);
  });

  it("a rate-limited search (Retry-After) is a round's error: nothing is asked again before it passes", async () => {
    const { gh, intake, clock, tasks } = await rig();
    gh.openIssue('acme/shop', { title: 'Flaky login', labels: ['sleds'], createdAt: T0 });
    gh.script({ kind: 'retry-after', status: 429, retryAfter: '300' });
    const limited = await intake.pollNow();
    expect(limited.adapters[0]!.errors[0]).toMatch(/^GitHub rate-limited sleds \(429\) while searching for issues labelled sleds — next try after 2026-11-30T09:05:00.000Z/);
    expect(tasks.store.list({}).length).toBe(0);
    clock.t += 120_000;
    const early = await intake.pollNow();
    expect(early.adapters[0]!.errors[0]).toMatch(/rate limit holds until 2026-11-30T09:05:00.000Z/);
    expect(gh.requests).toHaveLength(1);
    clock.t += 180_000;
    const ok = await intake.pollNow();
    expect(ok.adapters[0]!.created).toHaveLength(1);
    expect(gh.posted()).toBe(1);
  });

  /** `count` labelled issues on acme/shop, one a minute, the oldest first. */
  function issues(gh: FakeGithub, count: number, from = T0 - 30 * 86_400_000): number[] {
    return Array.from({ length: count }, (_, k) => gh.openIssue('acme/shop', { title: `Issue ${k + 1}`, labels: ['sleds'], createdAt: from + k * 60_000 }).number);
  }
  const searches = (gh: FakeGithub) => gh.requests.filter((q) => q.path === '/search/issues');
  const changes = (db: Db) => (db.prepare('SELECT total_changes() AS n').get() as { n: number }).n;

  it('150 labelled issues: the Link pages are followed and every one becomes a task; later rounds write nothing and, once quiet, cost one search', async () => {
    const { gh, intake, tasks, clock, db } = await rig();
    const numbers = issues(gh, 150);
    const first = await intake.pollNow();
    expect(first.adapters[0]).toMatchObject({ items: 150, errors: [] });
    expect(first.adapters[0]!.created).toHaveLength(150);
    expect(tasks.store.list({ limit: 500 }).filter((t) => t.source === 'tracker')).toHaveLength(150);
    // The oldest issue too, not only the newest 100.
    expect(tasks.store.bySource('tracker', `https://github.com/acme/shop/issues/${numbers[0]}`)).not.toBeNull();
    expect(gh.comments('acme/shop', numbers[0]!)).toHaveLength(1);
    expect(gh.posted()).toBe(150);
    const pages = searches(gh);
    expect(pages.map((q) => [q.query.get('page'), q.query.get('per_page'), q.query.get('sort'), q.query.get('order')])).toEqual([
      [null, '100', 'updated', 'desc'],
      ['2', '100', 'updated', 'desc'],
    ]);
    expect(pages[1]!.query.get('q')).toBe('is:issue is:open label:sleds repo:acme/shop');

    // The next round: sleds' own 150 comments moved those issues' updated_at, so both pages are read again — known,
    // commented on: no request about them and no write.
    clock.t += 120_000;
    let requestsBefore = gh.requests.length;
    const writesBefore = changes(db);
    const second = await intake.pollNow();
    expect(second.adapters[0]).toMatchObject({ items: 150, created: [], commented: [], errors: [] });
    expect(gh.requests.slice(requestsBefore).map((q) => `${q.method} ${q.path}`)).toEqual(['GET /search/issues', 'GET /search/issues']);
    expect(changes(db)).toBe(writesBefore);
    // Once nothing changed since the last walk began (less the margin for the index's lag): one page, and it stops.
    clock.t += 15 * 60_000;
    await intake.pollNow();
    clock.t += 120_000;
    requestsBefore = gh.requests.length;
    const quiet = await intake.pollNow();
    expect(quiet.adapters[0]).toMatchObject({ items: 100, created: [], commented: [], errors: [] });
    expect(gh.requests.slice(requestsBefore).map((q) => `${q.method} ${q.path}`)).toEqual(['GET /search/issues']);
    expect(changes(db)).toBe(writesBefore);

    // An old issue labelled today moves to the top of the search: the next round takes it, still with one search.
    const old = gh.openIssue('acme/shop', { title: 'Old flaky test', labels: ['bug'], createdAt: T0 - 90 * 86_400_000 });
    clock.t += 120_000;
    gh.touchIssue('acme/shop', old.number, { labels: ['bug', 'sleds'] });
    const searchesBefore = searches(gh).length;
    const third = await intake.pollNow();
    expect(third.adapters[0]!.created.map((c) => c.ref)).toEqual([`https://github.com/acme/shop/issues/${old.number}`]);
    expect(searches(gh).length - searchesBefore).toBe(1);
    expect(gh.posted()).toBe(151);
  });

  it('the search limit hit after the first page stops the round (nothing more is sent) and the next round goes on from page 2', async () => {
    const { gh, intake, tasks, clock } = await rig(undefined, { search: 1 });
    issues(gh, 150);
    const first = await intake.pollNow();
    // Page 1 used the last search of the minute (x-ratelimit-remaining: 0): page 2 waits for the reset.
    expect(first.adapters[0]!.created).toHaveLength(100);
    expect(first.adapters[0]!.errors).toEqual([expect.stringMatching(/^GitHub's search rate limit holds until 2026-11-30T09:01:00.000Z — not searching for issues labelled sleds \(page 2\) before then$/)]);
    expect(searches(gh)).toHaveLength(1);

    clock.t += 30_000;
    const early = await intake.pollNow();
    expect(early.adapters[0]!.errors[0]).toMatch(/rate limit holds until 2026-11-30T09:01:00.000Z/);
    expect(searches(gh)).toHaveLength(1);

    clock.t += 30_000;
    const resumed = await intake.pollNow();
    expect(resumed.adapters[0]).toMatchObject({ items: 50, errors: [] });
    expect(resumed.adapters[0]!.created).toHaveLength(50);
    expect(searches(gh).map((q) => q.query.get('page'))).toEqual([null, '2']);
    expect(tasks.store.list({ limit: 500 }).filter((t) => t.source === 'tracker')).toHaveLength(150);
    expect(gh.posted()).toBe(150);
  });

  it("sleds' comment after 120 others (page 2 of the comments) is found after a crash: no second comment", async () => {
    const { gh, intake } = await rig(crashAfterFirstComment);
    const issue = gh.openIssue('acme/shop', { title: 'Long discussion', labels: ['bug'], createdAt: T0 - 86_400_000 });
    for (let k = 0; k < 120; k++) gh.addComment('acme/shop', issue.number, `+1 from someone (${k})`);
    gh.touchIssue('acme/shop', issue.number, { labels: ['bug', 'sleds'] });
    await intake.pollNow();
    expect(gh.comments('acme/shop', issue.number)).toHaveLength(121);
    const second = await intake.pollNow();
    expect(second.adapters[0]!.errors).toEqual([]);
    expect(gh.posted()).toBe(1);
    expect(gh.comments('acme/shop', issue.number)).toHaveLength(121);
    const lists = gh.requests.filter((q) => q.method === 'GET' && q.path.endsWith('/comments'));
    expect(lists.slice(-2).map((q) => q.query.get('page'))).toEqual([null, '2']);
  });
});
