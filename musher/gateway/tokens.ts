import { createHash, randomBytes } from 'node:crypto';
import type { Db } from '../store/db.js';

/**
 * The gateway's local tokens: the harness never sees the platform key. musher mints one per resumed session and
 * the harness sends it as its API key; the gateway swaps it for the real key. Only the token's sha256 is stored,
 * so the database alone cannot be used to spend. The only writer of `gateway_tokens`.
 */
export const TOKEN_PREFIX = 'sleds_gw_';

/**
 * The price tier a token buys. 'batch' is the overnight half-price tier: a Claude Messages request goes out as a Message
 * Batch of one (musher/gateway/batch-route.ts), an OpenAI Responses request with `service_tier: "flex"`; answers are
 * slower (minutes), billed at half.
 */
export const TOKEN_TIERS = ['standard', 'batch'] as const;
export type TokenTier = (typeof TOKEN_TIERS)[number];

export interface TokenGrant {
  seat: string;
  project: string | null;
  sessionId: string;
  wallId: string | null;
  expiresAtMs: number;
  tier: TokenTier;
}

export type TokenCheck = { ok: true; grant: TokenGrant } | { ok: false; reason: 'unknown' | 'expired' };

function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

export class GatewayTokens {
  private readonly insert;
  private readonly lookup;
  private readonly prune;
  private readonly revoke;
  constructor(
    db: Db,
    private readonly now: () => number,
  ) {
    this.insert = db.prepare(
      `INSERT INTO gateway_tokens (token_hash, seat, project, session_id, wall_id, created_at, expires_at, tier)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    this.lookup = db.prepare(`SELECT seat, project, session_id, wall_id, expires_at, tier FROM gateway_tokens WHERE token_hash = ?`);
    this.prune = db.prepare(`DELETE FROM gateway_tokens WHERE expires_at < ?`);
    this.revoke = db.prepare(`UPDATE gateway_tokens SET expires_at = ? WHERE expires_at > ?`);
  }

  /** A new token for one session: `sleds_gw_` + 32 random bytes (base64url). */
  mint(grant: { seat: string; project?: string | null; sessionId: string; wallId?: string | null; expiresAtMs: number; tier?: TokenTier }): string {
    const now = this.now();
    // Tokens a day past their expiry are of no use even to explain a 401: drop them as new ones are made.
    this.prune.run(now - 86_400_000);
    const token = `${TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`;
    this.insert.run(hashToken(token), grant.seat, grant.project ?? null, grant.sessionId, grant.wallId ?? null, now, grant.expiresAtMs, grant.tier ?? 'standard');
    return token;
  }

  /**
   * Ends every token still valid (they read as expired from now on); how many. For a gateway that had to move to
   * another port: a session still pointed at the old one would send its token to whoever listens there now.
   */
  revokeOutstanding(): number {
    const now = this.now();
    return this.revoke.run(now, now).changes;
  }

  check(token: string): TokenCheck {
    if (!token.startsWith(TOKEN_PREFIX)) return { ok: false, reason: 'unknown' };
    const row = this.lookup.get(hashToken(token)) as
      | { seat: string; project: string | null; session_id: string; wall_id: string | null; expires_at: number; tier: string }
      | undefined;
    if (!row) return { ok: false, reason: 'unknown' };
    if (row.expires_at <= this.now()) return { ok: false, reason: 'expired' };
    // A tier this musher does not know (a newer one wrote it) buys the standard one: never a cheaper path by mistake.
    const tier: TokenTier = row.tier === 'batch' ? 'batch' : 'standard';
    return { ok: true, grant: { seat: row.seat, project: row.project, sessionId: row.session_id, wallId: row.wall_id, expiresAtMs: row.expires_at, tier } };
  }
}
