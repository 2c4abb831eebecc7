import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { UsageReadings } from '../../core/usage-endpoint.js';
import { barStatus } from '../../core/status.js';
import { readClaudeCredentials, fingerprint, keychainServices } from '../../musher/quota/credentials.js';
import { describeUsagePoller, UsagePoller, type UsagePollerOptions } from '../../musher/quota/usage-poller.js';
import { openStore, type Db } from '../../musher/store/db.js';
import { BarStore } from '../../musher/store/bars.js';
import { fixtureJson, manualTime, startFakeUsageEndpoint, type FakeUsageEndpoint, type ManualTime } from '../support/fake-usage-endpoint.js';

const T0 = Date.UTC(2026, 8, 30, 12, 0); // the limits-2026-09 fixture's windows are all ahead of this
const MIN = 60_000;
const TOKEN_A = 'sk-ant-oat01-TOKEN-A-do-not-log';
const TOKEN_B = 'sk-ant-oat01-TOKEN-B-do-not-log';

interface Rig {
  dir: string;
  claudeDir: string;
  runDir: string;
  time: ManualTime;
  fake: FakeUsageEndpoint;
  logs: string[];
  readings: UsageReadings[];
  poller: UsagePoller;
  /** A second poller on the same machine (same lock and state files). */
  another(over?: Partial<UsagePollerOptions>): { poller: UsagePoller; readings: UsageReadings[] };
  advance(ms: number): Promise<void>;
  writeToken(token: string, expiresAt?: number): void;
}

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function rig(opts: { token?: string | null; over?: Partial<UsagePollerOptions> } = {}): Promise<Rig> {
  const dir = mkdtempSync(join(tmpdir(), 'sl-usage-'));
  const claudeDir = join(dir, 'claude');
  const runDir = join(dir, 'run');
  mkdirSync(claudeDir, { recursive: true });
  const time = manualTime(T0);
  const fake = await startFakeUsageEndpoint({ now: time.clock.now });
  const logs: string[] = [];
  const pollers: UsagePoller[] = [];
  cleanups.push(async () => {
    for (const p of pollers) await p.stop();
    await fake.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const writeToken = (token: string, expiresAt = T0 + 24 * 60 * MIN): void => {
    writeFileSync(join(claudeDir, '.credentials.json'), JSON.stringify({ claudeAiOauth: { accessToken: token, refreshToken: 'REFRESH-do-not-log', expiresAt, subscriptionType: 'max' } }));
  };
  if (opts.token !== null) writeToken(opts.token ?? TOKEN_A);
  const make = (over: Partial<UsagePollerOptions> = {}): { poller: UsagePoller; readings: UsageReadings[] } => {
    const readings: UsageReadings[] = [];
    const poller = new UsagePoller({
      clock: time.clock,
      log: { info: (m) => logs.push(`INFO ${m}`), warn: (m) => logs.push(`WARN ${m}`), error: (m) => logs.push(`ERROR ${m}`) },
      readCredentials: () => readClaudeCredentials({ claudeConfigDir: claudeDir, now: time.clock.now, platform: 'linux' }),
      onReadings: (r) => readings.push(r),
      baseUrl: fake.baseUrl,
      timers: time.timers,
      lockFile: join(runDir, 'usage-poller.lock'),
      stateFile: join(runDir, 'usage-poller.json'),
      userAgent: 'sleds/0.1.0 (usage poller)',
      ...opts.over,
      ...over,
    });
    pollers.push(poller);
    return { poller, readings };
  };
  const first = make();
  const settle = async (): Promise<void> => {
    for (const p of pollers) await p.whenIdle();
  };
  return {
    dir,
    claudeDir,
    runDir,
    time,
    fake,
    logs,
    readings: first.readings,
    poller: first.poller,
    another: make,
    advance: (ms) => time.advance(ms, settle),
    writeToken,
  };
}

const usage = (r: FakeUsageEndpoint) => r.requests.filter((q) => q.path === '/api/oauth/usage');

describe('usage poller against a fake usage endpoint (real HTTP, driven time)', () => {
  it('asks GET /api/oauth/usage with the bearer token, the OAuth beta and a sleds user-agent — and nothing else', async () => {
    const r = await rig();
    r.poller.start();
    await r.advance(0);
    expect(r.fake.requests).toHaveLength(1);
    const [req] = r.fake.requests;
    expect(req).toMatchObject({ method: 'GET', path: '/api/oauth/usage' });
    expect(req!.headers.authorization).toBe(`Bearer ${TOKEN_A}`);
    expect(req!.headers['anthropic-beta']).toBe('oauth-2025-04-20');
    expect(req!.headers['user-agent']).toMatch(/^sleds\//);
    expect(r.readings).toHaveLength(1);
    expect(r.readings[0]!.bars.map((b) => b.window)).toEqual(['five_hour', 'seven_day', 'seven_day_fable', 'seven_day_opus']);
    expect(r.readings[0]!.observedAt).toBe(T0);
    const s = r.poller.state();
    expect(s).toMatchObject({ role: 'owner', lastOkAt: T0, lastError: null, nextPollAt: T0 + 3 * MIN, backoffUntil: null, tokenFingerprint: fingerprint(TOKEN_A) });
    expect(describeUsagePoller(s, T0)).toMatch(/^claude usage endpoint: ok, last good read 0s ago/);
    // The token is in the request header and nowhere else.
    expect(JSON.stringify(s)).not.toContain('TOKEN-A');
    expect(r.logs.join('\n')).not.toContain('TOKEN-A');
    expect(readFileSync(join(r.runDir, 'usage-poller.json'), 'utf8')).not.toContain('TOKEN-A');
  });

  it('never polls more often than every 180 s, even when asked to', async () => {
    const r = await rig({ over: { minIntervalMs: 1_000 } });
    r.poller.start();
    for (let i = 0; i < 30 * 6; i++) await r.advance(10_000); // 30 minutes in 10 s steps
    const times = usage(r.fake).map((q) => q.at);
    expect(times).toHaveLength(11);
    for (let i = 1; i < times.length; i++) expect(times[i]! - times[i - 1]!).toBeGreaterThanOrEqual(180_000);
    expect(r.fake.requests.every((q) => q.method === 'GET' && q.path === '/api/oauth/usage')).toBe(true);
  });

  it('429 with Retry-After: no request before it, the last good readings kept, and the bars age into stale', async () => {
    const r = await rig();
    const dbDir = join(r.dir, 'db');
    const db: Db = openStore(join(dbDir, 'sleds.db'));
    cleanups.push(() => {
      db.close();
    });
    const store = new BarStore(db);
    // The integrator's mapping: every bar to BarStore.record with source 'usage-endpoint'.
    const record = (readings: UsageReadings): void => {
      for (const b of readings.bars) {
        store.record({ provider: 'anthropic', account: 'claude-dir:/home/a/.claude', window: b.window, usedPct: b.usedPct, resetsAt: b.resetsAtMs, observedAt: readings.observedAt, source: 'usage-endpoint' });
      }
    };
    const recording = r.another({ lockFile: null, stateFile: null, onReadings: record });
    await r.poller.stop(); // only the recording poller in this test

    r.fake.script({ kind: 'json' }, { kind: '429', retryAfter: '900' });
    recording.poller.start();
    await r.advance(0);
    await r.advance(3 * MIN); // → 429 at T0 + 3 min
    const limitedAt = T0 + 3 * MIN;
    expect(usage(r.fake).map((q) => q.at)).toEqual([T0, limitedAt]);
    let s = recording.poller.state();
    expect(s.backoffUntil).toBe(limitedAt + 900_000);
    expect(s.nextPollAt).toBe(limitedAt + 900_000);
    expect(s.lastOkAt).toBe(T0);
    expect(s.lastReadings?.bars).toHaveLength(4);
    expect(s.lastError).toMatch(/rate-limited \(429, Retry-After 900 s\); keeping the last readings; next try at /);
    expect(r.logs.filter((l) => l.includes('429'))).toHaveLength(1);

    await r.advance(900_000 - 1); // one ms short of Retry-After
    expect(usage(r.fake)).toHaveLength(2);
    // What the statusline reads meanwhile: the last good values, marked stale.
    const now = r.time.clock.now();
    const five = store.all().find((b) => b.window === 'five_hour')!;
    expect(five).toMatchObject({ usedPct: 42.5, source: 'usage-endpoint', observedAt: T0 });
    expect(barStatus(five, now).stale).toBe(true);
    expect(describeUsagePoller(recording.poller.state(), now)).toMatch(/rate-limited \(429, Retry-After 900 s\); keeping the last readings; last good read 18m ago; next try in 0s/);

    await r.advance(1);
    expect(usage(r.fake)).toHaveLength(3);
    s = recording.poller.state();
    expect(s).toMatchObject({ lastError: null, backoffUntil: null, lastOkAt: limitedAt + 900_000 });
    expect(barStatus(store.all().find((b) => b.window === 'five_hour')!, r.time.clock.now()).stale).toBe(false);
    expect(r.logs.some((l) => l.includes('answering again'))).toBe(true);
  });

  it('429 with an HTTP-date Retry-After is honoured to the second', async () => {
    const r = await rig();
    r.fake.script({ kind: '429', retryAfter: new Date(T0 + 20 * MIN).toUTCString() });
    r.poller.start();
    await r.advance(0);
    expect(r.poller.state().backoffUntil).toBe(T0 + 20 * MIN);
    await r.advance(20 * MIN - 1_000);
    expect(usage(r.fake)).toHaveLength(1);
    await r.advance(1_000);
    expect(usage(r.fake)).toHaveLength(2);
  });

  it('429 without Retry-After: 5 min, then 10, then 20, one log line for the lot', async () => {
    const r = await rig();
    r.fake.script({ kind: '429' }, { kind: '429' }, { kind: '429' });
    r.poller.start();
    await r.advance(0);
    for (let i = 0; i < 40 * 6; i++) await r.advance(10_000);
    const times = usage(r.fake).map((q) => (q.at - T0) / MIN);
    expect(times).toEqual([0, 5, 15, 35, 38]); // then the plain 3-minute rhythm again
    expect(r.logs.filter((l) => l.startsWith('WARN'))).toHaveLength(1);
    expect(r.poller.state().lastError).toBeNull();
  });

  it('HTML instead of JSON: one clear log line, the poller keeps going', async () => {
    const r = await rig();
    r.fake.script({ kind: 'html' }, { kind: 'html' }, { kind: 'json' });
    r.poller.start();
    await r.advance(0);
    expect(r.poller.state().lastError).toMatch(/^claude usage endpoint answered HTML \("Just a moment\.\.\."\), not JSON/);
    await r.advance(3 * MIN); // the second HTML
    await r.advance(6 * MIN); // backoff doubled → JSON
    expect(usage(r.fake).map((q) => (q.at - T0) / MIN)).toEqual([0, 3, 9]);
    const warns = r.logs.filter((l) => l.startsWith('WARN'));
    expect(warns).toHaveLength(1);
    expect(warns[0]).toMatch(/answered HTML .*proxy, captive portal or outage page/);
    expect(warns[0]).not.toMatch(/\n/);
    expect(r.readings).toHaveLength(1);
    expect(r.poller.state()).toMatchObject({ lastError: null, lastOkAt: T0 + 9 * MIN });
  });

  it('403 blocks like 401; 5xx backs off and honours its Retry-After; a 404 says so', async () => {
    const r = await rig();
    r.fake.script({ kind: 'status', status: 503, headers: { 'retry-after': '600' }, body: 'upstream' }, { kind: 'status', status: 404 }, { kind: 'unauthorized', status: 403 });
    r.poller.start();
    await r.advance(0);
    expect(r.poller.state().lastError).toMatch(/^claude usage endpoint answered 503; next try at /);
    await r.advance(10 * MIN);
    expect(r.poller.state().lastError).toMatch(/^claude usage endpoint answered 404: \(not_found_error: Not Found\)|^claude usage endpoint answered 404; /);
    await r.advance(20 * MIN); // after the second failure in a row: 6 min of backoff
    expect(usage(r.fake).map((q) => (q.at - T0) / MIN)).toEqual([0, 10, 16]);
    expect(r.poller.state()).toMatchObject({ authBlocked: true, nextPollAt: null });
    expect(r.poller.state().lastError).toMatch(/refused the OAuth token [0-9a-f]{12} \(403\)/);
  });

  it('a credentials file that is missing: a clear reason, no request; a login later starts polling', async () => {
    const r = await rig({ token: null });
    r.poller.start();
    await r.advance(0);
    for (let i = 0; i < 3; i++) await r.advance(3 * MIN);
    expect(r.fake.requests).toHaveLength(0);
    const s = r.poller.state();
    expect(s.credentials).toBe('missing');
    expect(s.lastError).toContain(`no Claude OAuth credentials at ${r.claudeDir}/.credentials.json — sign in with \`claude\``);
    expect(describeUsagePoller(s, r.time.clock.now())).toMatch(/^claude usage endpoint: not polled — no Claude OAuth credentials at /);
    expect(r.logs.filter((l) => l.includes('no Claude OAuth credentials'))).toHaveLength(1);

    r.writeToken(TOKEN_A);
    await r.advance(3 * MIN);
    expect(usage(r.fake)).toHaveLength(1);
    expect(r.poller.state()).toMatchObject({ credentials: 'ok', lastError: null });
  });

  it('a credentials file that cannot be read or parsed: a clear reason, no request', async () => {
    const r = await rig({ token: null });
    mkdirSync(join(r.claudeDir, '.credentials.json')); // a directory where the file should be: EISDIR
    r.poller.start();
    await r.advance(0);
    expect(r.poller.state().lastError).toMatch(/cannot read .*\.credentials\.json \(EISDIR\) — check its owner and permissions/);
    rmSync(join(r.claudeDir, '.credentials.json'), { recursive: true });
    writeFileSync(join(r.claudeDir, '.credentials.json'), '{"claudeAiOauth": {"accessToken": "sk-ant-oat01-SECRET"');
    await r.advance(3 * MIN);
    expect(r.poller.state()).toMatchObject({ credentials: 'malformed' });
    expect(r.poller.state().lastError).toMatch(/is not valid JSON — sign in again/);
    expect(r.logs.join('\n')).not.toContain('SECRET');
    expect(r.fake.requests).toHaveLength(0);
  });

  it('an expired token is reported, not used', async () => {
    const r = await rig({ token: null });
    r.writeToken(TOKEN_A, T0 - MIN);
    r.poller.start();
    await r.advance(0);
    expect(r.fake.requests).toHaveLength(0);
    expect(r.poller.state()).toMatchObject({ credentials: 'expired', tokenFingerprint: fingerprint(TOKEN_A) });
    expect(r.poller.state().lastError).toMatch(/expired at .* — run `claude` once to refresh it/);
  });

  it('401: stops asking until the token changes; a new token starts fresh (still ≥ 180 s apart)', async () => {
    const r = await rig();
    r.fake.script({ kind: 'unauthorized' });
    r.poller.start();
    await r.advance(0);
    for (let i = 0; i < 10; i++) await r.advance(3 * MIN);
    expect(usage(r.fake)).toHaveLength(1);
    expect(r.poller.state()).toMatchObject({ authBlocked: true, tokenFingerprint: fingerprint(TOKEN_A) });
    expect(r.poller.state().lastError).toMatch(/refused the OAuth token [0-9a-f]{12} \(401\); not polling until the login changes/);

    r.writeToken(TOKEN_B);
    await r.advance(3 * MIN);
    expect(usage(r.fake)).toHaveLength(2);
    expect(usage(r.fake)[1]!.headers.authorization).toBe(`Bearer ${TOKEN_B}`);
    expect(r.poller.state()).toMatchObject({ authBlocked: false, lastError: null, tokenFingerprint: fingerprint(TOKEN_B), consecutiveFailures: 0 });
    expect(r.logs.some((l) => l.includes(`the login changed (token ${fingerprint(TOKEN_A)} → ${fingerprint(TOKEN_B)}); starting fresh`))).toBe(true);
  });

  it('a new token drops the old backoff but keeps the 180 s floor', async () => {
    const r = await rig();
    r.fake.script({ kind: 'json' }, { kind: '429', retryAfter: '3600' });
    r.poller.start();
    await r.advance(0);
    await r.advance(3 * MIN);
    expect(r.poller.state().backoffUntil).toBe(T0 + 3 * MIN + 3_600_000);
    r.writeToken(TOKEN_B);
    await r.advance(MIN);
    expect(usage(r.fake)).toHaveLength(2);
    // The poller looks at the login every interval even while backing off: the new token is fresh state, polled
    // 180 s after the 429, not an hour later.
    await r.advance(2 * MIN);
    expect(usage(r.fake).map((q) => (q.at - T0) / MIN)).toEqual([0, 3, 6]);
    expect(usage(r.fake)[2]!.headers.authorization).toBe(`Bearer ${TOKEN_B}`);
    expect(r.poller.state()).toMatchObject({ tokenFingerprint: fingerprint(TOKEN_B), backoffUntil: null, lastError: null, lastOkAt: T0 + 6 * MIN });
  });

  it('a hanging endpoint times out into a one-line error', async () => {
    const r = await rig({ over: { requestTimeoutMs: 300 } });
    r.fake.script({ kind: 'hang' });
    r.poller.start();
    await r.advance(0);
    expect(r.poller.state().lastError).toMatch(/^claude usage endpoint unreachable \(no answer within 300 ms\)/);
    expect(r.readings).toHaveLength(0);
  });

  it('one poller per machine: the second follows and shares the readings; it takes over when the first stops', async () => {
    const r = await rig();
    const second = r.another();
    r.poller.start();
    second.poller.start();
    await r.advance(0);
    expect(r.poller.state().role).toBe('owner');
    expect(second.poller.state()).toMatchObject({ role: 'follower', ownerPid: process.pid });
    for (let i = 0; i < 4; i++) await r.advance(3 * MIN);
    const times = usage(r.fake).map((q) => q.at);
    expect(times).toEqual([0, 3, 6, 9, 12].map((m) => T0 + m * MIN));
    expect(second.readings.length).toBeGreaterThanOrEqual(4);
    expect(second.readings.at(-1)!.observedAt).toBeGreaterThanOrEqual(T0 + 9 * MIN);
    expect(describeUsagePoller(second.poller.state(), r.time.clock.now())).toMatch(/^claude usage endpoint: polled by another musher \(pid \d+\)/);

    await r.poller.stop();
    expect(existsSync(join(r.runDir, 'usage-poller.lock'))).toBe(false);
    for (let i = 0; i < 3; i++) await r.advance(3 * MIN);
    expect(second.poller.state().role).toBe('owner');
    const after = usage(r.fake).map((q) => q.at);
    expect(after.length).toBeGreaterThan(5);
    for (let i = 1; i < after.length; i++) expect(after[i]! - after[i - 1]!).toBeGreaterThanOrEqual(180_000);
  });

  it('a stale lock (its owner died) is taken over', async () => {
    const r = await rig();
    const dead = spawnSync(process.execPath, ['-e', '']).pid!;
    mkdirSync(r.runDir, { recursive: true });
    writeFileSync(join(r.runDir, 'usage-poller.lock'), String(dead));
    r.poller.start();
    await r.advance(0);
    expect(r.poller.state().role).toBe('owner');
    expect(usage(r.fake)).toHaveLength(1);
  });

  it('a restart does not poll early: the last attempt and backoff survive in the state file', async () => {
    const r = await rig();
    r.fake.script({ kind: 'json' }, { kind: '429', retryAfter: '1200' });
    r.poller.start();
    await r.advance(0);
    await r.advance(3 * MIN);
    await r.poller.stop();
    const again = r.another();
    again.poller.start();
    await r.advance(0);
    expect(usage(r.fake)).toHaveLength(2);
    expect(again.poller.state()).toMatchObject({ backoffUntil: T0 + 23 * MIN, lastOkAt: T0 });
    await r.advance(20 * MIN - 1);
    expect(usage(r.fake)).toHaveLength(2);
    await r.advance(1);
    expect(usage(r.fake)).toHaveLength(3);
  });

  it("the base URL is the one given (config.yml's upstreams.claudeUsage), never SLEDS_CLAUDE_USAGE_URL", async () => {
    const r = await rig();
    await r.poller.stop();
    const given = r.another({ baseUrl: `${r.fake.baseUrl}/`, lockFile: null, stateFile: null });
    expect(given.poller.endpoint).toBe(`${r.fake.baseUrl}/api/oauth/usage`);
    given.poller.start();
    await r.advance(0);
    expect(usage(r.fake)).toHaveLength(1);
    await given.poller.stop();

    process.env.SLEDS_CLAUDE_USAGE_URL = r.fake.baseUrl;
    try {
      expect(r.another({ baseUrl: undefined, lockFile: null, stateFile: null }).poller.endpoint).toBe('https://api.anthropic.com/api/oauth/usage');
    } finally {
      delete process.env.SLEDS_CLAUDE_USAGE_URL;
    }
  });
});

describe('reading the Claude login', () => {
  const now = T0;
  let dir = '';
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });
  const login = (token: string): string => JSON.stringify({ claudeAiOauth: { accessToken: token, expiresAt: now + 3_600_000 } });

  it('macOS: the keychain first (suffixed service when CLAUDE_CONFIG_DIR is set), via security with an argument array', async () => {
    dir = mkdtempSync(join(tmpdir(), 'sl-cred-'));
    const calls: string[][] = [];
    const c = await readClaudeCredentials({
      claudeConfigDir: dir,
      configDirFromEnv: true,
      now: () => now,
      platform: 'darwin',
      security: async (args) => {
        calls.push(args);
        if (args[2] === keychainServices(dir, true)[0]) return `${login('kc-token')}\n`;
        throw Object.assign(new Error('not found'), { code: 44 });
      },
    });
    expect(c).toMatchObject({ ok: true, token: 'kc-token', source: 'keychain' });
    expect(calls).toEqual([['find-generic-password', '-s', keychainServices(dir, true)[0], '-w']]);
  });

  it('macOS without a keychain item: the credentials file', async () => {
    dir = mkdtempSync(join(tmpdir(), 'sl-cred-'));
    writeFileSync(join(dir, '.credentials.json'), login('file-token'));
    const c = await readClaudeCredentials({
      claudeConfigDir: dir,
      now: () => now,
      platform: 'darwin',
      security: async () => {
        throw new Error('The specified item could not be found in the keychain.');
      },
    });
    expect(c).toMatchObject({ ok: true, token: 'file-token', source: 'file', where: `${dir}/.credentials.json` });
  });

  it('linux: never runs security', async () => {
    dir = mkdtempSync(join(tmpdir(), 'sl-cred-'));
    const c = await readClaudeCredentials({
      claudeConfigDir: dir,
      now: () => now,
      platform: 'linux',
      security: async () => {
        throw new Error('must not be called');
      },
    });
    expect(c).toMatchObject({ ok: false, reason: 'missing' });
  });

  it('the fixture answer is what the fake serves by default', () => {
    expect(fixtureJson('limits-2026-09.json')).toHaveProperty('limits');
  });
});
