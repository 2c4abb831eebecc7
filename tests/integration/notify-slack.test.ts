import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FileSecretStore } from '../../musher/secrets/store.js';
import type { Log } from '../../musher/log.js';
import { notifyHandoff, postHandoff, postPickedUp, SLACK_BOT_TOKEN_SECRET, type HandoffNotice, type SlackDeps } from '../../musher/notify/index.js';
import { startFakeSlack, type FakeSlack, type SlackScript } from '../support/fake-slack.js';
import { writeSledsConfig } from '../support/sleds-config.js';

const TOKEN = 'xoxb-1234-5678-SECRET-do-not-log';
const DANA = 'U0DANA001';
const CREATED = Date.UTC(2026, 9, 7, 14, 0);
const EXPIRES = CREATED + 7 * 86_400_000;

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

interface Rig {
  slack: FakeSlack;
  deps: SlackDeps;
  logs: string[];
  sleeps: number[];
}

async function rig(opts: { token?: string | null } = {}): Promise<Rig> {
  const slack = await startFakeSlack({ token: TOKEN, known: [DANA, 'C0TEAM001'] });
  cleanups.push(() => slack.close());
  const dir = mkdtempSync(join(tmpdir(), 'sl-notify-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const secrets = new FileSecretStore(dir);
  const token = opts.token === undefined ? TOKEN : opts.token;
  if (token !== null) await secrets.set(SLACK_BOT_TOKEN_SECRET, token);
  const logs: string[] = [];
  const log: Log = { info: (m) => logs.push(m), warn: (m) => logs.push(m), error: (m) => logs.push(m) };
  const sleeps: number[] = [];
  const deps: SlackDeps = {
    secrets,
    baseUrl: slack.apiUrl,
    log,
    sleep: async (ms) => void sleeps.push(ms),
  };
  return { slack, deps, logs, sleeps };
}

const notice = (over: Partial<HandoffNotice> = {}): HandoffNotice => ({
  sender: 'Jordan',
  title: 'Fix the <flaky> retry & backoff in api/',
  handoffId: 'jd7k2m9qa41p',
  expiresAt: EXPIRES,
  timeZone: 'UTC',
  to: { handle: 'dana', slackId: DANA },
  ...over,
});

describe('Slack: the hand-off notice through chat.postMessage', () => {
  it('DMs the teammate the pickup commands, in the text and the blocks, with the token as a Bearer header', async () => {
    const r = await rig();
    const result = await postHandoff(notice(), r.deps);
    expect(result).toEqual({ ok: true, channel: `D${DANA.slice(1)}`, ts: expect.stringMatching(/^\d+\.\d+$/) });

    expect(r.slack.requests).toHaveLength(1);
    const req = r.slack.requests[0]!;
    expect(req.path).toBe('/api/chat.postMessage');
    expect(req.headers.authorization).toBe(`Bearer ${TOKEN}`);
    // Slack's own client (WebClient) posts a form, `blocks` as a JSON string, the token only in the header.
    expect(req.headers['user-agent']).toMatch(/^@slack:web-api\/\d/);
    expect(req.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(new URLSearchParams(req.raw).get('blocks')).toBe(JSON.stringify(r.slack.messages[0]!.blocks));
    expect(req.body).not.toHaveProperty('token');
    expect(req.body!.channel).toBe(DANA);

    const [posted] = r.slack.messages;
    expect(posted!.text).toContain('Jordan handed you a session: Fix the &lt;flaky&gt; retry &amp; backoff in api/.');
    expect(posted!.text).toContain('`/sled pickup jd7k2m9qa41p` (Claude Code)');
    expect(posted!.text).toContain('`sled pickup jd7k2m9qa41p` (Codex)');
    expect(posted!.text).toContain('expires Wed 14 Oct 2:00pm');
    const blocks = JSON.stringify(posted!.blocks);
    expect(blocks).toContain('/sled pickup jd7k2m9qa41p');
    expect(blocks).toContain(`<!date^${EXPIRES / 1000}^`);
  });

  it('posts to a channel from options instead of the DM when one is given', async () => {
    const r = await rig();
    const result = await postHandoff(notice({ to: { handle: 'dana', slackId: DANA, channel: 'C0TEAM001' } }), r.deps);
    expect(result).toMatchObject({ ok: true, channel: 'C0TEAM001' });
  });

  it('says to set the token when Slack answers not_authed, and when no token is stored (nothing sent)', async () => {
    const r = await rig();
    r.slack.script({ kind: 'error', error: 'not_authed' });
    const refused = await postHandoff(notice(), r.deps);
    expect(refused).toEqual({ ok: false, code: 'not_authed', error: expect.stringContaining("(not_authed) — set the bot token with 'sleds slack set-token'") });

    const none = await rig({ token: null });
    const missing = await postHandoff(notice(), none.deps);
    expect(missing).toMatchObject({ ok: false, code: 'no_token', error: expect.stringContaining('sleds slack set-token') });
    expect(none.slack.requests).toHaveLength(0);
  });

  it('a wrong token is refused by the fake as invalid_auth, with the same advice and without the token', async () => {
    const r = await rig({ token: 'xoxb-wrong-SECRET-too' });
    const result = await postHandoff(notice(), r.deps);
    expect(result).toMatchObject({ ok: false, code: 'invalid_auth' });
    if (!result.ok) expect(result.error).not.toContain('xoxb-wrong-SECRET-too');
  });

  it('points at the roster when the slack id is unknown (channel_not_found), or missing', async () => {
    const r = await rig();
    const result = await postHandoff(notice({ to: { handle: 'dana', slackId: 'U0NOBODY1' } }), r.deps);
    expect(result).toEqual({
      ok: false,
      code: 'channel_not_found',
      error: "Slack does not know dana's slack id U0NOBODY1 (channel_not_found) — check dana's slack id in .sleds/roster.yml",
    });
    const none = await postHandoff(notice({ to: { handle: 'dana', slackId: null } }), r.deps);
    expect(none).toMatchObject({ ok: false, code: 'no_channel', error: expect.stringContaining('dana has no slack id in .sleds/roster.yml') });
  });

  it('waits out a 429 Retry-After once and then posts; a second 429 is reported, not retried again', async () => {
    const r = await rig();
    r.slack.script({ kind: 'ratelimited', retryAfter: '3' });
    const result = await postHandoff(notice(), r.deps);
    expect(result.ok).toBe(true);
    expect(r.sleeps).toEqual([3000]);
    expect(r.slack.requests).toHaveLength(2);
    expect(r.slack.messages).toHaveLength(1);

    r.slack.script({ kind: 'ratelimited', retryAfter: '1' }, { kind: 'ratelimited', retryAfter: '1' });
    const twice = await postHandoff(notice(), r.deps);
    expect(twice).toMatchObject({ ok: false, code: 'ratelimited', error: expect.stringContaining('rate-limiting') });
    expect(r.slack.requests).toHaveLength(4);
    expect(r.sleeps).toEqual([3000, 1000]);
  });

  it('a Retry-After too long to wait for is reported at once', async () => {
    const r = await rig();
    r.slack.script({ kind: 'ratelimited', retryAfter: '600' });
    const result = await postHandoff(notice(), r.deps);
    expect(result).toMatchObject({ ok: false, code: 'ratelimited' });
    expect(r.sleeps).toEqual([]);
  });

  it('a non-200 that is not a rate limit is a transport error line; an unreachable Slack too', async () => {
    const r = await rig();
    r.slack.script({ kind: 'status', status: 503 });
    expect(await postHandoff(notice(), r.deps)).toMatchObject({ ok: false, code: 'http_503', error: expect.stringContaining('HTTP 503') });

    await r.slack.close();
    const down = await postHandoff(notice(), r.deps);
    expect(down).toMatchObject({ ok: false, code: 'network', error: expect.stringContaining('Slack could not be reached at 127.0.0.1') });
  });

  it('never puts the token in logs, errors or the body', async () => {
    const r = await rig();
    const lines: string[] = [];
    const scripts: SlackScript[][] = [
      [{ kind: 'error', error: 'not_authed' }],
      [{ kind: 'error', error: 'channel_not_found' }],
      [{ kind: 'error', error: 'missing_scope' }],
      [{ kind: 'ratelimited', retryAfter: '2' }, { kind: 'ratelimited', retryAfter: '2' }],
      [{ kind: 'status', status: 500 }],
    ];
    for (const s of scripts) {
      r.slack.script(...s);
      const res = await postHandoff(notice(), r.deps);
      if (!res.ok) lines.push(res.error);
    }
    await r.slack.close();
    const down = await postHandoff(notice(), r.deps);
    if (!down.ok) lines.push(down.error);
    expect(lines.length).toBe(6);
    for (const text of [...lines, ...r.logs, ...r.slack.requests.map((q) => q.raw)]) {
      expect(text).not.toContain(TOKEN);
      expect(text).not.toContain('SECRET');
      expect(text.split('\n')).toHaveLength(1);
    }
  });

  it('"picked up by dana" goes into the hand-off post\'s thread', async () => {
    const r = await rig();
    const sent = await postHandoff(notice(), r.deps);
    if (!sent.ok) throw new Error(sent.error);
    const picked = await postPickedUp(
      { channel: sent.channel, threadTs: sent.ts, by: 'dana', at: CREATED + 3_600_000 + 2 * 60_000, handoffId: 'jd7k2m9qa41p', title: 'Fix the retry', timeZone: 'UTC' },
      r.deps,
    );
    expect(picked.ok).toBe(true);
    const reply = r.slack.messages[1]!;
    expect(reply).toMatchObject({ channel: sent.channel, thread_ts: sent.ts, text: 'Fix the retry: picked up by dana 3:02pm' });
  });

  it('notifyHandoff sends Slack even where no desktop notification can be shown', async () => {
    const r = await rig();
    const out = await notifyHandoff(notice(), { slack: r.deps, desktop: { platform: 'linux', env: {} } });
    expect(out.desktop).toBe(false);
    expect(out.slack.ok).toBe(true);
    expect(r.slack.messages).toHaveLength(1);
  });
});

describe('sleds slack set-token (the built CLI)', () => {
  it('reads the token from stdin into the secret store, which postHandoff then uses; never prints it', async () => {
    const { makeWorld, sleds, disposeWorld } = await import('../support/sleds-env.js');
    const { openSecretStore } = await import('../../musher/secrets/store.js');
    const { resolvePaths } = await import('../../core/paths.js');
    const slack = await startFakeSlack({ token: TOKEN, known: [DANA] });
    cleanups.push(() => slack.close());
    const world = makeWorld({ SLEDS_KEYRING: 'file' });
    writeSledsConfig(world, { upstreams: { slack: slack.apiUrl } });
    cleanups.push(() => disposeWorld(world));

    const inArgv = await sleds(world, ['slack', 'set-token', TOKEN]);
    expect(inArgv.code).toBe(2);
    expect(inArgv.stderr).toContain('never from the command line');
    const appToken = await sleds(world, ['slack', 'set-token'], 'xapp-1-A1-SECRET\n');
    expect(appToken.code).toBe(2);

    const set = await sleds(world, ['slack', 'set-token', '--json'], `${TOKEN}\n`);
    expect(set.code).toBe(0);
    expect(JSON.parse(set.stdout)).toMatchObject({ saved: true, fingerprint: expect.stringMatching(/^[0-9a-f]{8}$/), backend: 'file', warning: null });
    const status = await sleds(world, ['slack', 'status', '--json']);
    expect(JSON.parse(status.stdout)).toMatchObject({ configured: true, apiUrl: slack.apiUrl });
    for (const out of [inArgv, appToken, set, status]) expect(out.stdout + out.stderr).not.toContain(TOKEN);

    const secrets = openSecretStore(resolvePaths(world.env, world.home), { env: world.env });
    const result = await postHandoff(notice(), { secrets, baseUrl: slack.apiUrl });
    expect(result.ok).toBe(true);
    expect(slack.requests.at(-1)!.headers.authorization).toBe(`Bearer ${TOKEN}`);

    expect((await sleds(world, ['slack', 'rm'])).stdout).toBe('Slack bot token removed\n');
    expect(await postHandoff(notice(), { secrets, baseUrl: slack.apiUrl })).toMatchObject({ ok: false, code: 'no_token' });
  });

  it('set-app-token takes the xapp- token from stdin (refusing the bot token), status shows it by fingerprint, rm app-token removes it alone', async () => {
    const { makeWorld, sleds, disposeWorld } = await import('../support/sleds-env.js');
    const { openSecretStore } = await import('../../musher/secrets/store.js');
    const { resolvePaths } = await import('../../core/paths.js');
    const { SLACK_APP_TOKEN_SECRET } = await import('../../musher/notify/slack.js');
    const APP = 'xapp-1-A0APP-SECRET-token';
    const world = makeWorld({ SLEDS_KEYRING: 'file' });
    cleanups.push(() => disposeWorld(world));

    const bot = await sleds(world, ['slack', 'set-app-token'], `${TOKEN}\n`);
    expect(bot.code).toBe(2);
    expect(bot.stderr).toContain('that is the bot token (xoxb-…); Socket Mode needs the app-level token (xapp-…');
    const before = await sleds(world, ['slack', 'status']);
    expect(before.stdout).toContain('Slack app-level token: not set — parked questions are posted without buttons');

    expect((await sleds(world, ['slack', 'set-app-token'], `${APP}\n`)).code).toBe(0);
    expect((await sleds(world, ['slack', 'set-token'], `${TOKEN}\n`)).code).toBe(0);
    const status = await sleds(world, ['slack', 'status', '--json']);
    expect(JSON.parse(status.stdout)).toMatchObject({ configured: true, appToken: { fingerprint: expect.stringMatching(/^[0-9a-f]{8}$/) } });
    for (const out of [bot, before, status]) expect(out.stdout + out.stderr).not.toContain('SECRET');
    const secrets = openSecretStore(resolvePaths(world.env, world.home), { env: world.env });
    expect(await secrets.get(SLACK_APP_TOKEN_SECRET)).toBe(APP);

    expect((await sleds(world, ['slack', 'rm', 'app-token'])).code).toBe(0);
    expect(await secrets.get(SLACK_APP_TOKEN_SECRET)).toBeNull();
    expect(await secrets.get(SLACK_BOT_TOKEN_SECRET)).toBe(TOKEN);
  });
});
