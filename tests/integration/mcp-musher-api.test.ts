/**
 * The MCP server's way to musher. It starts musher only when nothing listens on the socket; a musher that is there
 * but slow is not started twice, and the request (a hand-off, a dispatch) is not sent again.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { MusherAway, musherApi } from '../../mcp-server/musher-api.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function silentMusher(): Promise<{ socket: string; connections: () => number }> {
  const dir = mkdtempSync(join(tmpdir(), 'sleds-mcp-api-'));
  const socket = join(dir, 'musher.sock');
  const held: Socket[] = [];
  let connections = 0;
  const server: Server = createServer((s) => {
    connections++;
    held.push(s); // accepts, reads, never answers
  });
  await new Promise<void>((r) => server.listen(socket, r));
  cleanups.push(async () => {
    for (const s of held) s.destroy();
    await new Promise((r) => server.close(r));
    rmSync(dir, { recursive: true, force: true });
  });
  return { socket, connections: () => connections };
}

describe('the MCP server asking musher', () => {
  it('a musher that is there but does not answer is reported, not started again, and the request is not re-sent', async () => {
    const m = await silentMusher();
    const api = musherApi({ socketPath: m.socket, cliMain: join(tmpdir(), 'no-such-sleds', 'main.js'), autostart: true, timeoutMs: 200, startWaitMs: 1_000 });
    const err = await api.call('handOff', { body: { sessionId: 's1', to: 'dana' } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MusherAway);
    expect((err as Error).message).toMatch(/^sleds: musher did not answer \(no answer within 200 ms\)/);
    expect(m.connections()).toBe(1);
  });
});
