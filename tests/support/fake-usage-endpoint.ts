import { readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

/**
 * A fake of Claude's usage endpoint on 127.0.0.1 (port 0), speaking the real wire: `GET /api/oauth/usage` answers
 * the JSON shape of the real one; anything else is a 404 and is recorded, so a test can assert nothing else was
 * asked. Scriptable per request: JSON, 429 with or without Retry-After, HTML, 401/403, any status, or no answer.
 */

export const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'usage-endpoint');

export function fixtureText(name: string): string {
  return readFileSync(join(FIXTURES, name), 'utf8');
}

export function fixtureJson(name: string): Record<string, unknown> {
  return JSON.parse(fixtureText(name)) as Record<string, unknown>;
}

export type FakeAnswer =
  | { kind: 'json'; body?: unknown; status?: number }
  | { kind: '429'; retryAfter?: string | null }
  | { kind: 'html'; status?: number; body?: string }
  | { kind: 'unauthorized'; status?: 401 | 403 }
  | { kind: 'status'; status: number; body?: string; headers?: Record<string, string> }
  /** Accepts the request and never answers (until the server closes). */
  | { kind: 'hang' };

export interface FakeRequest {
  /** The test clock's time when the request arrived (or Date.now() without one). */
  at: number;
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
}

export interface FakeUsageEndpoint {
  /** The base URL (no path): what config.yml's upstreams.claudeUsage or the poller's baseUrl takes. */
  baseUrl: string;
  requests: FakeRequest[];
  /** Queue answers for the next requests, in order. */
  script(...answers: FakeAnswer[]): void;
  /** The answer once the queue is empty (default: the `limits-2026-09.json` fixture). */
  otherwise(answer: FakeAnswer): void;
  close(): Promise<void>;
}

export async function startFakeUsageEndpoint(opts: { now?: () => number } = {}): Promise<FakeUsageEndpoint> {
  const now = opts.now ?? Date.now;
  const requests: FakeRequest[] = [];
  const queue: FakeAnswer[] = [];
  let fallback: FakeAnswer = { kind: 'json', body: fixtureJson('limits-2026-09.json') };
  const hanging = new Set<import('node:http').ServerResponse>();

  const server: Server = createServer((req, res) => {
    const path = req.url ?? '';
    requests.push({ at: now(), method: req.method ?? '', path, headers: req.headers });
    req.resume();
    if (req.method !== 'GET' || path.split('?')[0] !== '/api/oauth/usage') {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ type: 'error', error: { type: 'not_found_error', message: 'Not Found' } }));
      return;
    }
    const answer = queue.shift() ?? fallback;
    switch (answer.kind) {
      case 'json':
        res.writeHead(answer.status ?? 200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(answer.body ?? fixtureJson('limits-2026-09.json')));
        return;
      case '429': {
        const headers: Record<string, string> = { 'content-type': 'application/json' };
        if (answer.retryAfter) headers['retry-after'] = answer.retryAfter;
        res.writeHead(429, headers);
        res.end(JSON.stringify({ type: 'error', error: { type: 'rate_limit_error', message: 'Rate limited. Please try again later.' } }));
        return;
      }
      case 'html':
        res.writeHead(answer.status ?? 200, { 'content-type': 'text/html; charset=utf-8' });
        res.end(answer.body ?? fixtureText('proxy-page.html'));
        return;
      case 'unauthorized':
        res.writeHead(answer.status ?? 401, { 'content-type': 'application/json' });
        res.end(fixtureText('error-401.json'));
        return;
      case 'status':
        res.writeHead(answer.status, { 'content-type': 'text/plain', ...answer.headers });
        res.end(answer.body ?? '');
        return;
      case 'hang':
        hanging.add(res);
        return;
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    requests,
    script: (...answers) => void queue.push(...answers),
    otherwise: (answer) => {
      fallback = answer;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of hanging) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * Time the test drives: a clock and setTimeout/clearTimeout that fire only when `advance` moves past them. Pair with
 * the poller's `whenIdle()` so the async poll a timer starts has finished before the next step.
 */
export interface ManualTime {
  clock: { now(): number };
  timers: { setTimeout(fn: () => void, ms: number): unknown; clearTimeout(handle: unknown): void };
  /** Moves time forward, firing due timers in order, awaiting `settle` after each one. */
  advance(ms: number, settle?: () => Promise<void>): Promise<void>;
  /** When the earliest pending timer fires, or null. */
  nextAt(): number | null;
  set(ms: number): void;
}

export function manualTime(start: number): ManualTime {
  let now = start;
  let seq = 0;
  const pending = new Map<number, { at: number; fn: () => void; order: number }>();
  const due = (): [number, { at: number; fn: () => void; order: number }] | null => {
    let best: [number, { at: number; fn: () => void; order: number }] | null = null;
    for (const entry of pending) if (!best || entry[1].at < best[1].at || (entry[1].at === best[1].at && entry[1].order < best[1].order)) best = entry;
    return best;
  };
  return {
    clock: { now: () => now },
    timers: {
      setTimeout: (fn, ms) => {
        const id = ++seq;
        pending.set(id, { at: now + Math.max(0, ms), fn, order: id });
        return id;
      },
      clearTimeout: (h) => void pending.delete(h as number),
    },
    async advance(ms, settle) {
      const end = now + ms;
      for (;;) {
        const next = due();
        if (!next || next[1].at > end) break;
        now = Math.max(now, next[1].at);
        pending.delete(next[0]);
        next[1].fn();
        if (settle) await settle();
      }
      now = end;
      if (settle) await settle();
    },
    nextAt: () => due()?.[1].at ?? null,
    set: (ms) => {
      now = ms;
    },
  };
}
