import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../musher/clock.js';
import { Forecaster } from '../../musher/forecast/forecaster.js';
import { GatewayService } from '../../musher/gateway/service.js';
import type { Log } from '../../musher/log.js';
import { loadPriceTable } from '../../musher/prices.js';
import { Accounts } from '../../musher/quota/accounts.js';
import { readClaudeCredentials } from '../../musher/quota/credentials.js';
import { FileSecretStore } from '../../musher/secrets/store.js';
import { BarStore } from '../../musher/store/bars.js';
import { CreditStore } from '../../musher/store/credits.js';
import { openStore, type Db } from '../../musher/store/db.js';
import { HistoryStore } from '../../musher/store/histories.js';
import { OffsetStore } from '../../musher/store/offsets.js';
import { PlatformKeyStore } from '../../musher/store/platform-key.js';
import { SessionStore } from '../../musher/store/sessions.js';
import { UsageStore } from '../../musher/store/usage.js';
import { WallStore } from '../../musher/store/walls.js';
import { buildFollowers } from '../../musher/usage-sources/followers.js';
import { GatewayMeteringSource } from '../../musher/usage-sources/gateway-metering.js';
import type { KickHint, SourceProgress, UsageSource } from '../../musher/usage-sources/port.js';
import { UsageSources } from '../../musher/usage-sources/sources.js';
import { StatuslineFeed } from '../../musher/usage-sources/statusline-feed.js';
import { UsageEndpointSource } from '../../musher/usage-sources/usage-endpoint.js';
import { startFakeAnthropic } from '../e2e/harness/fake-anthropic.js';
import { startFakeUsageEndpoint } from '../support/fake-usage-endpoint.js';

/**
 * Every usage source through the same table (issue 13, part 2): detect → start → kick → progress → stop, each on a
 * temp world of its own (real files, real SQLite, real HTTP to the fakes at the edge). A row says how usage reaches
 * its source and where it must land; the table asks every source the same questions through the port.
 */
const REPO = join(import.meta.dirname, '..', '..');
const prices = loadPriceTable(REPO);
const CLAUDE_TRANSCRIPT = join(REPO, 'tests/fixtures/claude/projects/-home-u-my-proj/4e7d2c1b-8a9f-4b3c-9d2e-1f0a9b8c7d6e.jsonl');
const CODEX_ROLLOUT_REL = 'sessions/2026/11/29/rollout-2026-11-29T19-40-00-019ad0f1-5f7f-7c3e-9a1b-4c5d6e7f8091.jsonl';

interface World {
  dir: string;
  home: string;
  claudeDir: string;
  codexHome: string;
  db: Db;
  stores: {
    sessions: SessionStore;
    usage: UsageStore;
    bars: BarStore;
    walls: WallStore;
    offsets: OffsetStore;
    histories: HistoryStore;
    credits: CreditStore;
    platformKey: PlatformKeyStore;
  };
  accounts: Accounts;
  log: Log;
  logs: string[];
}

const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function world(): World {
  const dir = mkdtempSync(join(tmpdir(), 'sl-sources-'));
  const db = openStore(join(dir, 'data', 'sleds.db'));
  cleanups.push(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const logs: string[] = [];
  const log: Log = { info: (m) => logs.push(`INFO ${m}`), warn: (m) => logs.push(`WARN ${m}`), error: (m) => logs.push(`ERROR ${m}`) };
  const home = join(dir, 'home');
  const claudeDir = join(home, '.claude');
  const codexHome = join(home, '.codex');
  return {
    dir,
    home,
    claudeDir,
    codexHome,
    db,
    stores: {
      sessions: new SessionStore(db),
      usage: new UsageStore(db),
      bars: new BarStore(db),
      walls: new WallStore(db),
      offsets: new OffsetStore(db),
      histories: new HistoryStore(db),
      credits: new CreditStore(db),
      platformKey: new PlatformKeyStore(db),
    },
    accounts: new Accounts({ claudeConfigDir: claudeDir, codexHome, homeDir: home, log }),
    log,
    logs,
  };
}

function followers(w: World) {
  return buildFollowers({ db: w.db, ...w.stores, accounts: w.accounts, prices, clock: systemClock, log: w.log, claudeConfigDir: w.claudeDir, codexSessionsDir: join(w.codexHome, 'sessions') });
}

interface Row {
  id: string;
  /** Builds the source from its ports on the world, as musher does. */
  build(w: World): Promise<UsageSource>;
  /** What detect says before the world has anything for it (a harness's folder, a login)… */
  detectsBare: boolean;
  /** …and what gives it something (called before build). */
  provide(w: World): Promise<void> | void;
  /** Makes usage arrive once it has started, and the kick that says so. */
  feed(w: World, s: UsageSource): Promise<KickHint | undefined>;
  /** Has the usage landed in SQLite, as its source says it? */
  landed(w: World): boolean;
  /** The describe line once it has read something. */
  describes: RegExp;
}

const ROWS: Row[] = [
  {
    id: 'claude-transcripts',
    build: async (w) => followers(w).claude,
    detectsBare: false,
    provide: (w) => void mkdirSync(join(w.claudeDir, 'projects'), { recursive: true }),
    feed: async (w) => {
      const path = join(w.claudeDir, 'projects', '-home-u-my-proj', '4e7d2c1b-8a9f-4b3c-9d2e-1f0a9b8c7d6e.jsonl');
      mkdirSync(dirname(path), { recursive: true });
      copyFileSync(CLAUDE_TRANSCRIPT, path);
      return { path };
    },
    landed: (w) => w.stores.usage.totals().records > 0 && w.stores.sessions.recent(5).some((s) => s.harness === 'claude-code'),
    describes: /^claude transcripts: following .*\.claude\/projects$/,
  },
  {
    id: 'codex-rollouts',
    build: async (w) => followers(w).codex,
    detectsBare: false,
    provide: (w) => void mkdirSync(join(w.codexHome, 'sessions'), { recursive: true }),
    feed: async (w) => {
      const path = join(w.codexHome, CODEX_ROLLOUT_REL);
      mkdirSync(dirname(path), { recursive: true });
      copyFileSync(join(REPO, 'tests/fixtures/codex', CODEX_ROLLOUT_REL), path);
      return { path };
    },
    landed: (w) => w.stores.usage.totals().records > 0 && w.stores.bars.all().some((b) => b.provider === 'openai' && b.source === 'codex-rollout'),
    describes: /^codex rollouts: following .*\.codex\/sessions$/,
  },
  {
    id: 'statusline',
    build: async (w) => {
      const forecaster = new Forecaster(w.stores.bars, w.stores.usage, systemClock, 'UTC', () => [w.accounts.defaultClaude().key]);
      const kicked: string[] = [];
      const feed = new StatuslineFeed({
        clock: systemClock,
        log: w.log,
        timeZone: 'UTC',
        accounts: w.accounts,
        ...w.stores,
        forecaster,
        // No wall in this world: the line's wall part is the wall keeper's, tested with it.
        wall: { preview: () => null, statusLine: () => null, refreshPreview: async () => undefined },
        kickTranscript: (path) => kicked.push(path),
      });
      return feed;
    },
    detectsBare: true,
    provide: () => undefined,
    feed: async (_w, s) => {
      const resets = Math.floor(Date.now() / 1000) + 3600;
      const { line, record } = (s as StatuslineFeed).render(JSON.stringify({ session_id: 'sess-sl', model: { display_name: 'Opus' }, rate_limits: { five_hour: { used_percentage: 37, resets_at: resets } } }), false);
      expect(line).toContain('37%');
      record();
      return undefined;
    },
    landed: (w) => w.stores.bars.all().some((b) => b.window === 'five_hour' && b.usedPct === 37 && b.source === 'statusline') && w.stores.sessions.get('sess-sl') !== null,
    describes: /^statusline: last bars \S+ ago$/,
  },
  {
    id: 'usage-endpoint',
    build: async (w) => {
      const fake = await startFakeUsageEndpoint();
      cleanups.push(() => fake.close());
      const week = new Date(Date.now() + 4 * 86_400_000).toISOString();
      fake.otherwise({ kind: 'json', body: { five_hour: { utilization: 42.5, resets_at: new Date(Date.now() + 3_600_000).toISOString() }, seven_day: { utilization: 71, resets_at: week }, seven_day_opus: { utilization: 33, resets_at: week } } });
      return new UsageEndpointSource(
        {
          log: w.log,
          readCredentials: () => readClaudeCredentials({ claudeConfigDir: w.claudeDir, now: () => Date.now(), platform: 'linux' }),
          baseUrl: fake.baseUrl,
          lockFile: null,
          stateFile: join(w.dir, 'run', 'usage-poller.json'),
          // Only the kick polls: the poller's own timer is one the test never fires.
          timers: { setTimeout: () => ({}), clearTimeout: () => undefined },
        },
        { db: w.db, bars: w.stores.bars, credits: w.stores.credits, account: () => w.accounts.defaultClaude() },
        systemClock,
      );
    },
    detectsBare: true,
    provide: (w) => {
      mkdirSync(w.claudeDir, { recursive: true });
      writeFileSync(join(w.claudeDir, '.credentials.json'), JSON.stringify({ claudeAiOauth: { accessToken: 'sk-ant-oat01-conformance', expiresAt: Date.now() + 3_600_000 } }), { mode: 0o600 });
    },
    feed: async () => undefined,
    landed: (w) => w.stores.bars.all().some((b) => b.source === 'usage-endpoint' && b.window === 'seven_day_opus'),
    describes: /^claude usage endpoint: ok, last good read \S+ ago/,
  },
  {
    id: 'gateway',
    build: async (w) => {
      const fake = await startFakeAnthropic({ usage: { input_tokens: 1000, output_tokens: 500, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 } });
      cleanups.push(() => fake.close());
      const secrets = new FileSecretStore(join(w.dir, 'config'));
      await secrets.set('anthropic-api-key', 'sk-ant-api03-CONFORMANCE-0123456789abcdef');
      const service = new GatewayService({
        db: w.db,
        platformKeys: w.stores.platformKey,
        prices,
        clock: systemClock,
        log: w.log,
        secrets,
        allowance: () => ({ perDayMicros: null, perWeekMicros: null }),
        env: {},
        portFile: join(w.dir, 'data', 'gateway.json'),
        upstreams: { anthropic: fake.url, openai: 'http://127.0.0.1:9' },
      });
      (w as World & { gateway?: GatewayService }).gateway = service;
      return new GatewayMeteringSource(service, w.log);
    },
    detectsBare: true,
    provide: () => undefined,
    feed: async (w, s) => {
      const service = (w as World & { gateway?: GatewayService }).gateway!;
      const url = await waitFor('the gateway listening', () => service.state().url);
      expect(s.describe()).toBe(`gateway: listening on ${url}, metering the platform key`);
      const minted = await service.mint({ sessionId: 'sess-gw', seat: 'dana' });
      const reply = await post(`${url}/v1/messages`, { 'x-api-key': String(minted.body.token), 'anthropic-version': '2023-06-01' }, { model: 'claude-opus-5-5', max_tokens: 64, stream: false, messages: [{ role: 'user', content: 'hello' }] });
      expect(reply.status).toBe(200);
      return undefined;
    },
    landed: (w) => w.stores.platformKey.spend(0, Date.now() + 86_400_000).some((r) => r.costMicros > 0),
    describes: /^gateway: listening on http:\/\/127\.0\.0\.1:\d+, metering the platform key$/,
  },
];

describe('every usage source through the same life cycle (detect → start → kick → progress → stop)', () => {
  it('the table covers every source musher builds, once each', () => {
    expect(ROWS.map((r) => r.id)).toEqual(['claude-transcripts', 'codex-rollouts', 'statusline', 'usage-endpoint', 'gateway']);
  });

  for (const row of ROWS) {
    it(`${row.id}: detects, starts, reads what a kick points at into SQLite, reports no bytes left, describes itself, stops`, async () => {
      const bare = world();
      const idle = await row.build(bare);
      expect(idle.id).toBe(row.id);
      expect(idle.detect()).toBe(row.detectsBare);
      // Stopping what never started is fine (musher's shutdown stops whatever it holds).
      await idle.stop();

      const w = world();
      await row.provide(w);
      const s = await row.build(w);
      expect(s.detect()).toBe(true);
      await s.start();
      const hint = await row.feed(w, s);
      s.kick(hint);
      await waitFor(`${row.id}: its usage in SQLite`, () => (row.landed(w) ? true : null)).catch((e: Error) => {
        throw new Error(`${e.message}; its log: ${w.logs.join(' / ') || 'empty'}`);
      });
      const done = await waitFor<SourceProgress>(`${row.id}: nothing left to read`, () => {
        const p = s.progress();
        return !p.backfilling && p.pendingBytes === 0 ? p : null;
      });
      expect(done).toEqual({ backfilling: false, pendingBytes: 0 });
      const line = s.describe();
      expect(line).toMatch(row.describes);
      expect(line).not.toContain('\n');
      // A kick it cannot use, and a path that is nobody's, are ignored rather than thrown.
      expect(() => s.kick()).not.toThrow();
      expect(() => s.kick({ path: join(w.dir, 'nobody.txt') })).not.toThrow();
      await s.stop();
      await s.stop();
      expect(w.logs.filter((l) => l.startsWith('ERROR'))).toEqual([]);
    });
  }
});

describe('the list musher holds', () => {
  const fixed = (id: string, p: SourceProgress, log: string[] = []): UsageSource => ({
    id,
    detect: () => true,
    start: async () => void log.push(`start ${id}`),
    kick: (h) => void log.push(`kick ${id} ${h?.path ?? ''}`),
    progress: () => p,
    stop: async () => void log.push(`stop ${id}`),
    describe: () => `${id}: fine`,
  });

  it("sums the sources' progress for status, starts and stops them all, and gives each one's line", async () => {
    const seen: string[] = [];
    const list = new UsageSources([fixed('a', { backfilling: false, pendingBytes: 10 }, seen), fixed('b', { backfilling: true, pendingBytes: 5 }, seen)]);
    list.add(fixed('c', { backfilling: false, pendingBytes: 0 }, seen));
    expect(list.progress()).toEqual({ backfilling: true, pendingBytes: 15 });
    await list.start();
    list.kick('b', { path: '/x' });
    await list.stop();
    expect(seen).toEqual(['start a', 'start b', 'start c', 'kick b /x', 'stop a', 'stop b', 'stop c']);
    expect(list.describe()).toEqual([
      { id: 'a', line: 'a: fine' },
      { id: 'b', line: 'b: fine' },
      { id: 'c', line: 'c: fine' },
    ]);
  });

  it('refuses a second source with the same id, and stops the others when one fails to stop', async () => {
    const seen: string[] = [];
    const list = new UsageSources([fixed('a', { backfilling: false, pendingBytes: 0 }, seen)]);
    expect(() => list.add(fixed('a', { backfilling: false, pendingBytes: 0 }))).toThrow('usage source a is already held — each source is added once');
    list.add({ ...fixed('broken', { backfilling: false, pendingBytes: 0 }), stop: async () => Promise.reject(new Error('disk gone')) });
    list.add(fixed('z', { backfilling: false, pendingBytes: 0 }, seen));
    await expect(list.stop()).rejects.toThrow('disk gone');
    expect(seen).toEqual(['stop a', 'stop z']);
  });
});

async function waitFor<T>(what: string, probe: () => T | null | Promise<T | null>, ms = 15_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== null && v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

function post(url: string, headers: Record<string, string>, body: unknown): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}
