import { connect } from 'node:net';

/**
 * A minimal HTTP/1.1 client over musher's Unix socket, for the thin clients. node:http would do, but this keeps
 * the hook's start-up to node:net alone (hooks run on every prompt and tool call).
 */
export interface MusherResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export class MusherUnreachable extends Error {
  constructor(readonly reason: string) {
    super(`musher unreachable: ${reason}`);
  }
}

export function requestMusher(
  socketPath: string,
  method: string,
  path: string,
  body: Buffer | string | null,
  headers: Record<string, string>,
  timeoutMs: number,
): Promise<MusherResponse> {
  return new Promise((resolve, reject) => {
    const payload = body === null ? Buffer.alloc(0) : Buffer.isBuffer(body) ? body : Buffer.from(body);
    let head = `${method} ${path} HTTP/1.1\r\nHost: musher\r\nConnection: close\r\nContent-Length: ${payload.length}\r\n`;
    for (const [k, v] of Object.entries(headers)) head += `${k}: ${v}\r\n`;
    head += '\r\n';
    const chunks: Buffer[] = [];
    let settled = false;
    const socket = connect(socketPath);
    const finish = (err: Error | null, res?: MusherResponse): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      if (err) reject(err);
      else resolve(res!);
    };
    const timer = setTimeout(() => finish(new MusherUnreachable(`no answer within ${timeoutMs} ms`)), timeoutMs);
    socket.on('connect', () => {
      socket.write(head);
      if (payload.length) socket.write(payload);
    });
    socket.on('data', (c: Buffer) => {
      chunks.push(c);
      const parsed = tryParse(Buffer.concat(chunks));
      if (parsed) finish(null, parsed);
    });
    socket.on('end', () => {
      const parsed = tryParse(Buffer.concat(chunks), true);
      if (parsed) finish(null, parsed);
      else finish(new MusherUnreachable('connection closed before a full answer'));
    });
    socket.on('error', (e: NodeJS.ErrnoException) => finish(new MusherUnreachable(e.code ?? e.message)));
  });
}

function tryParse(buf: Buffer, ended = false): MusherResponse | null {
  const headEnd = buf.indexOf('\r\n\r\n');
  if (headEnd < 0) return null;
  const lines = buf.subarray(0, headEnd).toString('latin1').split('\r\n');
  const status = Number(lines[0]?.split(' ')[1]);
  const headers: Record<string, string> = {};
  for (const line of lines.slice(1)) {
    const i = line.indexOf(':');
    if (i > 0) headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
  }
  const rest = buf.subarray(headEnd + 4);
  const length = headers['content-length'];
  if (length !== undefined) {
    if (rest.length < Number(length)) return null;
    return { status, headers, body: rest.subarray(0, Number(length)).toString('utf8') };
  }
  if (headers['transfer-encoding']?.includes('chunked')) {
    const body = decodeChunked(rest);
    if (body === null) return ended ? { status, headers, body: '' } : null;
    return { status, headers, body };
  }
  return ended ? { status, headers, body: rest.toString('utf8') } : null;
}

function decodeChunked(buf: Buffer): string | null {
  const out: Buffer[] = [];
  let pos = 0;
  for (;;) {
    const lineEnd = buf.indexOf('\r\n', pos);
    if (lineEnd < 0) return null;
    const size = parseInt(buf.subarray(pos, lineEnd).toString('latin1'), 16);
    if (Number.isNaN(size)) return null;
    if (size === 0) return Buffer.concat(out).toString('utf8');
    const start = lineEnd + 2;
    if (buf.length < start + size + 2) return null;
    out.push(buf.subarray(start, start + size));
    pos = start + size + 2;
  }
}
