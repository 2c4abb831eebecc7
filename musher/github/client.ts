import type { z } from 'zod';
import { linkOf } from '../../core/github/link.js';
import { retryAfterMs } from '../../core/usage-endpoint.js';
import type { Clock } from '../clock.js';
import type { Log } from '../log.js';
import type { TokenAnswer } from './token.js';
import { DEFAULT_UPSTREAMS } from '../config/schema.js';

/**
 * GitHub's REST API, as sleds uses it: JSON, a Bearer token, the documented headers (a request without User-Agent
 * is refused), and the rate limits honoured. A 403/429 that is a rate limit (Retry-After; or x-ratelimit-remaining 0
 * with x-ratelimit-reset; or "secondary rate limit", 60 s) blocks that resource (core or search) until then: a
 * short wait is slept through (the injected sleep) and the request tried once more, a longer one fails at once and
 * every request before that time fails without being sent. Time comes from the injected clock.
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

export type GithubResource = 'core' | 'search';

export interface GithubClientDeps {
  token: () => Promise<TokenAnswer>;
  clock: Clock;
  /** Waits out a short rate limit; tests pass one that moves their clock and returns at once. */
  sleep?: (ms: number) => Promise<void>;
  /** config.yml's upstreams.github; default https://api.github.com. */
  baseUrl?: string;
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
  return path.startsWith('/search/') ? 'search' : 'core';
}

function scrub(text: string, token: string): string {
  return token ? text.split(token).join('[token]') : text;
}

function seconds(ms: number): string {
  return `${Math.max(1, Math.round(ms / 1000))} s`;
}

export class GithubClient {
  readonly apiUrl: string;
  private readonly blocked: Record<GithubResource, number> = { core: 0, search: 0 };
  private cachedToken: TokenAnswer | null = null;

  constructor(private readonly deps: GithubClientDeps) {
    this.apiUrl = githubApiUrl(deps);
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
    const url = new URL(path === pathOrUrl ? `${this.apiUrl}${path}` : pathOrUrl);
    for (const [k, v] of Object.entries(req.query ?? {})) url.searchParams.set(k, String(v));
    const fetchImpl = this.deps.fetchImpl ?? fetch;
    for (let attempt = 0; ; attempt++) {
      let res: Response;
      try {
        res = await fetchImpl(url, {
          method,
          headers: {
            accept: 'application/vnd.github+json',
            authorization: `Bearer ${tok.token}`,
            'x-github-api-version': GITHUB_API_VERSION,
            'user-agent': this.deps.userAgent ?? 'sleds',
            ...(req.body !== undefined ? { 'content-type': 'application/json; charset=utf-8' } : {}),
          },
          body: req.body !== undefined ? JSON.stringify(req.body) : undefined,
          redirect: 'follow',
          signal: AbortSignal.timeout(this.deps.timeoutMs ?? DEFAULT_TIMEOUT_MS),
        });
      } catch (e) {
        const err = e as Error & { cause?: { code?: string } };
        const why = err.name === 'TimeoutError' ? 'no answer in time' : scrub(err.cause?.code ?? err.message, tok.token);
        return { ok: false, status: null, error: `GitHub could not be reached at ${url.host} while ${req.what} (${why}) — check the network or ${API_URL_SETTING}` };
      }
      const text = await res.text().catch(() => '');
      const now = this.deps.clock.now();
      const wait = this.rateLimitWait(res, text, now);
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
      if (res.headers.get('x-ratelimit-remaining') === '0') {
        const reset = Number(res.headers.get('x-ratelimit-reset'));
        if (reset > 0) this.blocked[resource] = Math.max(this.blocked[resource], reset * 1000);
      }
      if (res.status === 401) {
        this.cachedToken = null; // a new token (set-token, gh auth login) is read on the next request
        return { ok: false, status: 401, error: `GitHub refused the token (401) while ${req.what} — set a new one with 'sleds github set-token' or 'gh auth login'` };
      }
      if (res.status < 200 || res.status >= 300) {
        return { ok: false, status: res.status, error: `GitHub answered ${res.status} while ${req.what}${messageOf(text) ? `: ${scrub(messageOf(text)!, tok.token)}` : ''}` };
      }
      let json: unknown;
      try {
        json = text === '' ? null : JSON.parse(text);
      } catch {
        return { ok: false, status: res.status, error: `GitHub answered ${res.status} with something that is not JSON while ${req.what} — is ${API_URL_SETTING} right?` };
      }
      const parsed = req.schema.safeParse(json);
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        return { ok: false, status: res.status, error: `GitHub's answer to ${req.what} is not what sleds expects (${issue ? `${issue.path.join('.') || 'body'}: ${issue.message}` : 'unknown shape'})` };
      }
      return { ok: true, status: res.status, data: parsed.data, next: linkOf(res.headers.get('link')) };
    }
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
  private rateLimitWait(res: Response, text: string, now: number): number | null {
    if (res.status !== 403 && res.status !== 429) return null;
    const after = retryAfterMs(res.headers.get('retry-after'), now);
    if (after !== null) return after;
    if (res.headers.get('x-ratelimit-remaining') === '0') {
      const reset = Number(res.headers.get('x-ratelimit-reset'));
      if (reset > 0) return Math.max(1000, reset * 1000 - now);
    }
    if (res.status === 429 || /\bsecondary rate\b/i.test(messageOf(text) ?? '')) return SECONDARY_FALLBACK_MS;
    return null;
  }
}

function messageOf(text: string): string | null {
  try {
    const m = (JSON.parse(text) as { message?: unknown }).message;
    return typeof m === 'string' ? m.replace(/\s+/g, ' ').slice(0, 200) : null;
  } catch {
    // An answer that is not JSON has no message to quote; the status says what happened.
    return null;
  }
}
