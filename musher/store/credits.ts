import type { Db } from './db.js';

/** One reading of a seat's credits: Claude's extra usage (used of a monthly limit) or Codex's credit balance. */
export interface CreditReading {
  provider: string;
  observedAt: number;
  enabled: boolean | null;
  unlimited: boolean | null;
  /** ISO 4217; null when the source does not say. */
  currency: string | null;
  /** Digits after the decimal point: amounts are integer minor units, so spend reconciles to the cent. */
  exponent: number;
  usedMinor: number | null;
  limitMinor: number | null;
  balanceMinor: number | null;
  utilizationPct: number | null;
  disabledReason: string | null;
  source: string;
}

/** The seat-credits rail. */
export class CreditStore {
  private readonly insert;
  private readonly latestStmt;
  constructor(db: Db) {
    this.insert = db.prepare(
      `INSERT INTO credit_readings (provider, observed_at, enabled, unlimited, currency, exponent, used_minor, limit_minor,
         balance_minor, utilization_pct, disabled_reason, source)
       VALUES (@provider, @observedAt, @enabled, @unlimited, @currency, @exponent, @usedMinor, @limitMinor, @balanceMinor,
         @utilizationPct, @disabledReason, @source)`,
    );
    this.latestStmt = db.prepare(
      `SELECT * FROM credit_readings c WHERE observed_at = (SELECT MAX(observed_at) FROM credit_readings WHERE provider = c.provider)
       GROUP BY provider`,
    );
  }

  record(r: CreditReading): void {
    const bool = (b: boolean | null) => (b === null ? null : b ? 1 : 0);
    this.insert.run({ ...r, enabled: bool(r.enabled), unlimited: bool(r.unlimited) });
  }

  /** The latest reading per provider. */
  latest(): CreditReading[] {
    const bool = (v: unknown) => (v === null || v === undefined ? null : v === 1);
    return (this.latestStmt.all() as Array<Record<string, unknown>>).map((r) => ({
      provider: r.provider as string,
      observedAt: r.observed_at as number,
      enabled: bool(r.enabled),
      unlimited: bool(r.unlimited),
      currency: (r.currency as string | null) ?? null,
      exponent: r.exponent as number,
      usedMinor: (r.used_minor as number | null) ?? null,
      limitMinor: (r.limit_minor as number | null) ?? null,
      balanceMinor: (r.balance_minor as number | null) ?? null,
      utilizationPct: (r.utilization_pct as number | null) ?? null,
      disabledReason: (r.disabled_reason as string | null) ?? null,
      source: r.source as string,
    }));
  }
}
