/**
 * musher's upstreams and binaries come from the user's config.yml, never from the environment of the session whose
 * hook started it (the built dist/, a real musher). A hostile repository's session that sets SLEDS_ANTHROPIC_UPSTREAM
 * or SLEDS_GH_BIN gets neither the platform key nor a program run.
 */
import { execFileSync } from 'node:child_process';
import http from 'node:http';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { requestMusher } from '../../hooks/musher-client.js';
import type { PrWatchRound } from '../../musher/github/pr-watcher.js';
import { startFakeAnthropic } from '../e2e/harness/fake-anthropic.js';
import { startFakeGithub } from '../support/fake-github.js';
import { sledsConfigFile, writeSledsConfig } from '../support/sleds-config.js';
import { sleds, startMusher, status, waitFor, type SledsWorld } from '../support/sleds-env.js';
import { useWorlds } from '../support/worlds.js';

const KEY = 'sk-ant-api03-PLATFORMKEY-config-test-0a1b2c3d4e5f';
const GH_TOKEN = 'ghp_config_yml_gh_token_never_printed';

const world = useWorlds({ SLEDS_KEYRING: 'file', SLEDS_SEAT: 'dana' });
const cleanups: Array<() => Promise<unknown> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'sl-cfg-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function api(w: SledsWorld, method: string, path: string, body: unknown = null) {
  const r = await requestMusher(w.socket, method, path, body === null ? null : JSON.stringify(body), { 'content-type': 'application/json' }, 5000);
  return { status: r.status, json: JSON.parse(r.body) as Record<string, any> };
}

function callGateway(baseUrl: string, token: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${baseUrl}/v1/messages`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': token, 'anthropic-version': '2023-06-01' } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode!));
    });
    req.on('error', reject);
    req.end(JSON.stringify({ model: 'claude-opus-5-5', max_tokens: 50, stream: true, messages: [{ role: 'user', content: 'hi' }] }));
  });
}

/** A `gh` stand-in: `gh auth token` prints `token` (when given) and the script leaves `marker` behind. */
function ghScript(dir: string, name: string, marker: string, token: string | null): string {
  const file = join(dir, name);
  writeFileSync(file, `#!/bin/sh\necho "$@" > '${marker}'\n${token ? `[ "$1 $2" = "auth token" ] && { echo "${token}"; exit 0; }\n` : ''}exit 1\n`);
  chmodSync(file, 0o755);
  return file;
}

describe('musher takes its upstreams and binaries from config.yml, not from the environment it was started in', () => {
  it("the gateway forwards to config.yml's upstream; the one in SLEDS_ANTHROPIC_UPSTREAM hears nothing", async () => {
    const real = await startFakeAnthropic({ reply: 'from the configured upstream' });
    const attacker = await startFakeAnthropic({ reply: 'from the attacker' });
    cleanups.push(() => real.close(), () => attacker.close());
    const w = world({ SLEDS_ANTHROPIC_UPSTREAM: attacker.url, SLEDS_OPENAI_UPSTREAM: attacker.url });
    writeSledsConfig(w, { upstreams: { anthropic: real.url } });
    expect((await sleds(w, ['key', 'set', 'anthropic'], `${KEY}\n`)).code).toBe(0);

    await startMusher(w);
    await waitFor('the gateway started', async () => (await api(w, 'GET', '/v1/gateway')).json.running);
    const minted = await api(w, 'POST', '/v1/gateway/tokens', { sessionId: 'sess-cfg' });
    expect(minted.status).toBe(200);
    expect(await callGateway(minted.json.baseUrl, minted.json.token)).toBe(200);

    expect(real.messageRequests()).toHaveLength(1);
    expect(real.messageRequests()[0]!.headers['x-api-key']).toBe(KEY);
    expect(attacker.requests).toHaveLength(0);
  });

  it("gh is config.yml's binaries.gh; the program SLEDS_GH_BIN names never runs", async () => {
    const gh = await startFakeGithub({ token: GH_TOKEN });
    cleanups.push(() => gh.close());
    const dir = tempDir();
    const attackerMarker = join(dir, 'attacker-ran');
    const configuredMarker = join(dir, 'configured-gh-ran');
    const attackerGh = ghScript(dir, 'evil-gh', attackerMarker, GH_TOKEN);
    const configuredGh = ghScript(dir, 'gh', configuredMarker, GH_TOKEN);
    const w = world({ SLEDS_GH_BIN: attackerGh, SLEDS_TMUX_BIN: attackerGh, SLEDS_NOTIFY_SEND: attackerGh, SLEDS_GITHUB_API: 'http://127.0.0.1:9' });
    writeSledsConfig(w, { upstreams: { github: gh.apiUrl }, binaries: { gh: configuredGh } });

    await startMusher(w);
    const checkout = join(dir, 'shop');
    execFileSync('git', ['init', '-q', '-b', 'feature/login', checkout]);
    execFileSync('git', ['-C', checkout, 'remote', 'add', 'origin', 'git@github.com:acme/shop.git']);
    const prompt = JSON.stringify({ session_id: 's-cfg', prompt: 'Fix the login test', cwd: checkout, hook_event_name: 'UserPromptSubmit' });
    expect((await sleds(w, ['hook', 'UserPromptSubmit'], prompt)).code).toBe(0);
    gh.createRepo('acme/shop');

    // No token is stored: musher asks `gh auth token`, the configured gh, and reaches the configured API with it.
    const round = await sleds(w, ['github', 'watch', '--json']);
    expect(round.code, round.stderr).toBe(0);
    expect(JSON.parse(round.stdout) as PrWatchRound).toEqual({ repos: ['acme/shop'], finished: [], errors: [] });
    expect(gh.requests.at(-1)!.headers.authorization).toBe(`Bearer ${GH_TOKEN}`);
    expect(readFileSync(configuredMarker, 'utf8')).toBe('auth token\n');
    expect(existsSync(attackerMarker)).toBe(false);
  });

  it('a bad config.yml is one line in the log naming its line, and musher runs on the defaults', async () => {
    const w = world();
    const file = sledsConfigFile(w);
    writeSledsConfig(w, { retention: { rawEventsDays: 30 } });
    writeFileSync(file, `${readFileSync(file, 'utf8')}upstreams:\n  anthropic: file:///etc/passwd\n`);

    await startMusher(w);
    expect((await status(w)).musher.pid).toBeGreaterThan(0);
    const lines = readFileSync(w.logFile, 'utf8').split('\n').filter((l) => l.includes('config.yml'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/ ERROR .*\/config\/config\.yml:4: upstreams\.anthropic: must be an http:\/\/ or https:\/\/ URL — running on the built-in defaults until it is fixed/);
    // sleds doctor says the same, from the same file.
    const doctor = JSON.parse((await sleds(w, ['doctor', '--json'])).stdout) as { steps: Array<{ id: string; status: string; message: string }> };
    expect(doctor.steps.find((s) => s.id === 'config')).toMatchObject({ status: 'warn', message: expect.stringMatching(/config\.yml:4: upstreams\.anthropic: must be an http:\/\/ or https:\/\/ URL/) });
  });

  it('an unknown key is one warning line, and the rest of the file still counts', async () => {
    const real = await startFakeAnthropic();
    cleanups.push(() => real.close());
    const w = world();
    writeSledsConfig(w, { upstreams: { anthropic: real.url } });
    writeFileSync(sledsConfigFile(w), `${readFileSync(sledsConfigFile(w), 'utf8')}theme: dark\n`);
    expect((await sleds(w, ['key', 'set', 'anthropic'], `${KEY}\n`)).code).toBe(0);

    await startMusher(w);
    await waitFor('the gateway started', async () => (await api(w, 'GET', '/v1/gateway')).json.running);
    const minted = await api(w, 'POST', '/v1/gateway/tokens', { sessionId: 'sess-cfg' });
    expect(await callGateway(minted.json.baseUrl, minted.json.token)).toBe(200);
    expect(real.messageRequests()).toHaveLength(1);
    const lines = readFileSync(w.logFile, 'utf8').split('\n').filter((l) => l.includes('config.yml'));
    expect(lines).toEqual([expect.stringMatching(/ WARN .*\/config\/config\.yml:3: theme: unknown key \(ignored\); known: upstreams, binaries, retention, handle, engine, gateway$/)]);
  });
});
