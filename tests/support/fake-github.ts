import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';

/**
 * A fake of GitHub's REST API on 127.0.0.1 (port 0), speaking its wire (shared/facts/integrations.md §4): the real paths,
 * JSON shapes and headers. It checks what GitHub checks — a Bearer (or `token`) Authorization it knows (401
 * "Requires authentication" / "Bad credentials"), a User-Agent (403 without), the `X-GitHub-Api-Version` (400 for one
 * it does not know) — records every request, and can be scripted to answer 403/429 rate limits with Retry-After or
 * `x-ratelimit-remaining: 0` + `x-ratelimit-reset`. `head=` on the pulls list is honoured only as `owner:branch`
 * (a bare branch is silently ignored, as GitHub does); a PR from a fork has the fork as `head.repo` and
 * `forkowner:branch` as `head.label`. Lists paginate as GitHub's do: `per_page` (default 30, at most 100) and `page`,
 * with a `Link` header (`rel="next"`, `"last"`, `"prev"`, `"first"`) built on the request's own URL; the search gives
 * at most 1,000 results and sorts by `created`/`updated`. Each resource counts its requests in a window — search 30
 * a minute, core 5,000 an hour unless `limits` says otherwise — and answers past the limit with 403,
 * `x-ratelimit-remaining: 0` and the window's `x-ratelimit-reset`, as GitHub does.
 *
 * The engine's part (issue 14): `POST /repos/:o/:r/pulls` (422 "A pull request already exists for owner:branch." for
 * a second open PR on a head; a head the linked bare remote does not have is 422 too), and `POST /graphql` answering
 * `repository(owner:, name:) { prN: pullRequest(number: N) { … } }` with GitHub's shape (a PR that is not there is
 * `null` plus a NOT_FOUND error; `rateLimit { cost remaining resetAt }`; past the graphql window a 200 with
 * `errors[].type: "RATE_LIMITED"` and `x-ratelimit-remaining: 0`). The PR's GraphQL fields are answered as a superset
 * of what sleds asks for. The test plays the people: `mergePull` merges the branch into the bare remote's main (a
 * real git merge) and marks the PR merged; `requestChanges`, `approve`, `setCheck`, `setMergeable`, `closePull`.
 * A trap: any merge call (`PUT …/pulls/:n/merge`, `POST …/merges`, the `mergePullRequest` or
 * `enablePullRequestAutoMerge` mutations) is recorded in `mergeCalls` and `assertNeverMerged()` throws.
 */

export interface GithubRequestRecord {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  body: Record<string, unknown> | null;
}

export type GithubScript =
  | { kind: 'retry-after'; status: 403 | 429; retryAfter: string }
  | { kind: 'reset'; status: 403 | 429; resetAtSec: number }
  | { kind: 'secondary'; status: 403 }
  | { kind: 'status'; status: number; message: string };

export interface FakePull {
  number: number;
  state: 'open' | 'closed';
  title: string;
  body: string | null;
  /** `repo` is the fork's full name when it is not `owner/<the base's name>`. */
  head: { owner: string; ref: string; repo?: string };
  base: string;
  createdAt: number;
  /** What the people and CI did (the engine's part); absent on a PR opened by `openPull` until a test sets them. */
  mergedAt?: number | null;
  /** Set by a test; otherwise computed on the linked remote (a real `git merge-tree`), MERGEABLE without one. */
  mergeable?: 'MERGEABLE' | 'CONFLICTING' | 'UNKNOWN';
  reviews?: FakeReview[];
  checks?: FakeCheck[];
}

export interface FakeReview {
  author: string;
  state: 'APPROVED' | 'CHANGES_REQUESTED' | 'COMMENTED';
  body: string;
  comments: Array<{ path: string; body: string }>;
  at: number;
}

/**
 * A check run on the PR's head; `conclusion: null` is one still running. With a linked remote it belongs to the head
 * commit it was set on (`sha`, filled in by setCheck): a new push leaves the old runs behind, as on GitHub.
 */
export interface FakeCheck {
  name: string;
  sha?: string;
  conclusion: 'SUCCESS' | 'FAILURE' | 'TIMED_OUT' | 'CANCELLED' | 'NEUTRAL' | 'SKIPPED' | null;
  title?: string;
  summary?: string;
}

export interface FakeIssue {
  number: number;
  title: string;
  body: string | null;
  labels: string[];
  state: 'open' | 'closed';
  createdAt: number;
  /** Moves with an edit, a label, a comment (`touchIssue`, a comment posted). */
  updatedAt: number;
}

export interface FakeComment {
  id: number;
  body: string;
  createdAt: number;
  updatedAt: number;
}

interface FakeRepo {
  pulls: FakePull[];
  issues: FakeIssue[];
  comments: Map<number, FakeComment[]>;
}

export interface FakeGithub {
  /** What config.yml's upstreams.github takes: `http://127.0.0.1:<port>`. */
  apiUrl: string;
  requests: GithubRequestRecord[];
  /** Answers for the next requests, in order, before the normal handling (after the auth checks). */
  script(...answers: GithubScript[]): void;
  /** A repository that exists (with no PRs or issues yet); anything else is 404. */
  createRepo(repo: string): void;
  /** A PR on `repo`; `headOwner` (and `headRepo`, a fork's full name) make it a PR from a fork. */
  openPull(repo: string, p: { branch: string; title?: string; body?: string | null; createdAt: number; headOwner?: string; headRepo?: string; state?: 'open' | 'closed' }): FakePull;
  pull(repo: string, n: number): FakePull | undefined;
  openIssue(repo: string, i: { title: string; body?: string | null; labels: string[]; createdAt: number; updatedAt?: number }): FakeIssue;
  /** Someone edits an issue (labels, state): its updated_at moves to now. */
  touchIssue(repo: string, n: number, change: { labels?: string[]; state?: 'open' | 'closed' }): FakeIssue;
  /** A comment someone else wrote. */
  addComment(repo: string, issue: number, body: string): FakeComment;
  comments(repo: string, issue: number): FakeComment[];
  /** Comments written by sleds' calls (POST), across all issues. */
  posted(): number;
  /** The bare git remote behind `repo`: PR heads are checked against it and `mergePull` merges into its base. */
  linkRemote(repo: string, bareDir: string): void;
  /** The person who merges: the PR's branch merged into its base on the linked remote (a real merge commit), the PR marked merged. */
  mergePull(repo: string, n: number, by?: string): void;
  /** Someone closes the PR without merging. */
  closePull(repo: string, n: number): void;
  requestChanges(repo: string, n: number, r: { author: string; body: string; comments?: Array<{ path: string; body: string }> }): void;
  approve(repo: string, n: number, author: string): void;
  /** A review that only comments (neither approves nor requests changes). */
  commentReview(repo: string, n: number, author: string, body: string): void;
  /** A check run's state on the PR (a new name adds one, a known name replaces it). */
  setCheck(repo: string, n: number, c: FakeCheck): void;
  setMergeable(repo: string, n: number, m: 'MERGEABLE' | 'CONFLICTING' | 'UNKNOWN' | null): void;
  /** Every request that would have merged something. sleds must never make one. */
  mergeCalls: GithubRequestRecord[];
  /** Throws when any merge call was made (call it in afterEach). */
  assertNeverMerged(): void;
  /** POST /graphql requests, in order. */
  graphqlRequests(): GithubRequestRecord[];
  close(): Promise<void>;
}

const VERSIONS = new Set(['2022-11-28', '2026-03-10']);
const LOGIN = 'sleds-bot';

/** `enterprise`: a GitHub Enterprise Server's paths (REST under /api/v3, GraphQL at /api/graphql); `apiUrl` then ends in /api/v3. */
export async function startFakeGithub(opts: { token: string; now?: () => number; limits?: { search?: number; core?: number; graphql?: number }; enterprise?: boolean }): Promise<FakeGithub> {
  const repos = new Map<string, FakeRepo>();
  const requests: GithubRequestRecord[] = [];
  const queue: GithubScript[] = [];
  let nextId = 1000;
  let postedCount = 0;
  let base = '';
  const now = opts.now ?? Date.now;
  // GitHub's primary limits: a window per resource, counted from its first request.
  const windows: Record<string, { limit: number; seconds: number; used: number; resetSec: number }> = {
    search: { limit: opts.limits?.search ?? 30, seconds: 60, used: 0, resetSec: 0 },
    core: { limit: opts.limits?.core ?? 5000, seconds: 3600, used: 0, resetSec: 0 },
    graphql: { limit: opts.limits?.graphql ?? 5000, seconds: 3600, used: 0, resetSec: 0 },
  };
  const remotes = new Map<string, string>();
  const mergeCalls: GithubRequestRecord[] = [];
  const windowOf = (resource: string) => {
    const w = windows[resource]!;
    const sec = Math.floor(now() / 1000);
    if (sec >= w.resetSec) {
      w.used = 0;
      w.resetSec = sec + w.seconds;
    }
    return w;
  };

  const repoOf = (slug: string): FakeRepo => {
    const key = slug.toLowerCase();
    let r = repos.get(key);
    if (!r) {
      r = { pulls: [], issues: [], comments: new Map() };
      repos.set(key, r);
    }
    return r;
  };
  const nextNumber = (r: FakeRepo): number => r.pulls.length + r.issues.length + 1;
  const iso = (ms: number): string => new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');

  const pullJson = (slug: string, p: FakePull) => {
    const [owner, name] = slug.split('/');
    const headRepo = p.head.repo ?? `${p.head.owner}/${name}`;
    return {
      url: `${base}/repos/${slug}/pulls/${p.number}`,
      id: 500000 + p.number,
      node_id: `PR_kw${p.number}`,
      html_url: `https://github.com/${slug}/pull/${p.number}`,
      number: p.number,
      state: p.state,
      locked: false,
      title: p.title,
      user: { login: p.head.owner, id: 1, type: 'User' },
      body: p.body,
      labels: [],
      created_at: iso(p.createdAt),
      updated_at: iso(p.createdAt),
      closed_at: p.state === 'closed' ? iso(p.mergedAt ?? p.createdAt) : null,
      merged_at: p.mergedAt ? iso(p.mergedAt) : null,
      merged: Boolean(p.mergedAt),
      // null (still computing) for a PR on no linked remote, as the REST tests before the engine had it.
      mergeable: p.state === 'closed' || (!p.mergeable && !remotes.has(slug.toLowerCase())) ? null : mergeableOf(slug, p) === 'MERGEABLE',
      draft: false,
      head: { label: `${p.head.owner}:${p.head.ref}`, ref: p.head.ref, sha: 'a'.repeat(40), user: { login: p.head.owner }, repo: { full_name: headRepo, name: headRepo.split('/')[1], owner: { login: p.head.owner }, fork: headRepo.toLowerCase() !== slug.toLowerCase() } },
      base: { label: `${owner}:${p.base}`, ref: p.base, sha: 'b'.repeat(40), user: { login: owner }, repo: { full_name: slug, name, owner: { login: owner } } },
    };
  };
  const issueJson = (slug: string, i: FakeIssue) => ({
    url: `${base}/repos/${slug}/issues/${i.number}`,
    repository_url: `${base}/repos/${slug}`,
    comments_url: `${base}/repos/${slug}/issues/${i.number}/comments`,
    html_url: `https://github.com/${slug}/issues/${i.number}`,
    id: 700000 + i.number,
    node_id: `I_kw${i.number}`,
    number: i.number,
    title: i.title,
    user: { login: 'dana', id: 2, type: 'User' },
    labels: i.labels.map((name, k) => ({ id: 900 + k, node_id: `LA_${k}`, name, color: 'ededed', default: false })),
    state: i.state,
    locked: false,
    comments: repoOf(slug).comments.get(i.number)?.length ?? 0,
    created_at: iso(i.createdAt),
    updated_at: iso(i.updatedAt),
    closed_at: null,
    body: i.body,
    score: 1,
  });
  const commentJson = (slug: string, issue: number, c: FakeComment) => ({
    url: `${base}/repos/${slug}/issues/comments/${c.id}`,
    html_url: `https://github.com/${slug}/issues/${issue}#issuecomment-${c.id}`,
    issue_url: `${base}/repos/${slug}/issues/${issue}`,
    id: c.id,
    node_id: `IC_kw${c.id}`,
    user: { login: LOGIN, id: 3, type: 'User' },
    created_at: iso(c.createdAt),
    updated_at: iso(c.updatedAt),
    body: c.body,
  });

  const rateHeaders = (resource: string, remaining?: number): Record<string, string> => {
    const w = windowOf(resource);
    const left = remaining ?? w.limit - w.used;
    return {
      'x-ratelimit-limit': String(w.limit),
      'x-ratelimit-remaining': String(left),
      'x-ratelimit-used': String(w.limit - left),
      'x-ratelimit-reset': String(w.resetSec),
      'x-ratelimit-resource': resource,
    };
  };

  /**
   * One page of a list, and its Link header: the request's URL with `page` set, as GitHub writes it. `cap` is the
   * search's 1,000; null when the page asked for is beyond it.
   */
  const paged = <T>(all: T[], url: URL, cap = Infinity): { items: T[]; link: Record<string, string> } | null => {
    const perPage = Math.min(100, Math.max(1, Number(url.searchParams.get('per_page')) || 30));
    const page = Math.max(1, Number(url.searchParams.get('page')) || 1);
    const reachable = Math.min(all.length, cap);
    if (all.length > 0 && (page - 1) * perPage >= cap) return null;
    const last = Math.max(1, Math.ceil(reachable / perPage));
    const at = (n: number): string => {
      const u = new URL(`${base}${url.pathname}`);
      for (const [k, v] of url.searchParams) if (k !== 'page') u.searchParams.append(k, v);
      u.searchParams.set('page', String(n));
      return u.toString();
    };
    const rels: string[] = [];
    if (page > 1) rels.push(`<${at(page - 1)}>; rel="prev"`);
    if (page < last) rels.push(`<${at(page + 1)}>; rel="next"`, `<${at(last)}>; rel="last"`);
    if (page > 1) rels.push(`<${at(1)}>; rel="first"`);
    return { items: all.slice((page - 1) * perPage, Math.min(page * perPage, reachable)), link: rels.length > 0 ? { link: rels.join(', ') } : {} };
  };

  const send = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void => {
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'x-github-media-type': 'github.v3; format=json', ...headers });
    res.end(JSON.stringify(body));
  };
  const notFound = (res: ServerResponse, headers: Record<string, string>): void =>
    send(res, 404, { message: 'Not Found', documentation_url: 'https://docs.github.com/rest', status: '404' }, headers);

  /** `is:issue is:open label:x (repo:a/b OR repo:c/d)`: the qualifiers this fake understands; `sort`/`order` too. */
  const search = (q: string, sort: string | null, order: string | null) => {
    const repoNames = [...q.matchAll(/repo:([^\s()]+)/g)].map((m) => m[1]!.toLowerCase());
    const label = /label:(?:"([^"]+)"|([^\s()]+))/.exec(q);
    const wantLabel = label ? (label[1] ?? label[2])!.toLowerCase() : null;
    const open = /\bis:open\b|\bstate:open\b/.test(q);
    const found: Array<{ slug: string; i: FakeIssue }> = [];
    for (const slug of repoNames) {
      const r = repos.get(slug);
      if (!r) continue;
      for (const i of r.issues) {
        if (open && i.state !== 'open') continue;
        if (wantLabel && !i.labels.some((l) => l.toLowerCase() === wantLabel)) continue;
        found.push({ slug, i });
      }
    }
    const key = sort === 'updated' ? (x: { i: FakeIssue }) => x.i.updatedAt : sort === 'created' ? (x: { i: FakeIssue }) => x.i.createdAt : null;
    if (key) found.sort((a, b) => (order === 'asc' ? 1 : -1) * (key(a) - key(b) || a.i.number - b.i.number));
    return found;
  };

  const pullOf = (slug: string, n: number): FakePull => {
    const p = repos.get(slug.toLowerCase())?.pulls.find((x) => x.number === n);
    if (!p) throw new Error(`no PR ${slug}#${n}`);
    return p;
  };
  const testGit = (cwd: string, ...args: string[]): string =>
    execFileSync('git', args, {
      cwd,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_AUTHOR_NAME: 'GitHub', GIT_AUTHOR_EMAIL: 'noreply@github.com', GIT_COMMITTER_NAME: 'GitHub', GIT_COMMITTER_EMAIL: 'noreply@github.com' },
    }).trim();
  const hasBranch = (bare: string, branch: string): boolean => {
    try {
      testGit(bare, 'rev-parse', '--verify', '--quiet', `refs/heads/${branch}`);
      return true;
    } catch {
      return false;
    }
  };

  const createPull = (res: ServerResponse, slug: string, body: Record<string, unknown> | null, h: Record<string, string>): void => {
    const r = repos.get(slug.toLowerCase());
    if (!r) return notFound(res, h);
    const invalid = (field: string, code: string, message?: string) =>
      send(res, 422, { message: 'Validation Failed', errors: [{ resource: 'PullRequest', field, code, ...(message ? { message } : {}) }], documentation_url: 'https://docs.github.com/rest/pulls/pulls#create-a-pull-request', status: '422' }, h);
    for (const field of ['title', 'head', 'base'] as const) if (typeof body?.[field] !== 'string' || body[field] === '') return invalid(field, 'missing_field');
    const owner = slug.split('/')[0]!;
    const headRaw = String(body!.head);
    const [headOwner, ref] = headRaw.includes(':') ? [headRaw.split(':')[0]!, headRaw.split(':').slice(1).join(':')] : [owner, headRaw];
    const bare = remotes.get(slug.toLowerCase());
    if (bare && !hasBranch(bare, ref)) return invalid('head', 'invalid');
    if (bare && !hasBranch(bare, String(body!.base))) return invalid('base', 'invalid');
    if (r.pulls.some((p) => p.state === 'open' && p.head.owner === headOwner && p.head.ref === ref)) {
      return invalid('', 'custom', `A pull request already exists for ${headOwner}:${ref}.`);
    }
    const pr: FakePull = { number: nextNumber(r), state: 'open', title: String(body!.title), body: typeof body!.body === 'string' ? body!.body : null, head: { owner: headOwner, ref }, base: String(body!.base), createdAt: now(), reviews: [], checks: [] };
    r.pulls.push(pr);
    return send(res, 201, pullJson(slug, pr), { ...h, location: `${base}/repos/${slug}/pulls/${pr.number}` });
  };

  const reviewDecisionOf = (p: FakePull): string | null => {
    const latest = new Map<string, FakeReview>();
    for (const r of p.reviews ?? []) if (r.state !== 'COMMENTED') latest.set(r.author, r);
    const states = [...latest.values()].map((r) => r.state);
    if (states.includes('CHANGES_REQUESTED')) return 'CHANGES_REQUESTED';
    if (states.includes('APPROVED')) return 'APPROVED';
    return null;
  };
  const headSha = (slug: string, p: FakePull): string | null => {
    const bare = remotes.get(slug.toLowerCase());
    if (!bare) return null;
    try {
      return testGit(bare, 'rev-parse', '--verify', '--quiet', `refs/heads/${p.head.ref}`);
    } catch {
      return null; // the branch was deleted after the merge
    }
  };
  /** GitHub's test merge, for real: does the head merge into the base without a conflict? */
  const mergeableOf = (slug: string, p: FakePull): 'MERGEABLE' | 'CONFLICTING' | 'UNKNOWN' => {
    if (p.mergeable) return p.mergeable;
    const bare = remotes.get(slug.toLowerCase());
    if (!bare) return 'MERGEABLE';
    try {
      testGit(bare, 'merge-tree', '--write-tree', `refs/heads/${p.base}`, `refs/heads/${p.head.ref}`);
      return 'MERGEABLE';
    } catch (e) {
      // merge-tree exits 1 on a conflict; anything else (a missing branch) is GitHub still computing.
      return (e as { status?: number }).status === 1 ? 'CONFLICTING' : 'UNKNOWN';
    }
  };
  const rollupOf = (slug: string, p: FakePull) => {
    const sha = headSha(slug, p);
    const checks = (p.checks ?? []).filter((c) => !c.sha || !sha || c.sha === sha);
    if (checks.length === 0) return null;
    const state = checks.some((c) => c.conclusion === 'FAILURE' || c.conclusion === 'TIMED_OUT' || c.conclusion === 'CANCELLED') ? 'FAILURE' : checks.some((c) => c.conclusion === null) ? 'PENDING' : 'SUCCESS';
    return {
      state,
      contexts: {
        nodes: checks.map((c) => ({ __typename: 'CheckRun', name: c.name, status: c.conclusion === null ? 'IN_PROGRESS' : 'COMPLETED', conclusion: c.conclusion, title: c.title ?? null, summary: c.summary ?? null })),
      },
    };
  };
  const prNode = (slug: string, p: FakePull) => {
    const latest = new Map<string, FakeReview>();
    for (const r of p.reviews ?? []) latest.set(r.author, r);
    const opinionated = new Map<string, FakeReview>();
    for (const r of p.reviews ?? []) if (r.state !== 'COMMENTED') opinionated.set(r.author, r);
    const reviewNodes = (m: Map<string, FakeReview>) => ({ nodes: [...m.values()].map((r) => ({ state: r.state, body: r.body, author: { login: r.author }, comments: { nodes: r.comments } })) });
    const oid = headSha(slug, p) ?? 'a'.repeat(40);
    const rollup = rollupOf(slug, p);
    return {
      number: p.number,
      url: `https://github.com/${slug}/pull/${p.number}`,
      title: p.title,
      headRefName: p.head.ref,
      headRefOid: oid,
      state: p.mergedAt ? 'MERGED' : p.state === 'closed' ? 'CLOSED' : 'OPEN',
      merged: Boolean(p.mergedAt),
      mergedAt: p.mergedAt ? iso(p.mergedAt) : null,
      mergeable: p.mergedAt || p.state === 'closed' ? 'UNKNOWN' : mergeableOf(slug, p),
      reviewDecision: reviewDecisionOf(p),
      statusCheckRollup: rollup,
      commits: { nodes: [{ commit: { oid, statusCheckRollup: rollup } }] },
      latestReviews: reviewNodes(latest),
      latestOpinionatedReviews: reviewNodes(opinionated),
    };
  };

  /** The queries sleds sends: `repository(owner:, name:)` with `alias: pullRequest(number: N)` fields, and `rateLimit`. */
  const graphql = (res: ServerResponse, body: Record<string, unknown> | null, h: Record<string, string>): void => {
    const query = typeof body?.query === 'string' ? body.query : '';
    if (!query) return send(res, 400, { message: 'Problems parsing JSON', documentation_url: 'https://docs.github.com/graphql' }, h);
    if (/\b(mergePullRequest|enablePullRequestAutoMerge)\b/.test(query)) {
      mergeCalls.push(requests.at(-1)!);
      return send(res, 200, { errors: [{ type: 'FORBIDDEN', message: 'sleds must never merge (the fake GitHub records this call and fails the test)' }] }, h);
    }
    const vars = (body?.variables ?? {}) as Record<string, unknown>;
    const arg = (v: string): string => (v.startsWith('$') ? String(vars[v.slice(1)] ?? '') : v.replace(/^"|"$/g, ''));
    const repoArgs = /repository\(\s*owner:\s*("[^"]*"|\$\w+)\s*,\s*name:\s*("[^"]*"|\$\w+)\s*\)/.exec(query);
    const w = windowOf('graphql');
    const rateLimit = { cost: 1, remaining: w.limit - w.used, resetAt: new Date(w.resetSec * 1000).toISOString().replace('.000Z', 'Z') };
    const data: Record<string, unknown> = {};
    const errors: unknown[] = [];
    if (repoArgs) {
      const slug = `${arg(repoArgs[1]!)}/${arg(repoArgs[2]!)}`;
      const r = repos.get(slug.toLowerCase());
      if (!r) {
        data.repository = null;
        errors.push({ type: 'NOT_FOUND', path: ['repository'], locations: [{ line: 2, column: 3 }], message: `Could not resolve to a Repository with the name '${slug}'.` });
      } else {
        const repoData: Record<string, unknown> = {};
        for (const m of query.matchAll(/(\w+)\s*:\s*pullRequest\(\s*number:\s*(\d+)\s*\)/g)) {
          const p = r.pulls.find((x) => x.number === Number(m[2]));
          repoData[m[1]!] = p ? prNode(slug, p) : null;
          if (!p) errors.push({ type: 'NOT_FOUND', path: ['repository', m[1]], locations: [{ line: 3, column: 5 }], message: `Could not resolve to a PullRequest with the number of ${m[2]}.` });
        }
        data.repository = repoData;
      }
    }
    if (/\brateLimit\b/.test(query)) data.rateLimit = rateLimit;
    return send(res, 200, errors.length > 0 ? { data, errors } : { data }, h);
  };

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const asked = new URL(req.url ?? '/', 'http://127.0.0.1');
      // An Enterprise Server's paths: REST under /api/v3, GraphQL at /api/graphql.
      const url = opts.enterprise ? new URL(asked.pathname === '/api/graphql' ? '/graphql' : asked.pathname.startsWith('/api/v3/') && asked.pathname !== '/api/v3/graphql' ? `${asked.pathname.slice(7)}${asked.search}` : '/not-on-enterprise', 'http://127.0.0.1') : asked;
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: Record<string, unknown> | null = null;
      try {
        body = raw ? (JSON.parse(raw) as Record<string, unknown>) : null;
      } catch {
        return send(res, 400, { message: 'Problems parsing JSON', documentation_url: 'https://docs.github.com/rest' });
      }
      requests.push({ method: req.method ?? '', path: url.pathname, query: url.searchParams, headers: req.headers, body });
      const resource = url.pathname === '/graphql' ? 'graphql' : url.pathname.startsWith('/search/') ? 'search' : 'core';
      if (!req.headers['user-agent']) {
        return send(res, 403, { message: 'Request forbidden by administrative rules. Please make sure your request has a User-Agent header (https://docs.github.com/en/rest/overview/resources-in-the-rest-api#user-agent-required). Check https://developer.github.com for other possible causes.' });
      }
      const version = req.headers['x-github-api-version'];
      if (typeof version === 'string' && !VERSIONS.has(version)) {
        return send(res, 400, { message: `API version ${version} is not supported.`, documentation_url: 'https://docs.github.com/rest/overview/api-versions', status: '400' });
      }
      const auth = req.headers.authorization;
      if (!auth) return send(res, 401, { message: 'Requires authentication', documentation_url: 'https://docs.github.com/rest', status: '401' });
      if (auth !== `Bearer ${opts.token}` && auth !== `token ${opts.token}`) {
        return send(res, 401, { message: 'Bad credentials', documentation_url: 'https://docs.github.com/rest', status: '401' });
      }
      const win = windowOf(resource);
      if (win.used >= win.limit && resource === 'graphql') {
        // GraphQL's primary limit: still a 200, the error typed in the body.
        return send(res, 200, { errors: [{ type: 'RATE_LIMITED', code: 'graphql_rate_limit', message: 'API rate limit already exceeded for user ID 3.' }] }, rateHeaders(resource, 0));
      }
      if (win.used >= win.limit) {
        return send(res, 403, { message: 'API rate limit exceeded for user ID 3. If you reach out to GitHub Support for help, please include the request ID.', documentation_url: 'https://docs.github.com/rest/overview/rate-limits-for-the-rest-api', status: '403' }, rateHeaders(resource, 0));
      }
      const scripted = queue.shift();
      if (scripted) {
        const limitBody = { message: 'API rate limit exceeded for user ID 3.', documentation_url: 'https://docs.github.com/rest/overview/rate-limits-for-the-rest-api', status: String(scripted.status) };
        if (scripted.kind === 'retry-after') return send(res, scripted.status, limitBody, { ...rateHeaders(resource), 'retry-after': scripted.retryAfter });
        if (scripted.kind === 'reset') return send(res, scripted.status, limitBody, { ...rateHeaders(resource, 0), 'x-ratelimit-reset': String(scripted.resetAtSec) });
        if (scripted.kind === 'secondary') {
          return send(res, 403, { message: 'You have exceeded a secondary rate limit. Please wait a few minutes before you try again.', documentation_url: 'https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits', status: '403' }, rateHeaders(resource));
        }
        return send(res, scripted.status, { message: scripted.message, documentation_url: 'https://docs.github.com/rest', status: String(scripted.status) }, rateHeaders(resource));
      }
      win.used += 1;
      const h = rateHeaders(resource);
      const m = req.method ?? '';
      const mergePath = /^\/repos\/[^/]+\/[^/]+\/(?:pulls\/\d+\/merge|merges)$/.test(url.pathname);
      if (mergePath) {
        mergeCalls.push(requests.at(-1)!);
        return send(res, 403, { message: 'sleds must never merge (the fake GitHub records this call and fails the test)', status: '403' }, h);
      }
      if (url.pathname === '/graphql' && m === 'POST') return graphql(res, body, h);
      if (m === 'GET' && url.pathname === '/search/issues') {
        const q = url.searchParams.get('q');
        if (!q) return send(res, 422, { message: 'Validation Failed', errors: [{ resource: 'Search', field: 'q', code: 'missing' }], documentation_url: 'https://docs.github.com/rest/search/search#search-issues-and-pull-requests', status: '422' }, h);
        const found = search(q, url.searchParams.get('sort'), url.searchParams.get('order'));
        const page = paged(found, url, 1000);
        if (!page) return send(res, 422, { message: 'Only the first 1000 search results are available', documentation_url: 'https://docs.github.com/v3/search/', status: '422' }, h);
        return send(res, 200, { total_count: found.length, incomplete_results: false, items: page.items.map((x) => issueJson(x.slug, x.i)) }, { ...h, ...page.link });
      }
      const editComment = /^\/repos\/([^/]+\/[^/]+)\/issues\/comments\/(\d+)$/.exec(url.pathname);
      if (editComment && m === 'PATCH') {
        const r = repos.get(editComment[1]!.toLowerCase());
        const id = Number(editComment[2]);
        for (const [issue, list] of r?.comments ?? []) {
          const c = list.find((x) => x.id === id);
          if (c) {
            if (typeof body?.body !== 'string') return send(res, 422, { message: 'Validation Failed', errors: [{ resource: 'IssueComment', field: 'body', code: 'missing_field' }], status: '422' }, h);
            c.body = body.body;
            c.updatedAt = now();
            return send(res, 200, commentJson(editComment[1]!, issue, c), h);
          }
        }
        return notFound(res, h);
      }
      const oneIssue = /^\/repos\/([^/]+\/[^/]+)\/issues\/(\d+)$/.exec(url.pathname);
      if (oneIssue && m === 'GET') {
        const slug = oneIssue[1]!;
        const issue = repos.get(slug.toLowerCase())?.issues.find((i) => i.number === Number(oneIssue[2]));
        return issue ? send(res, 200, issueJson(slug, issue), h) : notFound(res, h);
      }
      const comments = /^\/repos\/([^/]+\/[^/]+)\/issues\/(\d+)\/comments$/.exec(url.pathname);
      if (comments) {
        const slug = comments[1]!;
        const r = repos.get(slug.toLowerCase());
        const n = Number(comments[2]);
        if (!r || (!r.issues.some((i) => i.number === n) && !r.pulls.some((p) => p.number === n))) return notFound(res, h);
        const list = r.comments.get(n) ?? [];
        if (m === 'GET') {
          const page = paged(list, url)!;
          return send(res, 200, page.items.map((c) => commentJson(slug, n, c)), { ...h, ...page.link });
        }
        if (m === 'POST') {
          if (typeof body?.body !== 'string' || body.body === '') return send(res, 422, { message: 'Validation Failed', errors: [{ resource: 'IssueComment', field: 'body', code: 'missing_field' }], status: '422' }, h);
          const c: FakeComment = { id: nextId++, body: body.body, createdAt: now(), updatedAt: now() };
          r.comments.set(n, [...list, c]);
          postedCount += 1;
          const issue = r.issues.find((i) => i.number === n);
          if (issue) issue.updatedAt = now(); // a comment moves the issue's updated_at, as on GitHub
          return send(res, 201, commentJson(slug, n, c), { ...h, location: `${base}/repos/${slug}/issues/comments/${c.id}` });
        }
      }
      const pulls = /^\/repos\/([^/]+\/[^/]+)\/pulls$/.exec(url.pathname);
      if (pulls && m === 'POST') return createPull(res, pulls[1]!, body, h);
      if (pulls && m === 'GET') {
        const slug = pulls[1]!;
        const r = repos.get(slug.toLowerCase());
        if (!r) return notFound(res, h);
        const state = url.searchParams.get('state') ?? 'open';
        const head = url.searchParams.get('head');
        // GitHub ignores a head without its owner: every PR comes back.
        const headFilter = head && head.includes(':') ? head : null;
        const list = r.pulls
          .filter((p) => state === 'all' || p.state === state)
          .filter((p) => !headFilter || `${p.head.owner}:${p.head.ref}` === headFilter)
          .sort((a, b) => b.createdAt - a.createdAt || b.number - a.number);
        const page = paged(list, url)!;
        return send(res, 200, page.items.map((p) => pullJson(slug, p)), { ...h, ...page.link });
      }
      const pull = /^\/repos\/([^/]+\/[^/]+)\/pulls\/(\d+)$/.exec(url.pathname);
      if (pull) {
        const slug = pull[1]!;
        const p = repos.get(slug.toLowerCase())?.pulls.find((x) => x.number === Number(pull[2]));
        if (!p) return notFound(res, h);
        if (m === 'GET') return send(res, 200, pullJson(slug, p), h);
        if (m === 'PATCH') {
          if (body && 'body' in body) p.body = body.body === null ? null : String(body.body);
          if (typeof body?.title === 'string') p.title = body.title;
          return send(res, 200, pullJson(slug, p), h);
        }
      }
      return notFound(res, h);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    apiUrl: opts.enterprise ? `${base}/api/v3` : base,
    requests,
    script: (...answers) => queue.push(...answers),
    createRepo: (slug) => void repoOf(slug),
    openPull(slug, p) {
      const r = repoOf(slug);
      const pr: FakePull = {
        number: nextNumber(r),
        state: p.state ?? 'open',
        title: p.title ?? p.branch,
        body: p.body === undefined ? '' : p.body,
        head: { owner: p.headRepo?.split('/')[0] ?? p.headOwner ?? slug.split('/')[0]!, ref: p.branch, ...(p.headRepo ? { repo: p.headRepo } : {}) },
        base: 'main',
        createdAt: p.createdAt,
      };
      r.pulls.push(pr);
      return pr;
    },
    pull: (slug, n) => repos.get(slug.toLowerCase())?.pulls.find((p) => p.number === n),
    openIssue(slug, i) {
      const r = repoOf(slug);
      const issue: FakeIssue = { number: nextNumber(r), title: i.title, body: i.body ?? null, labels: i.labels, state: 'open', createdAt: i.createdAt, updatedAt: i.updatedAt ?? i.createdAt };
      r.issues.push(issue);
      return issue;
    },
    touchIssue(slug, n, change) {
      const issue = repos.get(slug.toLowerCase())?.issues.find((i) => i.number === n);
      if (!issue) throw new Error(`no issue ${slug}#${n}`);
      if (change.labels) issue.labels = change.labels;
      if (change.state) issue.state = change.state;
      issue.updatedAt = now();
      return issue;
    },
    addComment(slug, n, body) {
      const r = repoOf(slug);
      const c: FakeComment = { id: nextId++, body, createdAt: now(), updatedAt: now() };
      r.comments.set(n, [...(r.comments.get(n) ?? []), c]);
      return c;
    },
    comments: (slug, n) => repos.get(slug.toLowerCase())?.comments.get(n) ?? [],
    posted: () => postedCount,
    linkRemote: (slug, bareDir) => void remotes.set(slug.toLowerCase(), bareDir),
    mergePull(slug, n, by = 'dana') {
      const p = pullOf(slug, n);
      if (p.state !== 'open') throw new Error(`${slug}#${n} is not open`);
      const bare = remotes.get(slug.toLowerCase());
      if (bare) {
        // A real merge on the remote, as GitHub's merge button makes one: a clone, a merge commit, a push.
        const work = mkdtempSync(join(tmpdir(), 'fake-gh-merge-'));
        try {
          testGit(work, 'clone', '-q', '--branch', p.base, bare, 'w');
          const w = join(work, 'w');
          testGit(w, 'fetch', '-q', 'origin', `refs/heads/${p.head.ref}:refs/remotes/origin/${p.head.ref}`);
          testGit(w, 'merge', '-q', '--no-ff', '-m', `Merge pull request #${n} from ${p.head.owner}/${p.head.ref} (merged by ${by})`, `origin/${p.head.ref}`);
          testGit(w, 'push', '-q', 'origin', `HEAD:refs/heads/${p.base}`);
        } finally {
          rmSync(work, { recursive: true, force: true });
        }
      }
      p.state = 'closed';
      p.mergedAt = now();
    },
    closePull(slug, n) {
      pullOf(slug, n).state = 'closed';
    },
    requestChanges(slug, n, r) {
      const p = pullOf(slug, n);
      p.reviews = [...(p.reviews ?? []), { author: r.author, state: 'CHANGES_REQUESTED', body: r.body, comments: r.comments ?? [], at: now() }];
    },
    commentReview(slug, n, author, body) {
      const p = pullOf(slug, n);
      p.reviews = [...(p.reviews ?? []), { author, state: 'COMMENTED', body, comments: [], at: now() }];
    },
    approve(slug, n, author) {
      const p = pullOf(slug, n);
      p.reviews = [...(p.reviews ?? []), { author, state: 'APPROVED', body: '', comments: [], at: now() }];
    },
    setCheck(slug, n, c) {
      const p = pullOf(slug, n);
      const sha = headSha(slug, p);
      const run = { ...c, ...(sha ? { sha } : {}) };
      p.checks = [...(p.checks ?? []).filter((x) => !(x.name === c.name && x.sha === run.sha)), run];
    },
    setMergeable(slug, n, m) {
      const p = pullOf(slug, n);
      if (m === null) delete p.mergeable;
      else p.mergeable = m;
    },
    mergeCalls,
    assertNeverMerged() {
      if (mergeCalls.length > 0) throw new Error(`sleds called a merge endpoint: ${mergeCalls.map((r) => `${r.method} ${r.path}`).join(', ')}`);
    },
    graphqlRequests: () => requests.filter((r) => r.path === '/graphql'),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
