import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { chmodSync, statSync, unlinkSync } from 'node:fs';
import type { Log } from './log.js';
import { HANDLERS, type HandlerContext } from './api/handlers.js';
import { matchRoute } from './api/match.js';
import type { ApiServices } from './api/services.js';

/** musher's API: HTTP/1.1 + JSON over a Unix socket that only its user can open (0600). */
const MAX_BODY_BYTES = 64 * 1024 * 1024;

const bodies = new WeakMap<IncomingMessage, Promise<string>>();

/** The request's body, read once (the server reads every POST whole before routing it; routes get the same text). */
function readBody(req: IncomingMessage): Promise<string> {
  let body = bodies.get(req);
  if (!body) {
    body = readWhole(req);
    bodies.set(req, body);
  }
  return body;
}

function readWhole(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY_BYTES) {
        reject(new Error(`body over ${MAX_BODY_BYTES} bytes`));
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function send(res: ServerResponse, status: number, body: string, type = 'application/json'): void {
  const buf = Buffer.from(body);
  res.writeHead(status, { 'content-type': type, 'content-length': buf.length });
  res.end(buf);
}

export interface MusherServer {
  server: Server;
  close(): Promise<void>;
}

function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

export function startServer(services: ApiServices, socketPath: string, log: Log, onShutdown: () => void): Promise<MusherServer> {
  const context: HandlerContext = { ...services, shutdown: onShutdown };
  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://musher');
    try {
      // Every POST is read whole before it is answered, used or not: an answer that closed the connection while the
      // client still wrote its body would fail the client's write (EPIPE, seen as "musher is not running").
      const body = req.method === 'POST' ? await readBody(req) : '';
      // The route table (protocol/routes.ts) says which route this is; HANDLERS (musher/api/handlers.ts) answers it.
      const route = matchRoute(req.method ?? '', url.pathname);
      if (!route) return send(res, 404, JSON.stringify({ error: `no route ${req.method} ${url.pathname}` }));
      const answer = await HANDLERS[route.name](context, {
        params: route.params,
        rawParams: route.rawParams,
        query: url.searchParams,
        body,
        header: (name) => header(req, name),
      });
      if ('text' in answer) send(res, answer.status, answer.text, 'text/plain; charset=utf-8');
      else send(res, answer.status, JSON.stringify(answer.json));
      const after = answer.after;
      if (after?.on === 'finish') res.once('finish', after.run);
      else if (after) setImmediate(after.run);
    } catch (e) {
      log.error(`api ${req.method} ${url.pathname}: ${(e as Error).message}`);
      if (!res.headersSent) send(res, 500, JSON.stringify({ error: (e as Error).message }));
    }
  });
  server.keepAliveTimeout = 1000;
  return new Promise((resolve, reject) => {
    // The socket is born 0600: no window in which another user could connect.
    const previous = process.umask(0o177);
    server.once('error', (e) => {
      process.umask(previous);
      reject(e);
    });
    server.listen(socketPath, () => {
      process.umask(previous);
      chmodSync(socketPath, 0o600);
      const ours = statSync(socketPath).ino;
      resolve({
        server,
        close: () =>
          new Promise<void>((r) => {
            server.close(() => {
              // Remove the socket file only if it is still ours: a musher started after us may own the path now.
              try {
                if (statSync(socketPath).ino === ours) unlinkSync(socketPath);
              } catch {
                // already gone
              }
              r();
            });
            server.closeAllConnections();
          }),
      });
    });
  });
}
