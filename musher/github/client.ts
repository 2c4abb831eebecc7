import type { Octokit } from '@octokit/rest';
import type { z } from 'zod';
import { linkOf } from '../../core/github/link.js';
import { retryAfterMs } from '../../core/usage-endpoint.js';
import type { Clock } from '../clock.js';
import type { Log } from '../log.js';
import type { TokenAnswer } from './token.js';
import { DEFAULT_UPSTREAMS } from '../config/schema.js';

/**
 * GitHub's REST API through Octokit (`@octokit/rest`), as sleds uses it: JSON, a Bearer token, the documented headers (a request without User-Agent
 * is refused), and the rate limits honoured. A 403/429 that is a rate limit (Retry-After; or x-ratelimit-remaining 0
 * with x-ratelimit-reset; or "secondary rate limit", 60 s) blocks that resource (core or search) until then: a
 * short wait is slept through (the injected sleep) and the request tried once more, a longer one fails at once and
 * every request before that time fails without being sent. Time comes from the injected clock.
 *
 * Not @octokit/plugin-throttling: it waits out limits on its own timers and Date.now() (the clock here is injected),
 * does not count a 429 with Retry-After and no "secondary" message as a limit, and paces every process-wide write
 * (3 s between issue comments): measured, an intake of 150 issues went from seconds to minutes.
 */

export const DEFAULT_GITHUB_API = DEFAULT_UPSTREAMS.github;
/** Where a wrong API URL is fixed, for the error lines. */
const API_URL_SETTING = 'upstreams.github in config.yml';
export const GITHUB_API_VERSION = '2022-11-28';
/** A wait longer than this is not slept through: the caller gets the line and tries on its next round. */
export const DEFAULT_MAX_SLEEP_MS = 60_000;
/** No Retry-After and no reset: GitHub says wait at least a minute. */
const SECONDARY_FALLBACK_MS = 60_000;
const DEFAULT_TIMEOUT_MS = 15_000;

/** GitHub's own buckets (`x-ratelimit-resource`): a GraphQL limit does not hold back REST calls, nor the other way. */
export type GithubResource = 'core' | 'search' | 'graphql';

export interface GithubClientDeps {
  token: () => Promise<TokenAnswer>;
  clock: Clock;
  /** Waits out a short rate limit; tests pass one that moves their clock and returns at once. */
  sleep?: (ms: number) => Promise<void>;
  /** config.yml's upstreams.github; default https://api.github.com. */
  baseUrl?: string;
  /** Octokit's fetch (default: the global one). */
  fetchImpl?: typeof fetch;
  userAgent?: string;
  timeoutMs?: number;
  maxSleepMs?: number;
  log?: Log;
}

export type GithubResult<T> =
  /** `next`: the following page's URL (the `Link` header's rel="next"), null on the last page or an unpaged answer. */
  | { ok: true; status: number; data: T; next: string | null }
  /** `error` is one line to show; `status` is null when nothing came back; `retryAt` when rate-limited. */
  | { ok: false; status: number | null; error: string; retryAt?: number };

export interface GithubRequest<T> {
  query?: Record<string, string | number>;
  body?: unknown;
  /** What a good answer must look like (unknown fields tolerated). */
  schema: z.ZodType<T>;
  /** What the request is for, in the error line: "listing the pull requests of acme/shop". */
  what: string;
}

const realSleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export function githubApiUrl(deps: Pick<GithubClientDeps, 'baseUrl'>): string {
  return (deps.baseUrl ?? DEFAULT_GITHUB_API).trim().replace(/\/+$/, '');
}

/** The host `gh auth token --hostname` is asked for: null for github.com (and for a test's 127.0.0.1). */
export function ghHostnameFor(apiUrl: string): string | null {
  const host = new URL(apiUrl).hostname;
  if (host === 'api.github.com' || host === '127.0.0.1' || host === 'localhost') return null;
  return host;
}

function resourceOf(path: string): GithubResource {
  if (path === '/graphql') return 'graphql';
  return path.startsWith('/search/') ? 'search' : 'core';
}

function scrub(text: string, token: string): string {
  return token ? text.split(token).join('[token]') : text;
}

function seconds(ms: number): string {
  return `${Math.max(1, Math.round(ms / 1000))} s`;
}

const noop = (): void => undefined;

export class GithubClient {
  readonly apiUrl: string;
  private readonly blocked: Record<GithubResource, number> = { core: 0, search: 0, graphql: 0 };
  private cachedToken: TokenAnswer | null = null;
  private octokitLoad: Promise<Octokit> | null = null;

  constructor(private readonly deps: GithubClientDeps) {
    this.apiUrl = githubApiUrl(deps);
  }

  /** Octokit, loaded on the first request rather than when musher starts (~50 ms to load). */
  private octokit(): Promise<Octokit> {
    this.octokitLoad ??= import('@octokit/rest').then(
      ({ Octokit }) =>
        new Octokit({
          baseUrl: this.apiUrl,
          userAgent: this.deps.userAgent ?? 'sleds',
          request: this.deps.fetchImpl ? { fetch: this.deps.fetchImpl } : {},
          // Octokit's own lines (one per failed request) stay out of the musher log: each caller reports its failure
          // in its own words; a deprecation warning is worth a line.
          log: { debug: noop, info: noop, warn: (m: string) => this.deps.log?.warn(`github: ${m}`), error: noop },
        }),
    );
    return this.octokitLoad;
  }

  /** Until when a resource is rate-limited (epoch ms), or null. */
  blockedUntil(resource: GithubResource): number | null {
    const at = this.blocked[resource];
    return at > this.deps.clock.now() ? at : null;
  }

  private async token(): Promise<TokenAnswer> {
    if (this.cachedToken?.ok) return this.cachedToken;
    this.cachedToken = await this.deps.token();
    return this.cachedToken;
  }

  /**
   * `path` is a REST path ("/repos/o/r/pulls"), or a page URL GitHub gave in a `Link` header — followed only when it
   * is under this client's API URL, so the token never goes anywhere else.
   */
  async request<T>(method: 'GET' | 'POST' | 'PATCH', pathOrUrl: string, req: GithubRequest<T>): Promise<GithubResult<T>> {
    const path = this.pathOf(pathOrUrl);
    if (path === null) return { ok: false, status: null, error: `GitHub's next page while ${req.what} points outside ${this.apiUrl} — not followed` };
    const resource = resourceOf(path);
    const limited = this.blockedUntil(resource);
    if (limited !== null) {
      return { ok: false, status: null, error: `GitHub's ${resource} rate limit holds until ${new Date(limited).toISOString()} — not ${req.what} before then`, retryAt: limited };
    }
    const tok = await this.token();
    if (!tok.ok) return { ok: false, status: null, error: tok.error };
    const url = new URL(path === pathOrUrl ? this.urlOf(path) : pathOrUrl);
    for (const [k, v] of Object.entries(req.query ?? {})) url.searchParams.set(k, String(v));
    const octokit = await this.octokit();
    for (let attempt = 0; ; attempt++) {
      let res: { status: number; headers: Record<string, string | number | undefined>; data: unknown };
      try {
        res = await octokit.request({
          method,
          // The whole URL, query included: Octokit sends it as it is (a Link page verbatim) and adds no parameters.
          url: url.toString(),
          headers: {
            accept: 'application/vnd.github+json',
            authorization: `Bearer ${tok.token}`,
            'x-github-api-version': GITHUB_API_VERSION,
            // Octokit would append its own names to the agent; GitHub asks for the application's.
            'user-agent': this.deps.userAgent ?? 'sleds',
            ...(req.body !== undefined ? { 'content-type': 'application/json; charset=utf-8' } : {}),
          },
          ...(req.body !== undefined ? { data: req.body } : {}),
          request: { signal: AbortSignal.timeout(this.deps.timeoutMs ?? DEFAULT_TIMEOUT_MS), redirect: 'follow' },
        });
      } catch (e) {
        // Octokit throws every answer that is not a 2xx (its RequestError, with the response); without one, nothing came back.
        const answered = (e as { response?: { status: number; headers: Record<string, string | number | undefined>; data: unknown } }).response;
        if (!answered) {
          // Octokit's error carries fetch's, whose cause has the system's code.
          const err = ((e as { cause?: unknown }).cause ?? e) as Error & { cause?: { code?: string } };
          const why = err.name === 'TimeoutError' ? 'no answer in time' : scrub(err.cause?.code ?? (e as Error).message, tok.token);
          return { ok: false, status: null, error: `GitHub could not be reached at ${url.host} while ${req.what} (${why}) — check the network or ${API_URL_SETTING}` };
        }
        res = { status: answered.status, headers: answered.headers, data: answered.data };
      }
      const headers = (name: string): string | null => {
        const v = res.headers[name];
        return v === undefined ? null : String(v);
      };
      const now = this.deps.clock.now();
      const wait = this.rateLimitWait(res.status, headers, res.data, now);
      if (wait !== null) {
        const until = now + wait;
        this.blocked[resource] = Math.max(this.blocked[resource], until);
        if (attempt === 0 && wait <= (this.deps.maxSleepMs ?? DEFAULT_MAX_SLEEP_MS)) {
          this.deps.log?.info(`github: rate-limited (${res.status}) while ${req.what}; waiting ${seconds(wait)}`);
          await (this.deps.sleep ?? realSleep)(wait);
          continue;
        }
        return { ok: false, status: res.status, error: `GitHub rate-limited sleds (${res.status}) while ${req.what} — next try after ${new Date(until).toISOString()} (in ${seconds(wait)})`, retryAt: until };
      }
      // A good answer that used the last request of the hour: nothing more until the reset.
      if (headers('x-ratelimit-remaining') === '0') {
        const reset = Number(headers('x-ratelimit-reset'));
        if (reset > 0) this.blocked[resource] = Math.max(this.blocked[resource], reset * 1000);
      }
      if (res.status === 401) {
        this.cachedToken = null; // a new token (set-token, gh auth login) is read on the next request
        return { ok: false, status: 401, error: `GitHub refused the token (401) while ${req.what} — set a new one with 'sleds github set-token' or 'gh auth login'` };
      }
      if (res.status < 200 || res.status >= 300) {
        const message = messageOf(res.data);
        return { ok: false, status: res.status, error: `GitHub answered ${res.status} while ${req.what}${message ? `: ${scrub(message, tok.token)}` : ''}` };
      }
      // Octokit parses a JSON answer; anything else comes as its text (or bytes); no body at all as undefined or ''.
      if (res.data instanceof ArrayBuffer || (typeof res.data === 'string' && res.data !== '')) {
        return { ok: false, status: res.status, error: `GitHub answered ${res.status} with something that is not JSON while ${req.what} — is ${API_URL_SETTING} right?` };
      }
      const parsed = req.schema.safeParse(res.data === '' || res.data === undefined ? null : res.data);
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        return { ok: false, status: res.status, error: `GitHub's answer to ${req.what} is not what sleds expects (${issue ? `${issue.path.join('.') || 'body'}: ${issue.message}` : 'unknown shape'})` };
      }
      return { ok: true, status: res.status, data: parsed.data, next: linkOf(headers('link')) };
    }
  }

  /** GraphQL lives at api.github.com/graphql, and on GitHub Enterprise Server at /api/graphql beside REST's /api/v3. */
  private urlOf(path: string): string {
    if (path === '/graphql' && /\/api\/v3$/.test(this.apiUrl)) return `${this.apiUrl.replace(/\/v3$/, '')}/graphql`;
    return `${this.apiUrl}${path}`;
  }

  /** The REST path of a path or of a URL under the API URL; null for a URL elsewhere. */
  private pathOf(pathOrUrl: string): string | null {
    if (pathOrUrl.startsWith('/')) return pathOrUrl;
    let u: URL;
    try {
      u = new URL(pathOrUrl);
    } catch {
      // Not a URL: not a REST path of ours.
      return null;
    }
    const api = new URL(this.apiUrl);
    const prefix = api.pathname.replace(/\/+$/, '');
    if (u.origin !== api.origin || !u.pathname.startsWith(`${prefix}/`)) return null;
    return u.pathname.slice(prefix.length);
  }

  /** How long a 403/429 asks to wait, or null when it is not a rate limit (a 403 for permissions is an error). */
  private rateLimitWait(status: number, header: (name: string) => string | null, data: unknown, now: number): number | null {
    if (status !== 403 && status !== 429) return null;
    const after = retryAfterMs(header('retry-after'), now);
    if (after !== null) return after;
    if (header('x-ratelimit-remaining') === '0') {
      const reset = Number(header('x-ratelimit-reset'));
      if (reset > 0) return Math.max(1000, reset * 1000 - now);
    }
    if (status === 429 || /\bsecondary rate\b/i.test(messageOf(data) ?? '')) return SECONDARY_FALLBACK_MS;
    return null;
  }
}

/** GitHub's `message` of an error answer (Octokit has parsed its JSON), on one line. */
/**
 * GitHub's message, with what its `errors` say (a 422's "Validation Failed" says nothing alone: "A pull request
 * already exists for …" and "head invalid" are there).
 */
function messageOf(data: unknown): string | null {
  if (typeof data !== 'object' || data === null) return null;
  const { message, errors } = data as { message?: unknown; errors?: unknown };
  if (typeof message !== 'string') return null;
  const details = (Array.isArray(errors) ? errors : [])
    .map((e) => {
      if (typeof e === 'string') return e;
      if (typeof e !== 'object' || e === null) return '';
      const { message: m, field, code } = e as { message?: unknown; field?: unknown; code?: unknown };
      if (typeof m === 'string' && m !== '') return m;
      return [field, code].filter((x) => typeof x === 'string' && x !== '').join(' ');
    })
    .filter((d) => d !== '');
  const text = details.length > 0 ? `${message} (${details.join('; ')})` : message;
  return text.replace(/\s+/g, ' ').slice(0, 300);
}
