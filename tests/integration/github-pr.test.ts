import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { RECEIPT_START, receiptLineIn } from '../../core/receipt/pr-block.js';
import type { Log } from '../../musher/log.js';
import { CheckoutReader } from '../../musher/github/checkout.js';
import { GithubClient } from '../../musher/github/client.js';
import { PrReceiptWriter } from '../../musher/github/pr-receipt.js';
import { PrWatcher, PR_WATCH_EVERY_MS } from '../../musher/github/pr-watcher.js';
import type { FinishAnswer } from '../../musher/github/ports.js';
import type { Timers } from '../../musher/timers.js';
import { openStore, type Db } from '../../musher/store/db.js';
import { SessionStore } from '../../musher/store/sessions.js';
import { TaskStore } from '../../musher/store/tasks.js';
import { startFakeGithub, type FakeGithub } from '../support/fake-github.js';
import { waitFor } from '../support/sleds-env.js';

const TOKEN = 'ghp_pr_test_token';
const T0 = Date.UTC(2026, 10, 30, 9, 0);
const LINE = '31 min · $7.40 · in band · seat dana · claude-opus-5-5 · signed';
const LINE2 = '33 min · $7.90 · in band · seat dana · claude-opus-5-5 · signed';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function git(cwd: string, ...args: string[]): void {
  execFileSync('git', args, { cwd, stdio: 'ignore', env: { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null' } });
}

/** A real checkout on `branch` whose origin is `remote`. */
function checkout(root: string, name: string, branch: string, remote: string | null): string {
  const dir = join(root, name);
  mkdirSync(join(dir, 'src'), { recursive: true });
  git(dir, 'init', '-q', '-b', branch);
  if (remote) git(dir, 'remote', 'add', 'origin', remote);
  return dir;
}

interface Rig {
  gh: FakeGithub;
  db: Db;
  tasks: TaskStore;
  sessions: SessionStore;
  client: GithubClient;
  checkouts: CheckoutReader;
  clock: { now(): number; t: number };
  root: string;
  logs: string[];
  log: Log;
  /** A task started by a session working in `cwd`. */
  task(id: string, cwd: string, at?: number): string;
  /** A PR watcher whose finish records the task's id in `finished` (and, with `markDone`, marks the task done). */
  watcher(finished: string[], o?: { markDone?: boolean; timers?: Timers }): PrWatcher;
}

async function rig(): Promise<Rig> {
  const clock = { t: T0, now: () => clock.t };
  const gh = await startFakeGithub({ token: TOKEN, now: () => clock.t });
  cleanups.push(() => gh.close());
  const root = mkdtempSync(join(tmpdir(), 'sl-ghpr-'));
  cleanups.push(() => rmSync(root, { recursive: true, force: true }));
  const db = openStore(join(root, 'sleds.db'));
  cleanups.push(() => void db.close());
  const tasks = new TaskStore(db);
  const sessions = new SessionStore(db);
  const logs: string[] = [];
  const log: Log = { info: (m) => logs.push(m), warn: (m) => logs.push(m), error: (m) => logs.push(m) };
  const client = new GithubClient({ token: async () => ({ ok: true, token: TOKEN, source: 'secret-store' }), clock, baseUrl: gh.apiUrl, sleep: async () => undefined });
  const checkouts = new CheckoutReader(clock);
  return {
    gh,
    db,
    tasks,
    sessions,
    client,
    checkouts,
    clock,
    root,
    logs,
    log,
    task(id, cwd, at = clock.t) {
      tasks.create({ id, title: `task ${id}`, source: 'prompt', at });
      sessions.touch({ sessionId: `s-${id}`, harness: 'claude-code', at, cwd });
      tasks.attach(`s-${id}`, id, at);
      return id;
    },
    watcher(finished, o = {}) {
      return new PrWatcher({
        client,
        tasks,
        sessions,
        checkouts,
        finish: async (taskId): Promise<FinishAnswer> => {
          finished.push(taskId);
          if (o.markDone) tasks.setState(taskId, 'done', clock.t);
          return { error: 'receipts are not available in this version yet' };
        },
        clock,
        log,
        ...(o.timers ? { timers: o.timers } : {}),
      });
    },
  };
}

describe('the receipt in the PR body', () => {
  it("finds the task's PR by owner:branch, writes the block, and a rerun neither duplicates it nor sends a PATCH", async () => {
    const r = await rig();
    const repo = checkout(r.root, 'shop', 'feature/login', 'git@github.com:acme/shop.git');
    const id = r.task('task00000001', join(repo, 'src'));
    r.gh.openPull('acme/shop', { branch: 'main-fix', body: 'not this one', createdAt: T0 });
    // The same branch name in a fork's PR is someone else's work.
    r.gh.openPull('acme/shop', { branch: 'feature/login', headOwner: 'mallory', body: 'fork', createdAt: T0 + 5000 });
    const pr = r.gh.openPull('acme/shop', { branch: 'feature/login', body: '## What\nFixes the flaky login test.\n', createdAt: T0 + 1000 });
    const writer = new PrReceiptWriter({ client: r.client, tasks: r.tasks, sessions: r.sessions, checkouts: r.checkouts, log: r.log });

    const first = await writer.write(id, LINE);
    expect(first).toEqual({ ok: true, pr: { number: pr.number, url: `https://github.com/acme/shop/pull/${pr.number}` }, changed: true });
    expect(r.gh.pull('acme/shop', pr.number)!.body).toBe(`## What\nFixes the flaky login test.\n\n${RECEIPT_START}\n${LINE}\n<!-- /sleds:receipt -->`);
    const list = r.gh.requests.find((q) => q.method === 'GET')!;
    expect(list.path).toBe('/repos/acme/shop/pulls');
    expect(list.query.get('head')).toBe('acme:feature/login');
    expect(list.query.get('state')).toBe('all');
    expect(r.gh.pull('acme/shop', 2)!.body).toBe('fork');

    const again = await writer.write(id, LINE);
    expect(again).toMatchObject({ ok: true, changed: false });
    expect(r.gh.requests.filter((q) => q.method === 'PATCH')).toHaveLength(1);

    const updated = await writer.write(id, LINE2);
    expect(updated).toMatchObject({ ok: true, changed: true });
    const body = r.gh.pull('acme/shop', pr.number)!.body!;
    expect(body.split(RECEIPT_START)).toHaveLength(2);
    expect(receiptLineIn(body)).toBe(LINE2);
    expect(body.startsWith('## What\nFixes the flaky login test.\n\n')).toBe(true);
  });

  it('an open PR wins over a closed one; no PR yet, or no GitHub checkout, is one line', async () => {
    const r = await rig();
    const repo = checkout(r.root, 'shop', 'feature/pay', 'https://github.com/acme/shop.git');
    const id = r.task('task00000002', repo);
    r.gh.createRepo('acme/shop');
    const writer = new PrReceiptWriter({ client: r.client, tasks: r.tasks, sessions: r.sessions, checkouts: r.checkouts, log: r.log });
    expect(await writer.write(id, LINE)).toEqual({ ok: false, error: 'no pull request on acme/shop from acme:feature/pay yet — the receipt goes in when one opens' });

    const open = r.gh.openPull('acme/shop', { branch: 'feature/pay', body: 'second try', createdAt: T0 });
    r.gh.openPull('acme/shop', { branch: 'feature/pay', body: 'abandoned', createdAt: T0 + 1000, state: 'closed' });
    expect(await writer.write(id, LINE)).toMatchObject({ ok: true, pr: { number: open.number } });
    expect(r.gh.pull('acme/shop', open.number)!.body).toContain(LINE);

    const gitlab = checkout(r.root, 'elsewhere', 'main', 'git@gitlab.com:acme/shop.git');
    const other = r.task('task00000003', gitlab);
    expect(await writer.write(other, LINE)).toEqual({ ok: false, error: 'task task00000003 has no session in a GitHub checkout on a branch — no pull request to put its receipt in' });
  });
});

describe('work pushed to a fork (origin = the fork, upstream = the team repository)', () => {
  /** A checkout laid out as `gh repo fork --clone` leaves it: origin is dana's fork, upstream the team's repository. */
  function forkCheckout(root: string, name: string, branch: string): string {
    const dir = checkout(root, name, branch, 'git@github.com:dana/shop.git');
    git(dir, 'remote', 'add', 'upstream', 'https://github.com/acme/shop.git');
    return dir;
  }

  it("writes the receipt into the PR on the team repository whose head is dana's fork — not a same-named branch there", async () => {
    const r = await rig();
    const repo = forkCheckout(r.root, 'shop', 'feature/login');
    const id = r.task('taskfork0001', repo);
    // Someone else's PR from the team repository's own feature/login, and dana's from her fork.
    const theirs = r.gh.openPull('acme/shop', { branch: 'feature/login', body: 'not dana', createdAt: T0 + 5000 });
    const pr = r.gh.openPull('acme/shop', { branch: 'feature/login', headOwner: 'dana', body: 'From the fork.', createdAt: T0 + 1000 });
    const writer = new PrReceiptWriter({ client: r.client, tasks: r.tasks, sessions: r.sessions, checkouts: r.checkouts, log: r.log });

    expect(await writer.write(id, LINE)).toEqual({ ok: true, pr: { number: pr.number, url: `https://github.com/acme/shop/pull/${pr.number}` }, changed: true });
    expect(r.gh.pull('acme/shop', pr.number)!.body).toContain(LINE);
    expect(r.gh.pull('acme/shop', theirs.number)!.body).toBe('not dana');
    const list = r.gh.requests.find((q) => q.method === 'GET')!;
    expect(list.path).toBe('/repos/acme/shop/pulls');
    expect(list.query.get('head')).toBe('dana:feature/login');
    expect(r.gh.requests.find((q) => q.method === 'PATCH')!.path).toBe(`/repos/acme/shop/pulls/${pr.number}`);
  });

  it('origin = the team repository and branch.<b>.pushRemote = a fork with another name: the watcher ends the task when the PR from that fork opens', async () => {
    const r = await rig();
    const repo = checkout(r.root, 'shop', 'fix/cart', 'https://github.com/acme/shop.git');
    git(repo, 'remote', 'add', 'mine', 'git@github.com:dana/shop-experiments.git');
    git(repo, 'config', 'branch.fix/cart.pushRemote', 'mine');
    const id = r.task('taskfork0002', repo);
    const fork = forkCheckout(r.root, 'shop-fork', 'feature/login');
    const forkTask = r.task('taskfork0003', fork);
    // The team's own fix/cart and a stranger's fork of feature/login end neither.
    r.gh.openPull('acme/shop', { branch: 'fix/cart', createdAt: T0 + 1000 });
    r.gh.openPull('acme/shop', { branch: 'feature/login', headOwner: 'mallory', createdAt: T0 + 1000 });
    const finished: string[] = [];
    const watcher = r.watcher(finished, { markDone: true });
    const first = await watcher.runNow();
    expect(first).toMatchObject({ repos: ['acme/shop'], finished: [], errors: [] });

    const cart = r.gh.openPull('acme/shop', { branch: 'fix/cart', headRepo: 'dana/shop-experiments', createdAt: T0 + 2000 });
    const login = r.gh.openPull('acme/shop', { branch: 'feature/login', headOwner: 'dana', createdAt: T0 + 3000 });
    const second = await watcher.runNow();
    expect(second.finished.sort((a, b) => a.taskId.localeCompare(b.taskId))).toEqual([
      { taskId: id, pr: `https://github.com/acme/shop/pull/${cart.number}` },
      { taskId: forkTask, pr: `https://github.com/acme/shop/pull/${login.number}` },
    ]);
    // One listing of the team repository a round; the forks are never asked.
    expect(r.gh.requests.map((q) => `${q.method} ${q.path}`)).toEqual(['GET /repos/acme/shop/pulls', 'GET /repos/acme/shop/pulls']);
  });
});

describe('the PR watcher', () => {
  function manualTimers(): Timers & { pending: Array<{ fn: () => void; ms: number; id: number }>; fire(): void } {
    let seq = 0;
    const pending: Array<{ fn: () => void; ms: number; id: number }> = [];
    return {
      pending,
      setTimeout: (fn, ms) => {
        const t = { fn, ms, id: ++seq };
        pending.push(t);
        return t.id;
      },
      clearTimeout: (h) => {
        const i = pending.findIndex((t) => t.id === h);
        if (i >= 0) pending.splice(i, 1);
      },
      fire() {
        const t = pending.shift();
        if (!t) throw new Error('no timer pending');
        t.fn();
      },
    };
  }

  it("ends a task when a PR opens for its branch (one request per repository per round, every 2 minutes); an older PR on the branch does not", async () => {
    const r = await rig();
    const shop = checkout(r.root, 'shop', 'feature/login', 'https://github.com/acme/shop.git');
    const shopOld = checkout(r.root, 'shop-old', 'feature/old', 'https://github.com/acme/shop.git');
    const api = checkout(r.root, 'api', 'fix/timeout', 'git@github.com:acme/api.git');
    const login = r.task('tasklogin001', shop);
    const old = r.task('taskold00001', shopOld);
    const timeout = r.task('tasktimeout1', api);
    r.gh.openPull('acme/shop', { branch: 'feature/old', createdAt: T0 - 86_400_000 });
    r.gh.openPull('acme/api', { branch: 'main', createdAt: T0 });

    const finished: string[] = [];
    const timers = manualTimers();
    const watcher = r.watcher(finished, { markDone: true, timers });
    cleanups.push(() => watcher.stop());
    watcher.start(0);
    expect(timers.pending.map((t) => t.ms)).toEqual([0]);

    timers.fire();
    await waitFor('the first round to end and the next to be armed', () => timers.pending.length === 1);
    expect(timers.pending[0]!.ms).toBe(PR_WATCH_EVERY_MS);
    expect(finished).toEqual([]);
    const listed = r.gh.requests.filter((q) => q.method === 'GET').map((q) => q.path).sort();
    expect(listed).toEqual(['/repos/acme/api/pulls', '/repos/acme/shop/pulls']);

    r.clock.t += 90_000;
    r.gh.openPull('acme/shop', { branch: 'feature/login', createdAt: r.clock.t });
    r.clock.t += 30_000;
    timers.fire();
    await waitFor('the second round', () => timers.pending.length === 1);
    expect(finished).toEqual([login]);
    expect(r.logs.some((l) => l.includes(`opened for task ${login}, but its receipt failed: receipts are not available`))).toBe(true);

    timers.fire();
    await waitFor('the third round', () => timers.pending.length === 1);
    expect(finished).toEqual([login]);
    expect(r.tasks.get(old)!.state).toBe('open');
    expect(r.tasks.get(timeout)!.state).toBe('open');
    // Round three asked only about the open tasks' repositories, once each.
    expect(r.gh.requests.filter((q) => q.method === 'GET')).toHaveLength(6);
  });

  it("finds the task's PR on the second page of a busy repository's open PRs (Link rel=\"next\"), and reads no further", async () => {
    const r = await rig();
    const shop = checkout(r.root, 'shop', 'feature/search', 'https://github.com/acme/shop.git');
    const id = r.task('taskbusy0001', shop, T0);
    // Older open PRs that no task waits for, the task's PR, then 120 newer ones from the rest of the team.
    for (let k = 0; k < 150; k++) r.gh.openPull('acme/shop', { branch: `old/${k}`, createdAt: T0 - 86_400_000 - k * 1000 });
    const pr = r.gh.openPull('acme/shop', { branch: 'feature/search', createdAt: T0 + 60_000 });
    for (let k = 0; k < 120; k++) r.gh.openPull('acme/shop', { branch: `team/${k}`, createdAt: T0 + 120_000 + k * 1000 });
    r.clock.t = T0 + 600_000;
    const finished: string[] = [];
    const watcher = r.watcher(finished);
    const round = await watcher.runNow();
    expect(round.finished).toEqual([{ taskId: id, pr: `https://github.com/acme/shop/pull/${pr.number}` }]);
    // Page 2 holds PRs older than the task: page 3 is not asked for.
    expect(r.gh.requests.map((q) => q.query.get('page'))).toEqual([null, '2']);
  });
});
