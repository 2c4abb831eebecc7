/**
 * The gateway as musher runs it (the built dist/): the key set from stdin into the 0600 secrets file, the gateway
 * started with musher, tokens minted over the musher socket, the spend in `sleds status --json`, and the key in
 * no log, no --json output and no file under SLEDS_HOME but the secrets file.
 */
import http from 'node:http';
import net from 'node:net';
import { createHash } from 'node:crypto';
import { chmodSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { requestMusher } from '../../hooks/musher-client.js';
import { startFakeAnthropic } from '../e2e/harness/fake-anthropic.js';
import { writeSledsConfig } from '../support/sleds-config.js';
import { disposeWorld, makeWorld, sleds, startMusher, status, stopMusher, waitFor, type SledsWorld } from '../support/sleds-env.js';

const KEY = 'sk-ant-api03-PLATFORMKEY-musher-test-9f8e7d6c5b4a';
const FINGERPRINT = createHash('sha256').update(KEY).digest('hex').slice(0, 8);

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

async function setUp(extraEnv: NodeJS.ProcessEnv = {}) {
  const fake = await startFakeAnthropic({ reply: 'metered', usage: { input_tokens: 2000, output_tokens: 300, cache_read_input_tokens: 10_000, cache_creation_input_tokens: 500 } });
  cleanups.push(() => fake.close());
  const world = makeWorld({ SLEDS_KEYRING: 'file', SLEDS_SEAT: 'dana', ...extraEnv });
  writeSledsConfig(world, { upstreams: { anthropic: fake.url } });
  cleanups.push(() => disposeWorld(world));
  return { fake, world };
}

async function api(world: SledsWorld, method: string, path: string, body: unknown = null) {
  const r = await requestMusher(world.socket, method, path, body === null ? null : JSON.stringify(body), { 'content-type': 'application/json' }, 5000);
  return { status: r.status, json: JSON.parse(r.body) as Record<string, any> };
}

function callGateway(baseUrl: string, token: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${baseUrl}/v1/messages?beta=true`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': token, 'anthropic-version': '2023-06-01' } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode!, body }));
    });
    req.on('error', reject);
    req.end(JSON.stringify({ model: 'claude-opus-5-5', max_tokens: 100, stream: true, messages: [{ role: 'user', content: 'hi' }] }));
  });
}

/** Every file under `dir` that holds `needle` (binary files such as the SQLite database and its WAL included). */
function filesHolding(dir: string, needle: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    const st = statSync(path);
    if (st.isDirectory()) out.push(...filesHolding(path, needle));
    else if (st.isFile() && readFileSync(path).includes(needle)) out.push(path);
  }
  return out;
}

describe('the gateway in musher', () => {
  it('key from stdin only, the gateway started with musher, spend in sleds status, and the key nowhere but the 0600 file', async () => {
    const { fake, world } = await setUp();
    const secretsFile = join(world.sledsHome, 'config', 'secrets.json');

    const argv = await sleds(world, ['key', 'set', 'anthropic', KEY]);
    expect(argv.code).toBe(2);
    expect(argv.stderr).toMatch(/read from stdin, never from the command line/);
    expect(argv.stderr).not.toContain(KEY);

    const set = await sleds(world, ['key', 'set', 'anthropic'], `${KEY}\n`);
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout).toBe(`anthropic key saved (fingerprint ${FINGERPRINT}) in ${secretsFile}\n`);
    expect(statSync(secretsFile).mode & 0o777).toBe(0o600);
    expect(statSync(join(world.sledsHome, 'config')).mode & 0o777).toBe(0o700);

    const keyStatus = await sleds(world, ['key', 'status', '--json']);
    expect(keyStatus.code).toBe(0);
    expect(JSON.parse(keyStatus.stdout)).toMatchObject({
      backend: 'file',
      location: secretsFile,
      keys: [
        { provider: 'anthropic', configured: true, fingerprint: FINGERPRINT },
        { provider: 'openai', configured: false, fingerprint: null },
      ],
    });

    await startMusher(world);
    const gw = await waitFor('the gateway started with musher', async () => {
      const r = await api(world, 'GET', '/v1/gateway');
      return r.json.running ? r.json : null;
    });
    expect(gw.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);

    const minted = await api(world, 'POST', '/v1/gateway/tokens', { sessionId: 'sess-9', project: 'acme/api' });
    expect(minted.status).toBe(200);
    expect(minted.json.token).toMatch(/^sleds_gw_[A-Za-z0-9_-]{43}$/);
    expect(minted.json.baseUrl).toBe(gw.url);
    expect(minted.json.claudeEnv).toEqual({ ANTHROPIC_BASE_URL: gw.url, ANTHROPIC_AUTH_TOKEN: minted.json.token });

    const r = await callGateway(minted.json.baseUrl, minted.json.token);
    expect(r.status).toBe(200);
    expect(r.body).toContain('event: message_stop');
    expect(fake.messageRequests()[0]!.headers['x-api-key']).toBe(KEY);

    const s = await waitFor('the spend in sleds status', async () => {
      const st = await status(world);
      return st.platformKey.bySeatModel.length > 0 ? st : null;
    });
    // claude-opus-5-5: 2000 × $4/M + 300 × $20/M + 10,000 × $0.20/M + 500 × $5/M
    expect(s.platformKey).toEqual({ todayMicros: 18_500, unpricedRecords: 0, bySeatModel: [{ seat: 'dana', model: 'claude-opus-5-5', costMicros: 18_500, unpricedRecords: 0, records: 1 }] });
    const card = await sleds(world, ['status']);
    expect(card.stdout).toContain('Platform key today: $0.02');

    // The key: in the secrets file and nowhere else — not the log, the database, any --json output.
    const jsonOutputs = [keyStatus.stdout, (await sleds(world, ['status', '--json'])).stdout, (await sleds(world, ['doctor', '--json'])).stdout, JSON.stringify(minted.json)];
    for (const out of jsonOutputs) expect(out).not.toContain(KEY);
    expect(readFileSync(world.logFile, 'utf8')).toContain('gateway: dana acme/api claude-opus-5-5 $0.02');
    expect(filesHolding(world.sledsHome, KEY)).toEqual([secretsFile]);
    // Nor the local token: only its sha256 is kept.
    expect(filesHolding(world.sledsHome, minted.json.token)).toEqual([]);
  });

  it('the key is read per request: removed, the gateway says how to set it; set again, it works without a restart', async () => {
    const { fake, world } = await setUp();
    await sleds(world, ['key', 'set', 'anthropic'], KEY);
    await startMusher(world);
    const minted = await api(world, 'POST', '/v1/gateway/tokens', { sessionId: 's' });
    expect(minted.status).toBe(200);

    const rm = await sleds(world, ['key', 'rm', 'anthropic', '--json']);
    expect(JSON.parse(rm.stdout)).toEqual({ provider: 'anthropic', removed: true });
    const without = await callGateway(minted.json.baseUrl, minted.json.token);
    expect(without.status).toBe(500);
    expect(JSON.parse(without.body).error.message).toMatch(/no anthropic platform key configured — run 'sleds key set anthropic'/);
    expect(fake.messageRequests()).toHaveLength(0);

    await sleds(world, ['key', 'set', 'anthropic'], 'sk-ant-api03-ROTATED-key-0001');
    const again = await callGateway(minted.json.baseUrl, minted.json.token);
    expect(again.status).toBe(200);
    expect(fake.messageRequests()[0]!.headers['x-api-key']).toBe('sk-ant-api03-ROTATED-key-0001');
  });

  it('a secrets file others can read is refused with the chmod that fixes it', async () => {
    const { fake, world } = await setUp();
    await sleds(world, ['key', 'set', 'anthropic'], KEY);
    await startMusher(world);
    const minted = await api(world, 'POST', '/v1/gateway/tokens', { sessionId: 's' });
    const secretsFile = join(world.sledsHome, 'config', 'secrets.json');
    chmodSync(secretsFile, 0o644);

    const st = await sleds(world, ['key', 'status']);
    expect(st.code).toBe(1);
    expect(st.stderr).toBe(`sleds: ${secretsFile} can be read by other users (mode 644) — run 'chmod 600 ${secretsFile}' and try again\n`);
    const r = await callGateway(minted.json.baseUrl, minted.json.token);
    expect(r.status).toBe(500);
    expect(JSON.parse(r.body).error.message).toContain(`chmod 600 ${secretsFile}`);
    expect(fake.messageRequests()).toHaveLength(0);

    chmodSync(secretsFile, 0o600);
    expect((await callGateway(minted.json.baseUrl, minted.json.token)).status).toBe(200);
  });

  it('no key at start-up: no gateway, a token request says what to do; the first token after `key set` starts it', async () => {
    const { world } = await setUp({ SLEDS_GATEWAY_PORT: '0' });
    await startMusher(world);
    expect((await api(world, 'GET', '/v1/gateway')).json).toEqual({ running: false, url: null });
    const refused = await api(world, 'POST', '/v1/gateway/tokens', { sessionId: 's' });
    expect(refused.status).toBe(409);
    expect(refused.json.error).toBe("no platform key configured — run 'sleds key set anthropic' (or openai) first");
    const bad = await api(world, 'POST', '/v1/gateway/tokens', { project: 'x' });
    expect(bad.status).toBe(400);
    expect(bad.json.error).toMatch(/^sessionId: /);

    await sleds(world, ['key', 'set', 'anthropic'], KEY);
    const minted = await api(world, 'POST', '/v1/gateway/tokens', { sessionId: 's', ttlMs: 60_000 });
    expect(minted.status).toBe(200);
    expect((await api(world, 'GET', '/v1/gateway')).json).toEqual({ running: true, url: minted.json.baseUrl });
  });

  it('musher stopped and started again serves the gateway on the same port: a resumed session\'s token and URL still work', async () => {
    const { fake, world } = await setUp();
    await sleds(world, ['key', 'set', 'anthropic'], KEY);
    await startMusher(world);
    const minted = await api(world, 'POST', '/v1/gateway/tokens', { sessionId: 's' });
    expect(minted.status).toBe(200);
    const first = minted.json.baseUrl as string;
    const portFile = join(world.sledsHome, 'data', 'gateway.json');
    expect(JSON.parse(readFileSync(portFile, 'utf8'))).toEqual({ port: Number(new URL(first).port) });
    expect(statSync(portFile).mode & 0o777).toBe(0o600);

    await stopMusher(world);
    await expect(callGateway(first, minted.json.token)).rejects.toThrow(/ECONNREFUSED/);
    await startMusher(world);
    const again = await waitFor('the gateway back', async () => {
      const r = await api(world, 'GET', '/v1/gateway');
      return r.json.running ? r.json : null;
    });
    expect(again.url).toBe(first);
    // The session resumed before the restart goes on with the URL and token it was given.
    const r = await callGateway(first, minted.json.token);
    expect(r.status).toBe(200);
    expect(fake.messageRequests()).toHaveLength(1);
  });

  it('the stored port taken by another program: a new port, stored, the outstanding tokens revoked, and the log says why', async () => {
    const { fake, world } = await setUp();
    await sleds(world, ['key', 'set', 'anthropic'], KEY);
    await startMusher(world);
    const minted = await api(world, 'POST', '/v1/gateway/tokens', { sessionId: 's' });
    const oldPort = Number(new URL(minted.json.baseUrl as string).port);
    await stopMusher(world);

    // Someone else listens on the old port while musher is away.
    const stranger = net.createServer((c) => c.destroy());
    await new Promise<void>((resolve) => stranger.listen(oldPort, '127.0.0.1', resolve));
    cleanups.push(() => new Promise((resolve) => stranger.close(resolve)));
    await startMusher(world);
    const moved = await waitFor('the gateway on another port', async () => {
      const r = await api(world, 'GET', '/v1/gateway');
      return r.json.running ? r.json : null;
    });
    const newPort = Number(new URL(moved.url as string).port);
    expect(newPort).not.toBe(oldPort);
    expect(JSON.parse(readFileSync(join(world.sledsHome, 'data', 'gateway.json'), 'utf8'))).toEqual({ port: newPort });
    // The token a session still pointed at the old port holds buys nothing here now.
    const old = await callGateway(moved.url as string, minted.json.token);
    expect(old.status).toBe(401);
    expect(JSON.parse(old.body).error.message).toMatch(/token has expired — resume the session from its wall/);
    expect(fake.messageRequests()).toHaveLength(0);
    expect(readFileSync(world.logFile, 'utf8')).toContain(
      `gateway: port ${oldPort} is taken by another program; now on ${newPort} (stored). Revoked 1 outstanding token: a session still pointed at port ${oldPort} would send its token there — resume those sessions from their wall again`,
    );
    const fresh = await api(world, 'POST', '/v1/gateway/tokens', { sessionId: 's' });
    expect((await callGateway(fresh.json.baseUrl, fresh.json.token)).status).toBe(200);
  });

  it('sleds key refuses what is not a key, and says which providers exist', async () => {
    const { world } = await setUp();
    const empty = await sleds(world, ['key', 'set', 'anthropic'], '\n');
    expect(empty.code).toBe(2);
    expect(empty.stderr).toMatch(/no key on stdin/);
    const two = await sleds(world, ['key', 'set', 'openai'], 'sk-one sk-two');
    expect(two.code).toBe(2);
    const which = await sleds(world, ['key', 'set', 'gemini'], KEY);
    expect(which.code).toBe(2);
    expect(which.stderr).toBe('sleds: which key? sleds key set anthropic|openai (the key itself comes on stdin)\n');
    const st = await sleds(world, ['key', 'status']);
    expect(st.stdout).toContain('anthropic  not set — sleds key set anthropic');
  });
});
