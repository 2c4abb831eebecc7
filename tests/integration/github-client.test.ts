import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { GithubClient } from '../../musher/github/client.js';
import { GITHUB_TOKEN_SECRET, githubTokenSource, NO_TOKEN_LINE } from '../../musher/github/token.js';
import { PullRequests, IssueSearch } from '../../musher/github/wire.js';
import { FileSecretStore } from '../../musher/secrets/store.js';
import { startFakeGithub, type FakeGithub } from '../support/fake-github.js';

const TOKEN = 'ghp_TEST_token_never_logged_0123456789';
const T0 = Date.UTC(2026, 10, 30, 9, 0);

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

interface Rig {
  gh: FakeGithub;
  client: GithubClient;
  clock: { now(): number; t: number };
  sleeps: number[];
  dir: string;
}

async function rig(opts: { stored?: string | null; ghPrints?: string | null; acceptToken?: string } = {}): Promise<Rig> {
  const clock = { t: T0, now: () => clock.t };
  const gh = await startFakeGithub({ token: opts.acceptToken ?? TOKEN, now: () => clock.t });
  cleanups.push(() => gh.close());
  const dir = mkdtempSync(join(tmpdir(), 'sl-gh-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const secrets = new FileSecretStore(dir);
  const stored = opts.stored === undefined ? TOKEN : opts.stored;
  if (stored !== null) await secrets.set(GITHUB_TOKEN_SECRET, stored);
  // A stand-in for the GitHub CLI: `gh auth token` prints a token and a newline, or fails as logged out.
  const ghBin = join(dir, 'gh');
  writeFileSync(
    ghBin,
    opts.ghPrints
      ? `#!/bin/sh\n[ "$1 $2" = "auth token" ] && { echo "${opts.ghPrints}"; exit 0; }\nexit 2\n`
      : `#!/bin/sh\necho "no oauth token found for github.com" >&2\nexit 1\n`,
  );
  chmodSync(ghBin, 0o755);
  const sleeps: number[] = [];
  const client = new GithubClient({
    token: githubTokenSource({ secrets, ghBin: () => ghBin }),
    clock,
    sleep: async (ms) => {
      sleeps.push(ms);
      clock.t += ms;
    },
    baseUrl: gh.apiUrl,
    userAgent: 'sleds/test',
  });
  return { gh, client, clock, sleeps, dir };
}

const listPulls = (c: GithubClient) => c.request('GET', '/repos/acme/shop/pulls', { query: { state: 'open' }, schema: PullRequests, what: 'listing the pull requests of acme/shop' });
const searchIssues = (c: GithubClient) =>
  c.request('GET', '/search/issues', { query: { q: 'is:issue is:open label:sleds repo:acme/shop' }, schema: IssueSearch, what: 'searching for issues labelled sleds' });

describe('GitHub REST client', () => {
  it('sends the documented headers and the stored token', async () => {
    const { gh, client } = await rig();
    gh.openPull('acme/shop', { branch: 'feature/login', createdAt: T0 });
    const r = await listPulls(client);
    expect(r.ok && r.data.map((p) => p.head.ref)).toEqual(['feature/login']);
    const h = gh.requests[0]!.headers;
    expect(h.accept).toBe('application/vnd.github+json');
    expect(h['x-github-api-version']).toBe('2022-11-28');
    expect(h['user-agent']).toBe('sleds/test');
    expect(h.authorization).toBe(`Bearer ${TOKEN}`);
  });

  it("without a stored token it asks 'gh auth token'; the stored one wins when both exist", async () => {
    const viaGh = await rig({ stored: null, ghPrints: 'gho_from_gh_cli', acceptToken: 'gho_from_gh_cli' });
    viaGh.gh.openPull('acme/shop', { branch: 'x', createdAt: T0 });
    expect((await listPulls(viaGh.client)).ok).toBe(true);
    expect(viaGh.gh.requests[0]!.headers.authorization).toBe('Bearer gho_from_gh_cli');

    const both = await rig({ ghPrints: 'gho_other' });
    both.gh.openPull('acme/shop', { branch: 'x', createdAt: T0 });
    expect((await listPulls(both.client)).ok).toBe(true);
    expect(both.gh.requests[0]!.headers.authorization).toBe(`Bearer ${TOKEN}`);
  });

  it('no token anywhere: one line saying how to set one, and no request', async () => {
    const { gh, client } = await rig({ stored: null, ghPrints: null });
    const r = await listPulls(client);
    expect(r).toMatchObject({ ok: false, error: NO_TOKEN_LINE });
    expect(gh.requests).toHaveLength(0);
  });

  it('a refused token: what to do, and the token is in no error', async () => {
    const { client } = await rig({ acceptToken: 'ghp_the_right_one' });
    const r = await listPulls(client);
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.error).toBe("GitHub refused the token (401) while listing the pull requests of acme/shop — set a new one with 'sleds github set-token' or 'gh auth login'");
      expect(r.error).not.toContain(TOKEN);
    }
  });

  it('a short Retry-After is slept through on the injected clock, then the request goes again', async () => {
    const { gh, client, sleeps } = await rig();
    gh.openPull('acme/shop', { branch: 'x', createdAt: T0 });
    gh.script({ kind: 'retry-after', status: 429, retryAfter: '30' });
    const r = await listPulls(client);
    expect(r.ok).toBe(true);
    expect(sleeps).toEqual([30_000]);
    expect(gh.requests).toHaveLength(2);
  });

  it('a long Retry-After fails at once, and nothing is sent to that resource until it has passed', async () => {
    const { gh, client, clock, sleeps } = await rig();
    gh.openIssue('acme/shop', { title: 'Flaky login', labels: ['sleds'], createdAt: T0 });
    gh.openPull('acme/shop', { branch: 'x', createdAt: T0 });
    gh.script({ kind: 'retry-after', status: 403, retryAfter: '600' });
    const first = await searchIssues(client);
    expect(first.ok).toBe(false);
    if (!first.ok) {
      expect(first.retryAt).toBe(T0 + 600_000);
      expect(first.error).toContain('GitHub rate-limited sleds (403) while searching for issues labelled sleds — next try after 2026-11-30T09:10:00.000Z (in 600 s)');
    }
    expect(sleeps).toEqual([]);
    clock.t += 599_000;
    const early = await searchIssues(client);
    expect(early.ok).toBe(false);
    expect(gh.requests).toHaveLength(1); // not sent
    // The search limit is its own: the core API is still asked.
    expect((await listPulls(client)).ok).toBe(true);
    expect(gh.requests).toHaveLength(2);
    clock.t += 1_000;
    const after = await searchIssues(client);
    expect(after.ok && after.data.items.map((i) => i.title)).toEqual(['Flaky login']);
    expect(gh.requests).toHaveLength(3);
  });

  it('x-ratelimit-remaining 0 without Retry-After: wait until x-ratelimit-reset', async () => {
    const { gh, client, clock } = await rig();
    gh.openPull('acme/shop', { branch: 'x', createdAt: T0 });
    gh.script({ kind: 'reset', status: 403, resetAtSec: T0 / 1000 + 1800 });
    const r = await listPulls(client);
    expect(r).toMatchObject({ ok: false, retryAt: T0 + 1_800_000 });
    expect(client.blockedUntil('core')).toBe(T0 + 1_800_000);
    clock.t = T0 + 1_800_000;
    expect((await listPulls(client)).ok).toBe(true);
  });

  it('a secondary rate limit with no Retry-After waits a minute; a 403 that is not a rate limit is an error at once', async () => {
    const { gh, client, sleeps } = await rig();
    gh.openPull('acme/shop', { branch: 'x', createdAt: T0 });
    gh.script({ kind: 'secondary', status: 403 });
    expect((await listPulls(client)).ok).toBe(true);
    expect(sleeps).toEqual([60_000]);
    gh.script({ kind: 'status', status: 403, message: 'Resource not accessible by integration' });
    const r = await listPulls(client);
    expect(r).toMatchObject({ ok: false, status: 403, error: 'GitHub answered 403 while listing the pull requests of acme/shop: Resource not accessible by integration' });
    expect(sleeps).toEqual([60_000]);
  });

  it("gives the Link header's next page and follows it with the token; a next page elsewhere is refused unsent", async () => {
    const { gh, client } = await rig();
    for (let k = 0; k < 3; k++) gh.openPull('acme/shop', { branch: `b${k}`, createdAt: T0 + k * 1000 });
    const what = 'listing the pull requests of acme/shop';
    const first = await client.request('GET', '/repos/acme/shop/pulls', { query: { state: 'open', per_page: 2 }, schema: PullRequests, what });
    expect(first.ok && first.data.map((p) => p.head.ref)).toEqual(['b2', 'b1']);
    expect(first.ok && first.next).toBe(`${gh.apiUrl}/repos/acme/shop/pulls?state=open&per_page=2&page=2`);
    const second = await client.request('GET', first.ok ? first.next! : '', { schema: PullRequests, what });
    expect(second).toMatchObject({ ok: true, next: null });
    expect(second.ok && second.data.map((p) => p.head.ref)).toEqual(['b0']);
    expect(gh.requests[1]!.headers.authorization).toBe(`Bearer ${TOKEN}`);

    const elsewhere = await client.request('GET', 'https://evil.example/repos/acme/shop/pulls?page=2', { schema: PullRequests, what });
    expect(elsewhere).toEqual({ ok: false, status: null, error: `GitHub's next page while ${what} points outside ${gh.apiUrl} — not followed` });
    expect(gh.requests).toHaveLength(2);
  });
  it('GitHub unreachable: one line naming the host and the system error, without the token', async () => {
    const { gh, client } = await rig();
    const host = new URL(gh.apiUrl).host;
    await gh.close();
    const r = await listPulls(client);
    expect(r).toEqual({ ok: false, status: null, error: `GitHub could not be reached at ${host} while listing the pull requests of acme/shop (ECONNREFUSED) — check the network or upstreams.github in config.yml` });
  });
});

