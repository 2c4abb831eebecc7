/**
 * The HTTP plumbing the fake model APIs (fake-anthropic.ts, fake-openai.ts) share: a server on 127.0.0.1 that reads
 * each request's body whole, records it (JSON parsed when it parses) before the fake's own handler answers it, and
 * closes at once. What a fake answers — its routes, wire format and error envelope — stays in the fake.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';

import { waitFor } from './wait.js';

export interface RecordedRequest {
  /** 0-based order of arrival. */
  index: number;
  method: string;
  /** Path including the query string, e.g. "/v1/messages?beta=true". */
  path: string;
  /** Path without the query string, e.g. "/v1/responses". */
  pathname: string;
  query: Record<string, string>;
  headers: http.IncomingHttpHeaders;
  rawBody: string;
  /** Parsed JSON body, or undefined when the body is empty or not JSON. */
  body: any;
  receivedAt: number;
  /** HTTP status the fake answered with. */
  status?: number;
  /** The request-id header the fake sent back. */
  requestId?: string;
}

export interface RecordingServerOptions<R extends RecordedRequest> {
  /** Port to bind on 127.0.0.1; 0 (any free port) when not given. */
  port?: number;
  /** Answers one recorded request (and sets its status). */
  handle(rec: R, res: http.ServerResponse): void;
  /** What a 500 carries when `handle` throws (the fake's own error envelope). */
  serverError(rec: R, err: unknown): { headers: Record<string, string>; body: string };
  /** Answers an HTTP upgrade (already recorded, with no body) on the raw socket. */
  upgrade?(rec: R, socket: Duplex): void;
}

export interface RecordingServer<R extends RecordedRequest> {
  /** e.g. "http://127.0.0.1:43121". */
  origin: string;
  port: number;
  /** Every request received, in order. */
  requests: R[];
  /** The requests of one method and path, in order. */
  requestsTo(method: string, pathname: string): R[];
  /** Resolves once at least `n` requests of `method pathname` have been answered. */
  waitForAnswered(method: string, pathname: string, n: number, timeoutMs: number): Promise<R[]>;
  close(): Promise<void>;
}

function recordOf<R extends RecordedRequest>(req: http.IncomingMessage, index: number, rawBody: string): R {
  let body: any;
  if (rawBody.length > 0) {
    try {
      body = JSON.parse(rawBody);
    } catch {
      body = undefined;
    }
  }
  const url = new URL(req.url ?? '/', 'http://127.0.0.1');
  const rec: RecordedRequest = {
    index,
    method: req.method ?? 'GET',
    path: req.url ?? '/',
    pathname: url.pathname,
    query: Object.fromEntries(url.searchParams),
    headers: req.headers,
    rawBody,
    body,
    receivedAt: Date.now(),
  };
  return rec as R;
}

export async function startRecordingServer<R extends RecordedRequest>(opts: RecordingServerOptions<R>): Promise<RecordingServer<R>> {
  const requests: R[] = [];

  const server = http.createServer((req, res) => {
    const bodyChunks: Buffer[] = [];
    req.on('data', (c: Buffer) => bodyChunks.push(c));
    req.on('end', () => {
      const rec = recordOf<R>(req, requests.length, Buffer.concat(bodyChunks).toString('utf8'));
      requests.push(rec);
      try {
        opts.handle(rec, res);
      } catch (err) {
        const { headers, body } = opts.serverError(rec, err);
        rec.status = 500;
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json', ...headers });
        res.end(body);
      }
    });
    // A client that goes away mid-stream is not an error for the fake.
    res.on('error', () => undefined);
  });
  const { upgrade } = opts;
  if (upgrade) {
    server.on('upgrade', (req, socket) => {
      const rec = recordOf<R>(req, requests.length, '');
      requests.push(rec);
      upgrade(rec, socket);
    });
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const requestsTo = (method: string, pathname: string) => requests.filter((r) => r.method === method && r.pathname === pathname);

  return {
    origin: `http://127.0.0.1:${port}`,
    port,
    requests,
    requestsTo,
    waitForAnswered(method, pathname, n, timeoutMs) {
      return waitFor(
        () => {
          const done = requestsTo(method, pathname).filter((r) => r.status !== undefined);
          return done.length >= n ? done : undefined;
        },
        {
          timeoutMs,
          description: `${n} ${method} ${pathname} request(s)`,
          onTimeout: () => `requests so far: ${requests.map((r) => `${r.method} ${r.path} -> ${r.status}`).join(', ') || '(none)'}`,
        },
      );
    },
    close() {
      return new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}

/** `text` in pieces of `size` characters (one empty piece for an empty text), as a stream sends its deltas. */
export function chunks(text: string, size: number): string[] {
  if (text.length === 0) return [''];
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}
