import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { harnessOfProvider } from '../../harnesses/registry.js';
import { writeFileAtomic } from '../fs-atomic.js';
import type { Allowance, UtcOffset } from '../../core/gateway/allowance.js';
import type { TokenGrant } from './tokens.js';
import type { GatewayProvider } from '../../core/gateway/meter.js';
import type { PriceTable } from '../../core/price-table.js';
import type { Clock } from '../clock.js';
import type { Log } from '../log.js';
import type { Db } from '../store/db.js';
import type { PlatformKeyStore } from '../store/platform-key.js';
import { GatewayBatchStore } from '../store/gateway-batches.js';
import type { SecretStore } from '../secrets/store.js';
import { PLATFORM_KEY_SECRETS } from '../secrets/platform-keys.js';
import { startGateway, type Gateway } from './server.js';
import type { BatchSettings } from './batch-route.js';
import { GatewayTokens, TOKEN_TIERS } from './tokens.js';
import { seatHandle } from '../config/handle.js';

type Env = Record<string, string | undefined>;

/** The gateway inside musher: started when a platform key is configured, tokens minted over the musher socket. */
export interface GatewayServiceOptions {
  db: Db;
  platformKeys: PlatformKeyStore;
  prices: PriceTable;
  clock: Clock;
  log: Log;
  secrets: SecretStore;
  allowance(seat: string, grant: TokenGrant): Allowance;
  /** The seat's zone for "today" and "this week" (musher's `timeZone`); default the process's. */
  utcOffset?: UtcOffset;
  env: Env;
  /** Where the gateway's port is kept across restarts (<data dir>/gateway.json), so a resumed session's
   * ANTHROPIC_BASE_URL stays right after musher restarts and never points at a port another program may take. */
  portFile: string;
  /** How long a stored port that is busy is tried again before another is taken; default 3 s. */
  busyWaitMs?: number;
  /** Where the gateway forwards (the platform key goes there): config.yml's upstreams, never the environment. */
  upstreams: Record<GatewayProvider, string>;
  /** The batch route's pace, from config.yml's `gateway:` (the defaults where unset). */
  batch?: Partial<BatchSettings>;
}

const DEFAULT_TOKEN_TTL_MS = 24 * 3_600_000;
const DEFAULT_BUSY_WAIT_MS = 3_000;
const BUSY_RETRY_MS = 100;

const PortFile = z.object({ port: z.number().int().min(1).max(65535) });
const MAX_TOKEN_TTL_MS = 7 * 24 * 3_600_000;

export const MintRequest = z.object({
  seat: z.string().min(1).max(200).optional(),
  project: z.string().min(1).max(500).nullish(),
  sessionId: z.string().min(1).max(200),
  wallId: z.string().min(1).max(100).nullish(),
  ttlMs: z.number().int().positive().max(MAX_TOKEN_TTL_MS).optional(),
  /** 'batch': the half-price tier (a Message Batch of one for Claude, flex for OpenAI); default 'standard'. */
  tier: z.enum(TOKEN_TIERS).optional(),
});

/** The seat musher speaks for now: the one handle (musher/config/handle.ts); 'me' when there is none. */
export function seatName(env: Env): string {
  return seatHandle(env) ?? 'me';
}

export class GatewayService {
  readonly tokens: GatewayTokens;
  private readonly batches: GatewayBatchStore;
  /** Read on each use: a handle set with `sleds keys init --handle` needs no restart. */
  get seat(): string {
    return seatName(this.opts.env);
  }
  private gateway: Gateway | null = null;
  private starting: Promise<Gateway | null> | null = null;

  constructor(private readonly opts: GatewayServiceOptions) {
    this.tokens = new GatewayTokens(opts.db, () => opts.clock.now());
    this.batches = new GatewayBatchStore(opts.db);
  }

  private async keyConfigured(): Promise<boolean> {
    for (const name of Object.values(PLATFORM_KEY_SECRETS)) {
      if (await this.opts.secrets.get(name)) return true;
    }
    return false;
  }

  /** Starts the gateway when a platform key is configured; resolves to it, or null when there is no key. */
  startIfConfigured(): Promise<Gateway | null> {
    if (this.gateway) return Promise.resolve(this.gateway);
    this.starting ??= (async () => {
      try {
        if (!(await this.keyConfigured())) return null;
        this.gateway = await this.listen();
        this.opts.log.info(`gateway listening on ${this.gateway.url}`);
        return this.gateway;
      } finally {
        this.starting = null;
      }
    })();
    return this.starting;
  }

  /**
   * The port: SLEDS_GATEWAY_PORT when set (1–65535; a busy one is an error), else the one stored from the last start,
   * else any free one, then stored. A stored port that stays busy for busyWaitMs (an old musher letting go) is
   * given up: the gateway takes another port, stores it, and revokes every outstanding token — a session still
   * pointed at the old port would hand its token to whatever listens there now, and that token must buy nothing
   * here. The log says so; those sessions are resumed again from their wall.
   */
  private async listen(): Promise<Gateway> {
    const env = this.opts.env;
    const fixed = env.SLEDS_GATEWAY_PORT ? Number(env.SLEDS_GATEWAY_PORT) : 0;
    if (!Number.isInteger(fixed) || fixed < 0 || fixed > 65535) throw new Error(`SLEDS_GATEWAY_PORT=${env.SLEDS_GATEWAY_PORT} is not a port number`);
    if (fixed) return this.startOn(fixed);
    const stored = this.storedPort();
    if (stored !== null) {
      const deadline = this.opts.clock.now() + (this.opts.busyWaitMs ?? DEFAULT_BUSY_WAIT_MS);
      for (;;) {
        try {
          return await this.startOn(stored);
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw e;
          if (this.opts.clock.now() >= deadline) break;
          await new Promise((r) => setTimeout(r, BUSY_RETRY_MS));
        }
      }
    }
    const gateway = await this.startOn(0);
    await this.storePort(gateway.port);
    if (stored !== null) {
      const revoked = this.tokens.revokeOutstanding();
      this.opts.log.warn(
        `gateway: port ${stored} is taken by another program; now on ${gateway.port} (stored). Revoked ${revoked} outstanding token${revoked === 1 ? '' : 's'}: a session still pointed at port ${stored} would send its token there — resume those sessions from their wall again`,
      );
    }
    return gateway;
  }

  private startOn(port: number): Promise<Gateway> {
    return startGateway({
      host: '127.0.0.1',
      port,
      upstreams: {
        anthropic: this.opts.upstreams.anthropic,
        openai: this.opts.upstreams.openai,
      },
      tokens: this.tokens,
      platformKeys: this.opts.platformKeys,
      batches: this.batches,
      prices: this.opts.prices,
      clock: this.opts.clock,
      log: this.opts.log,
      platformKey: (provider) => this.opts.secrets.get(PLATFORM_KEY_SECRETS[provider]),
      allowance: (seat, grant) => this.opts.allowance(seat, grant),
      utcOffset: this.opts.utcOffset,
      ...(this.opts.batch ? { batch: this.opts.batch } : {}),
    });
  }

  private storedPort(): number | null {
    let text: string;
    try {
      text = readFileSync(this.opts.portFile, 'utf8');
    } catch {
      // No port file yet: no stored port.
      return null;
    }
    try {
      const parsed = PortFile.safeParse(JSON.parse(text));
      if (parsed.success) return parsed.data.port;
    } catch {
      // not JSON: said below
    }
    this.opts.log.warn(`gateway: ${this.opts.portFile} holds no port; taking a new one`);
    return null;
  }

  private storePort(port: number): Promise<void> {
    return writeFileAtomic(this.opts.portFile, Buffer.from(`${JSON.stringify({ port })}\n`), 0o600);
  }

  state(): { running: boolean; url: string | null } {
    return { running: this.gateway !== null, url: this.gateway?.url ?? null };
  }

  /** `POST /v1/gateway/tokens`: a token for one resumed session, and the base URLs to hand the harness. */
  async mint(body: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
    const parsed = MintRequest.safeParse(body);
    if (!parsed.success) {
      const i = parsed.error.issues[0];
      return { status: 400, body: { error: `${i?.path.join('.') || 'body'}: ${i?.message ?? 'invalid'} — send {sessionId, seat?, project?, wallId?, ttlMs?, tier?: standard|batch}` } };
    }
    let gateway: Gateway | null;
    try {
      gateway = await this.startIfConfigured();
    } catch (e) {
      return { status: 500, body: { error: `the gateway could not start: ${(e as Error).message}` } };
    }
    if (!gateway) return { status: 409, body: { error: "no platform key configured — run 'sleds key set anthropic' (or openai) first" } };
    const req = parsed.data;
    const expiresAtMs = this.opts.clock.now() + (req.ttlMs ?? DEFAULT_TOKEN_TTL_MS);
    const token = this.tokens.mint({ seat: req.seat ?? this.seat, project: req.project ?? null, sessionId: req.sessionId, wallId: req.wallId ?? null, expiresAtMs, tier: req.tier ?? 'standard' });
    const openaiBaseUrl = `${gateway.url}/v1`;
    // The reply's claudeEnv: the environment the Claude Code adapter points a session at the gateway with
    // (harnesses/claude-code/index.ts: ANTHROPIC_AUTH_TOKEN, which asks no "use this API key?" question).
    // The harness of the Anthropic-shaped gateway's plan (harnessOfProvider), whose env the reply's claudeEnv is.
    const claude = harnessOfProvider('anthropic')?.gatewayLaunch({ token, anthropicBaseUrl: gateway.url, openaiBaseUrl, sessionProvider: null, slow: req.tier === 'batch' });
    const claudeEnv = claude?.ok ? claude.env : {};
    return { status: 200, body: { token, baseUrl: gateway.url, openaiBaseUrl, expiresAtMs, tier: req.tier ?? 'standard', claudeEnv } };
  }

  async close(): Promise<void> {
    await this.starting?.catch(() => null);
    await this.gateway?.close();
    this.gateway = null;
  }
}
