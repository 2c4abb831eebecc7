import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A fake of GitHub's REST API on 127.0.0.1 (port 0), speaking its wire (facts/integrations.md §4): the real paths,
 * JSON shapes and headers. It checks what GitHub checks — a Bearer (or `token`) Authorization it knows (401
 * "Requires authentication" / "Bad credentials"), a User-Agent (403 without), the `X-GitHub-Api-Version` (400 for one
 * it does not know) — records every request, and can be scripted to answer 403/429 rate limits with Retry-After or
 * `x-ratelimit-remaining: 0` + `x-ratelimit-reset`. `head=` on the pulls list is honoured only as `owner:branch`
 * (a bare branch is silently ignored, as GitHub does).
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
  head: { owner: string; ref: string };
  base: string;
  createdAt: number;
}

export interface FakeIssue {
  number: number;
  title: string;
  body: string | null;
  labels: string[];
  state: 'open' | 'closed';
  createdAt: number;
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
  /** What SLEDS_GITHUB_API takes: `http://127.0.0.1:<port>`. */
  apiUrl: string;
  requests: GithubRequestRecord[];
  /** Answers for the next requests, in order, before the normal handling (after the auth checks). */
  script(...answers: GithubScript[]): void;
  /** A repository that exists (with no PRs or issues yet); anything else is 404. */
  createRepo(repo: string): void;
  openPull(repo: string, p: { branch: string; title?: string; body?: string | null; createdAt: number; headOwner?: string; state?: 'open' | 'closed' }): FakePull;
  pull(repo: string, n: number): FakePull | undefined;
  openIssue(repo: string, i: { title: string; body?: string | null; labels: string[]; createdAt: number }): FakeIssue;
  comments(repo: string, issue: number): FakeComment[];
  /** Comments written by sleds' calls (POST), across all issues. */
  posted(): number;
  close(): Promise<void>;
}

const VERSIONS = new Set(['2022-11-28', '2026-03-10']);
const LOGIN = 'sleds-bot';

export async function startFakeGithub(opts: { token: string; now?: () => number }): Promise<FakeGithub> {
  const repos = new Map<string, FakeRepo>();
  const requests: GithubRequestRecord[] = [];
  const queue: GithubScript[] = [];
  let nextId = 1000;
  let postedCount = 0;
  let base = '';
  const now = opts.now ?? Date.now;

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
    const headRepo = `${p.head.owner}/${name}`;
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
      closed_at: p.state === 'closed' ? iso(p.createdAt) : null,
      merged_at: null,
      draft: false,
      head: { label: `${p.head.owner}:${p.head.ref}`, ref: p.head.ref, sha: 'a'.repeat(40), user: { login: p.head.owner }, repo: { full_name: headRepo, name, owner: { login: p.head.owner } } },
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
    updated_at: iso(i.createdAt),
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

  const rateHeaders = (resource: string, remaining = 4999): Record<string, string> => ({
    'x-ratelimit-limit': resource === 'search' ? '30' : '5000',
    'x-ratelimit-remaining': String(remaining),
    'x-ratelimit-used': String((resource === 'search' ? 30 : 5000) - remaining),
    'x-ratelimit-reset': String(Math.floor(now() / 1000) + 3600),
    'x-ratelimit-resource': resource,
  });

  const send = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void => {
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'x-github-media-type': 'github.v3; format=json', ...headers });
    res.end(JSON.stringify(body));
  };
  const notFound = (res: ServerResponse, headers: Record<string, string>): void =>
    send(res, 404, { message: 'Not Found', documentation_url: 'https://docs.github.com/rest', status: '404' }, headers);

  /** `is:issue is:open label:x (repo:a/b OR repo:c/d)`: the qualifiers this fake understands. */
  const search = (q: string) => {
    const repoNames = [...q.matchAll(/repo:([^\s()]+)/g)].map((m) => m[1]!.toLowerCase());
    const label = /label:(?:"([^"]+)"|([^\s()]+))/.exec(q);
    const wantLabel = label ? (label[1] ?? label[2])!.toLowerCase() : null;
    const open = /\bis:open\b|\bstate:open\b/.test(q);
    const items: unknown[] = [];
    for (const slug of repoNames) {
      const r = repos.get(slug);
      if (!r) continue;
      for (const i of r.issues) {
        if (open && i.state !== 'open') continue;
        if (wantLabel && !i.labels.some((l) => l.toLowerCase() === wantLabel)) continue;
        items.push(issueJson(slug, i));
      }
    }
    return { total_count: items.length, incomplete_results: false, items };
  };

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: Record<string, unknown> | null = null;
      try {
        body = raw ? (JSON.parse(raw) as Record<string, unknown>) : null;
      } catch {
        return send(res, 400, { message: 'Problems parsing JSON', documentation_url: 'https://docs.github.com/rest' });
      }
      requests.push({ method: req.method ?? '', path: url.pathname, query: url.searchParams, headers: req.headers, body });
      const resource = url.pathname.startsWith('/search/') ? 'search' : 'core';
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
      const h = rateHeaders(resource);
      const m = req.method ?? '';
      if (m === 'GET' && url.pathname === '/search/issues') {
        const q = url.searchParams.get('q');
        if (!q) return send(res, 422, { message: 'Validation Failed', errors: [{ resource: 'Search', field: 'q', code: 'missing' }], documentation_url: 'https://docs.github.com/rest/search/search#search-issues-and-pull-requests', status: '422' }, h);
        return send(res, 200, search(q), h);
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
      const comments = /^\/repos\/([^/]+\/[^/]+)\/issues\/(\d+)\/comments$/.exec(url.pathname);
      if (comments) {
        const slug = comments[1]!;
        const r = repos.get(slug.toLowerCase());
        const n = Number(comments[2]);
        if (!r || (!r.issues.some((i) => i.number === n) && !r.pulls.some((p) => p.number === n))) return notFound(res, h);
        const list = r.comments.get(n) ?? [];
        if (m === 'GET') return send(res, 200, list.slice(0, Number(url.searchParams.get('per_page')) || 30).map((c) => commentJson(slug, n, c)), h);
        if (m === 'POST') {
          if (typeof body?.body !== 'string' || body.body === '') return send(res, 422, { message: 'Validation Failed', errors: [{ resource: 'IssueComment', field: 'body', code: 'missing_field' }], status: '422' }, h);
          const c: FakeComment = { id: nextId++, body: body.body, createdAt: now(), updatedAt: now() };
          r.comments.set(n, [...list, c]);
          postedCount += 1;
          return send(res, 201, commentJson(slug, n, c), { ...h, location: `${base}/repos/${slug}/issues/comments/${c.id}` });
        }
      }
      const pulls = /^\/repos\/([^/]+\/[^/]+)\/pulls$/.exec(url.pathname);
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
          .sort((a, b) => b.createdAt - a.createdAt || b.number - a.number)
          .slice(0, Number(url.searchParams.get('per_page')) || 30);
        return send(res, 200, list.map((p) => pullJson(slug, p)), h);
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
    apiUrl: base,
    requests,
    script: (...answers) => queue.push(...answers),
    createRepo: (slug) => void repoOf(slug),
    openPull(slug, p) {
      const r = repoOf(slug);
      const pr: FakePull = { number: nextNumber(r), state: p.state ?? 'open', title: p.title ?? p.branch, body: p.body === undefined ? '' : p.body, head: { owner: p.headOwner ?? slug.split('/')[0]!, ref: p.branch }, base: 'main', createdAt: p.createdAt };
      r.pulls.push(pr);
      return pr;
    },
    pull: (slug, n) => repos.get(slug.toLowerCase())?.pulls.find((p) => p.number === n),
    openIssue(slug, i) {
      const r = repoOf(slug);
      const issue: FakeIssue = { number: nextNumber(r), title: i.title, body: i.body ?? null, labels: i.labels, state: 'open', createdAt: i.createdAt };
      r.issues.push(issue);
      return issue;
    },
    comments: (slug, n) => repos.get(slug.toLowerCase())?.comments.get(n) ?? [],
    posted: () => postedCount,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
