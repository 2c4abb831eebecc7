/**
 * The platform-key gateway in process for a test: a real SQLite rail and token table in a temp folder, the repo's
 * price table, the upstreams the test starts on 127.0.0.1, a log kept in memory, an allowance the test sets, and one
 * local token minted for dana. Closed and removed after the test through `cleanups`.
 */
import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Allowance } from '../../core/gateway/allowance.js';
import type { GatewayProvider } from '../../core/gateway/meter.js';
import { startGateway, type DrainSettings, type Gateway } from '../../musher/gateway/server.js';
import { GatewayTokens } from '../../musher/gateway/tokens.js';
import type { Log } from '../../musher/log.js';
import { loadPriceTable } from '../../musher/prices.js';
import { openStore, type Db } from '../../musher/store/db.js';
import { PlatformKeyStore } from '../../musher/store/platform-key.js';
import { GatewayBatchStore } from '../../musher/store/gateway-batches.js';
import type { Timers } from '../../musher/timers.js';
import type { BatchSettings } from '../../musher/gateway/batch-route.js';
import type { FlexSettings } from '../../musher/gateway/flex.js';
import { REPO_ROOT } from './sleds-env.js';

export const prices = loadPriceTable(REPO_ROOT);

export interface GatewayWorld {
  gateway: Gateway;
  db: Db;
  rail: PlatformKeyStore;
  batches: GatewayBatchStore;
  tokens: GatewayTokens;
  logLines: string[];
  allowance: { current: Allowance };
  /** dana's local token, good for 7 days from the clock's now. */
  token: string;
  /** dana's batch-tier token (half price: a Message Batch of one for Claude, flex for OpenAI), the same 7 days. */
  batchToken: string;
}

export async function gatewayWorld(
  cleanups: Array<() => Promise<unknown> | unknown>,
  opts: {
    upstreams: { anthropic?: string; openai?: string };
    platformKey: (provider: GatewayProvider) => Promise<string | null>;
    clock: { now(): number };
    timers?: Timers;
    drain?: DrainSettings;
    batch?: Partial<BatchSettings>;
    flex?: Partial<FlexSettings>;
    /** A folder whose sleds.db this gateway shares with another (a musher restarted on the same store); kept after. */
    dir?: string;
  },
): Promise<GatewayWorld> {
  const dir = opts.dir ?? mkdtempSync(join(tmpdir(), 'sl-gw-'));
  const db = openStore(join(dir, 'sleds.db'));
  const logLines: string[] = [];
  const log: Log = { info: (m) => logLines.push(`INFO ${m}`), warn: (m) => logLines.push(`WARN ${m}`), error: (m) => logLines.push(`ERROR ${m}`) };
  const rail = new PlatformKeyStore(db);
  const batches = new GatewayBatchStore(db);
  const tokens = new GatewayTokens(db, () => opts.clock.now());
  const allowance = { current: { perDayMicros: null, perWeekMicros: null } as Allowance };
  const gateway = await startGateway({
    upstreams: { anthropic: opts.upstreams.anthropic ?? 'http://127.0.0.1:9', openai: opts.upstreams.openai ?? 'http://127.0.0.1:9' },
    tokens,
    platformKeys: rail,
    batches,
    prices,
    clock: opts.clock,
    log,
    platformKey: opts.platformKey,
    allowance: () => allowance.current,
    utcOffset: () => 0,
    ...(opts.timers ? { timers: opts.timers } : {}),
    ...(opts.drain ? { drain: opts.drain } : {}),
    ...(opts.batch ? { batch: opts.batch } : {}),
    ...(opts.flex ? { flex: opts.flex } : {}),
  });
  cleanups.push(async () => {
    await gateway.close();
    db.close();
    if (!opts.dir) rmSync(dir, { recursive: true, force: true });
  });
  const token = tokens.mint({ seat: 'dana', project: 'acme/api', sessionId: 'sess-1', expiresAtMs: opts.clock.now() + 7 * 86_400_000 });
  const batchToken = tokens.mint({ seat: 'dana', project: 'acme/api', sessionId: 'sess-night', expiresAtMs: opts.clock.now() + 7 * 86_400_000, tier: 'batch' });
  return { gateway, db, rail, batches, tokens, logLines, allowance, token, batchToken };
}

export interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** One POST of a JSON body, read to its end. */
export function post(base: string, path: string, headers: Record<string, string>, body: unknown): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}
