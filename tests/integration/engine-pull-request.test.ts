import { execFileSync } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { receiptLineIn } from '../../core/receipt/pr-block.js';
import { GithubClient } from '../../musher/github/client.js';
import { followPullRequests, openPullRequest, prBody, updatePullRequestBody } from '../../musher/engine/pull-request.js';
import { startFakeGithub, type FakeGithub } from '../support/fake-github.js';

/** The fake GitHub over a real socket, a real bare remote behind it; the test plays the reviewers, CI and the person who merges. */
const TOKEN = 'ghp_engine_pr_token';
const T0 = Date.UTC(2026, 11, 2, 9, 0);
const SLUG = 'acme/shop';
const RECEIPT = '31 min · $7.40 · in band · seat dana · claude-opus-5-5 · signed';

const GIT_ENV = { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@x', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@x' };
function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, env: GIT_ENV, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

const cleanups: Array<() => Promise<void> | void> = [];
let fakes: FakeGithub[] = [];
afterEach(async () => {
  // The trap: whatever a test did, sleds never asked GitHub to merge.
  for (const f of fakes) f.assertNeverMerged();
  fakes = [];
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function world(opts: { graphqlLimit?: number } = {}) {
  let now = T0;
  const clock = { now: () => now };
  const gh = await startFakeGithub({ token: TOKEN, now: clock.now, ...(opts.graphqlLimit ? { limits: { graphql: opts.graphqlLimit } } : {}) });
  fakes.push(gh);
  cleanups.push(() => gh.close());
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'sl-pr-')));
  cleanups.push(() => rmSync(root, { recursive: true, force: true }));
  const bare = join(root, 'shop.git');
  git(root, 'init', '-q', '--bare', '-b', 'main', bare);
  const repo = join(root, 'repo');
  git(root, 'clone', '-q', bare, repo);
  writeFileSync(join(repo, 'README.md'), '# shop\n');
  git(repo, 'add', '.');
  git(repo, 'commit', '-q', '-m', 'first');
  git(repo, 'push', '-q', 'origin', 'HEAD:main');
  gh.createRepo(SLUG);
  gh.linkRemote(SLUG, bare);
  const client = (): GithubClient => new GithubClient({ token: async () => ({ ok: true, token: TOKEN, source: 'secret-store' }), clock, baseUrl: gh.apiUrl, sleep: async () => undefined });
  /** A node's branch with one file, pushed to the remote. */
  const pushNode = (node: string): string => {
    const branch = `sleds/eng-503/${node}`;
    git(repo, 'checkout', '-q', '-b', branch, 'main');
    writeFileSync(join(repo, `${node}.ts`), `export const ${node.replace(/-/g, '_')} = true;\n`);
    git(repo, 'add', '.');
    git(repo, 'commit', '-q', '-m', node);
    git(repo, 'push', '-q', 'origin', branch);
    git(repo, 'checkout', '-q', 'main');
    return branch;
  };
  return { gh, client, clock, advance: (ms: number) => void (now += ms), bare, repo, pushNode };
}

const BODY_INPUT = {
  brief: 'Add POST /exports that queues an export job and returns its id.',
  decisions: [{ question: 'CSV or XLSX?', answer: 'CSV', answeredBy: 'dana', at: T0 - 60_000 }],
  route: { key: 'eng-503', title: 'Large exports by email', nodeId: 'export-api', tracker: 'ENG-503' },
  verification: 'test ✓ (340/340 tests) · types ✓',
};

describe("a node's pull request", () => {
  it('is opened once: a second open finds the open PR for the branch; the body carries brief, decisions, checks and receipt', async () => {
    const w = await world();
    const gh = w.client();
    const head = w.pushNode('export-api');
    const body = prBody({ ...BODY_INPUT, receipt: RECEIPT });
    const first = await openPullRequest(gh, { owner: 'acme', repo: 'shop', head, base: 'main', title: 'The export endpoint', body });
    const again = await openPullRequest(gh, { owner: 'acme', repo: 'shop', head, base: 'main', title: 'The export endpoint', body });
    expect(again).toEqual(first);
    expect(first.url).toBe(`https://github.com/${SLUG}/pull/${first.number}`);
    expect(w.gh.requests.filter((r) => r.method === 'POST' && r.path === `/repos/${SLUG}/pulls`)).toHaveLength(1);
    const pr = w.gh.pull(SLUG, first.number)!;
    expect(pr.head.ref).toBe(head);
    expect(pr.body).toContain('Add POST /exports that queues an export job and returns its id.');
    expect(pr.body).toContain('CSV or XLSX? → **CSV** (dana, 2026-12-02 08:59Z)');
    expect(pr.body).toContain('test ✓ (340/340 tests) · types ✓');
    expect(receiptLineIn(pr.body)).toBe(RECEIPT);

    // The receipt written later replaces the block, not a second one.
    await updatePullRequestBody(gh, { owner: 'acme', repo: 'shop', number: first.number, body: prBody({ ...BODY_INPUT, receipt: '33 min · $7.90 · in band · signed' }) });
    expect(receiptLineIn(w.gh.pull(SLUG, first.number)!.body)).toBe('33 min · $7.90 · in band · signed');
    expect(w.gh.pull(SLUG, first.number)!.body!.match(/<!-- sleds:receipt -->/g)).toHaveLength(1);
  });

  it('a branch the remote does not have is refused with GitHub’s one line', async () => {
    const w = await world();
    await expect(openPullRequest(w.client(), { owner: 'acme', repo: 'shop', head: 'sleds/eng-503/never-pushed', base: 'main', title: 't', body: 'b' })).rejects.toThrow(
      /GitHub answered 422 while opening the PR of sleds\/eng-503\/never-pushed on acme\/shop: Validation Failed \(head invalid\)/,
    );
  });

  it('one GraphQL request per round reads merged, closed, changes-requested, failing-check and conflicting PRs right', async () => {
    const w = await world();
    const gh = w.client();
    const open = async (node: string) => (await openPullRequest(gh, { owner: 'acme', repo: 'shop', head: w.pushNode(node), base: 'main', title: node, body: 'b' })).number;
    const [merged, closed, changes, failing, conflict] = [await open('schema'), await open('dead-end'), await open('export-api'), await open('mailer'), await open('ui')];

    w.advance(60_000);
    w.gh.mergePull(SLUG, merged!, 'dana');
    expect(git(w.bare, 'show', 'main:schema.ts')).toBe('export const schema = true;');
    w.gh.closePull(SLUG, closed!);
    w.gh.requestChanges(SLUG, changes!, { author: 'li', body: 'Paginate the rows.', comments: [{ path: 'export-api.ts', body: 'This loads every row at once.' }] });
    w.gh.setCheck(SLUG, failing!, { name: 'ci / test', conclusion: 'FAILURE', title: '2 tests failed', summary: 'mailer.test.ts > sends one mail' });
    w.gh.setCheck(SLUG, failing!, { name: 'ci / lint', conclusion: 'SUCCESS' });
    w.gh.setCheck(SLUG, conflict!, { name: 'ci / test', conclusion: null });
    w.gh.setMergeable(SLUG, conflict!, 'CONFLICTING');

    const before = w.gh.graphqlRequests().length;
    const round = await followPullRequests(gh, 'acme', 'shop', [merged!, closed!, changes!, failing!, conflict!], w.clock);
    expect(w.gh.graphqlRequests().length - before).toBe(1);
    expect(round.error).toBeNull();
    expect(round.retryAfterMs).toBeNull();
    const by = new Map(round.statuses.map((s) => [s.number, s]));
    expect(by.get(merged!)).toMatchObject({ state: 'MERGED', mergedAt: T0 + 60_000, checks: null, failing: [] });
    expect(by.get(closed!)).toMatchObject({ state: 'CLOSED', mergedAt: null });
    expect(by.get(changes!)).toMatchObject({ state: 'OPEN', reviewDecision: 'CHANGES_REQUESTED', reviewComments: ['li: Paginate the rows.', 'li on export-api.ts: This loads every row at once.'] });
    expect(by.get(failing!)).toMatchObject({ state: 'OPEN', checks: 'FAILURE', failing: [{ name: 'ci / test', summary: '2 tests failed — mailer.test.ts > sends one mail' }] });
    expect(by.get(conflict!)).toMatchObject({ state: 'OPEN', mergeable: 'CONFLICTING', checks: 'PENDING', failing: [] });

    // A later plain comment from the same reviewer does not hide the request for changes.
    w.gh.commentReview(SLUG, changes!, 'li', 'Looking again tomorrow.');
    expect((await followPullRequests(gh, 'acme', 'shop', [changes!], w.clock)).statuses[0]).toMatchObject({ reviewDecision: 'CHANGES_REQUESTED', reviewComments: ['li: Paginate the rows.', 'li on export-api.ts: This loads every row at once.'] });
    // The reviewer approves afterwards: their latest review counts, the request for changes is gone.
    w.gh.approve(SLUG, changes!, 'li');
    const next = await followPullRequests(gh, 'acme', 'shop', [changes!], w.clock);
    expect(next.statuses[0]).toMatchObject({ reviewDecision: 'APPROVED', reviewComments: [] });
  });

  it('a conflict with the base is read from the remote (a real test merge); a fix pushed leaves the failed run behind', async () => {
    const w = await world();
    const gh = w.client();
    const head = w.pushNode('export-api');
    const n = (await openPullRequest(gh, { owner: 'acme', repo: 'shop', head, base: 'main', title: 't', body: 'b' })).number;
    expect((await followPullRequests(gh, 'acme', 'shop', [n], w.clock)).statuses[0]).toMatchObject({ mergeable: 'MERGEABLE', checks: null });

    // Someone lands a different export-api.ts on main: the PR now conflicts.
    git(w.repo, 'checkout', '-q', 'main');
    writeFileSync(join(w.repo, 'export-api.ts'), 'export const somethingElse = 1;\n');
    git(w.repo, 'add', '.');
    git(w.repo, 'commit', '-q', '-m', 'other work');
    git(w.repo, 'push', '-q', 'origin', 'main');
    w.gh.setCheck(SLUG, n, { name: 'ci / test', conclusion: 'FAILURE', title: '1 test failed' });
    expect((await followPullRequests(gh, 'acme', 'shop', [n], w.clock)).statuses[0]).toMatchObject({ mergeable: 'CONFLICTING', checks: 'FAILURE' });

    // The node merges main in, resolves, pushes: no conflict, and the old failed run is not the new head's.
    git(w.repo, 'checkout', '-q', head);
    try {
      git(w.repo, 'merge', '-q', 'main');
    } catch {
      // the conflict the node resolves next
    }
    writeFileSync(join(w.repo, 'export-api.ts'), 'export const export_api = true;\nexport const somethingElse = 1;\n');
    git(w.repo, 'add', '.');
    git(w.repo, 'commit', '-q', '--no-edit');
    git(w.repo, 'push', '-q', 'origin', head);
    expect((await followPullRequests(gh, 'acme', 'shop', [n], w.clock)).statuses[0]).toMatchObject({ mergeable: 'MERGEABLE', checks: null, failing: [] });
    w.gh.setCheck(SLUG, n, { name: 'ci / test', conclusion: 'SUCCESS' });
    expect((await followPullRequests(gh, 'acme', 'shop', [n], w.clock)).statuses[0]).toMatchObject({ checks: 'SUCCESS' });
  });

  it('Retry-After is honoured on the injected clock: no request until it has passed, then one', async () => {
    const w = await world();
    const gh = w.client();
    const n = (await openPullRequest(gh, { owner: 'acme', repo: 'shop', head: w.pushNode('export-api'), base: 'main', title: 't', body: 'b' })).number;
    w.gh.script({ kind: 'retry-after', status: 403, retryAfter: '120' });
    const limited = await followPullRequests(gh, 'acme', 'shop', [n], w.clock);
    expect(limited).toEqual({ statuses: [], retryAfterMs: 120_000, error: null });
    expect(w.gh.graphqlRequests()).toHaveLength(1);

    w.advance(100_000);
    const still = await followPullRequests(gh, 'acme', 'shop', [n], w.clock);
    expect(still.retryAfterMs).toBe(20_000);
    expect(w.gh.graphqlRequests()).toHaveLength(1);

    w.advance(20_000);
    const after = await followPullRequests(gh, 'acme', 'shop', [n], w.clock);
    expect(after.statuses.map((s) => s.state)).toEqual(['OPEN']);
    expect(w.gh.graphqlRequests()).toHaveLength(2);
  });

  it("GraphQL's own limit (a 200 with RATE_LIMITED, remaining 0) waits for the reset; REST calls are not held back", async () => {
    const w = await world({ graphqlLimit: 1 });
    const first = w.client();
    const n = (await openPullRequest(first, { owner: 'acme', repo: 'shop', head: w.pushNode('export-api'), base: 'main', title: 't', body: 'b' })).number;
    const round = await followPullRequests(first, 'acme', 'shop', [n], w.clock);
    expect(round.statuses).toHaveLength(1);
    expect(round.retryAfterMs).toBe(3_600_000); // the last point of the hour was spent: the next round waits for the reset

    // Another engine (a fresh client) asks anyway: GitHub's 200 RATE_LIMITED, and it is told the same wait.
    const other = w.client();
    w.advance(600_000);
    const limited = await followPullRequests(other, 'acme', 'shop', [n], w.clock);
    expect(limited).toEqual({ statuses: [], retryAfterMs: 3_000_000, error: null });
    // The REST side is its own bucket.
    await updatePullRequestBody(other, { owner: 'acme', repo: 'shop', number: n, body: 'still writable' });
    expect(w.gh.pull(SLUG, n)!.body).toBe('still writable');
  });

  it('more PRs than one query holds: one query per 50, every PR read', async () => {
    const w = await world();
    const numbers = Array.from({ length: 51 }, (_, i) => w.gh.openPull(SLUG, { branch: `sleds/big/n${i}`, createdAt: T0 }).number);
    const round = await followPullRequests(w.client(), 'acme', 'shop', numbers, w.clock);
    expect(round.statuses.map((s) => s.number)).toEqual(numbers);
    expect(w.gh.graphqlRequests()).toHaveLength(2);
  });

  it('a PR number GitHub does not have is named in the error; the others are read', async () => {
    const w = await world();
    const gh = w.client();
    const n = (await openPullRequest(gh, { owner: 'acme', repo: 'shop', head: w.pushNode('export-api'), base: 'main', title: 't', body: 'b' })).number;
    const round = await followPullRequests(gh, 'acme', 'shop', [n, 999], w.clock);
    expect(round.statuses.map((s) => s.number)).toEqual([n]);
    expect(round.error).toBe('GitHub has no PR #999 on acme/shop');
    expect(await followPullRequests(gh, 'acme', 'shop', [], w.clock)).toEqual({ statuses: [], retryAfterMs: null, error: null });
  });
});

describe('on GitHub Enterprise Server', () => {
  it('REST goes under /api/v3 and the round’s GraphQL query to /api/graphql', async () => {
    const gh = await startFakeGithub({ token: TOKEN, now: () => T0, enterprise: true });
    fakes.push(gh);
    cleanups.push(() => gh.close());
    gh.createRepo(SLUG);
    const n = gh.openPull(SLUG, { branch: 'sleds/eng-503/export-api', createdAt: T0 }).number;
    const client = new GithubClient({ token: async () => ({ ok: true, token: TOKEN, source: 'secret-store' }), clock: { now: () => T0 }, baseUrl: gh.apiUrl, sleep: async () => undefined });
    const found = await openPullRequest(client, { owner: 'acme', repo: 'shop', head: 'sleds/eng-503/export-api', base: 'main', title: 't', body: 'b' });
    expect(found.number).toBe(n);
    const round = await followPullRequests(client, 'acme', 'shop', [n], { now: () => T0 });
    expect(round).toMatchObject({ error: null, statuses: [{ number: n, state: 'OPEN' }] });
  });
});

describe('the merge trap in the fake GitHub', () => {
  it('records a REST merge and a GraphQL merge mutation, and fails the test that made them', async () => {
    const gh = await startFakeGithub({ token: TOKEN });
    cleanups.push(() => gh.close());
    gh.createRepo(SLUG);
    const headers = { authorization: `Bearer ${TOKEN}`, 'user-agent': 'sleds-test', 'content-type': 'application/json' };
    await fetch(`${gh.apiUrl}/repos/${SLUG}/pulls/1/merge`, { method: 'PUT', headers, body: JSON.stringify({ merge_method: 'squash' }) });
    await fetch(`${gh.apiUrl}/graphql`, { method: 'POST', headers, body: JSON.stringify({ query: 'mutation { enablePullRequestAutoMerge(input: {pullRequestId: "PR_1"}) { clientMutationId } }' }) });
    expect(gh.mergeCalls.map((r) => `${r.method} ${r.path}`)).toEqual([`PUT /repos/${SLUG}/pulls/1/merge`, 'POST /graphql']);
    expect(() => gh.assertNeverMerged()).toThrow(/sleds called a merge endpoint: PUT \/repos\/acme\/shop\/pulls\/1\/merge, POST \/graphql/);
  });
});
