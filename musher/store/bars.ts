import type { Db } from './db.js';

export interface BarReading {
  provider: string;
  /** Whose bar (core/account.ts): readings of two accounts never mix. */
  account: string;
  accountLabel?: string | null;
  window: string;
  usedPct: number;
  /** Epoch ms, or null when the source does not say. */
  resetsAt: number | null;
  observedAt: number;
  source: string;
  sessionId?: string | null;
}

export interface BarRow {
  provider: string;
  account: string;
  accountLabel: string | null;
  window: string;
  usedPct: number;
  resetsAt: number | null;
  /** When this value was first seen. */
  changedAt: number;
  /** When a source last reported it: the data's age is measured from here. */
  observedAt: number;
  source: string;
  /** The session whose reading this is (null: the usage endpoint, or a source that names none). */
  sessionId: string | null;
}

/** A sample is kept when the value moves, and at least every few minutes while it holds (for forecasting). */
const HOLD_SAMPLE_EVERY_MS = 5 * 60_000;
/** Resets this close together are the same window (sources round them differently). */
const SAME_RESET_TOLERANCE_MS = 2 * 60_000;

/** Same window, not a rollover: the reset did not move (or a source did not say). */
export function sameTrail(a: number | null, b: number | null): boolean {
  return a === null || b === null || Math.abs(a - b) <= SAME_RESET_TOLERANCE_MS;
}

/** The reading comes from whoever set the bar's mark: the same session, or the usage endpoint again. */
function sameReader(mark: Record<string, number | string | null>, reading: BarReading): boolean {
  if (reading.sessionId) return mark.session_id === reading.sessionId;
  return reading.source === 'usage-endpoint' && mark.source === 'usage-endpoint';
}

/** The plan bars (5-hour, weekly, …): the latest reading per account and window, and the trail of samples. */
export class BarStore {
  private readonly getStmt;
  private readonly upsert;
  private readonly insertSample;
  private readonly lastSampleStmt;
  private readonly allStmt;
  private readonly samplesStmt;
  constructor(private readonly db: Db) {
    this.getStmt = db.prepare(`SELECT * FROM bars WHERE provider = ? AND account = ? AND window = ?`);
    this.upsert = db.prepare(
      `INSERT INTO bars (provider, account, account_label, window, used_pct, resets_at, changed_at, observed_at, source, session_id)
       VALUES (@provider, @account, @accountLabel, @window, @usedPct, @resetsAt, @changedAt, @observedAt, @source, @sessionId)
       ON CONFLICT(provider, account, window) DO UPDATE SET used_pct = excluded.used_pct, resets_at = excluded.resets_at,
         changed_at = excluded.changed_at, observed_at = excluded.observed_at, source = excluded.source,
         session_id = excluded.session_id, account_label = COALESCE(excluded.account_label, account_label)`,
    );
    this.insertSample = db.prepare(
      `INSERT INTO bar_samples (provider, account, window, used_pct, resets_at, observed_at, source, session_id)
       VALUES (@provider, @account, @window, @usedPct, @resetsAt, @observedAt, @source, @sessionId)`,
    );
    this.lastSampleStmt = db.prepare(
      `SELECT observed_at FROM bar_samples WHERE provider = ? AND account = ? AND window = ? ORDER BY observed_at DESC LIMIT 1`,
    );
    this.allStmt = db.prepare(`SELECT * FROM bars ORDER BY provider, account, window`);
    this.samplesStmt = db.prepare(
      `SELECT * FROM bar_samples WHERE provider = ? AND account = ? AND window = ? AND observed_at >= ? ORDER BY observed_at`,
    );
  }

  /**
   * Rows kept before bars had an account (and samples a test or an old musher wrote without one) are the account
   * musher reads by default: the only one whose readings it could tell from another's then.
   */
  adoptUnkeyed(provider: string, account: string, accountLabel: string | null): void {
    this.db.transaction(() => {
      // A row already kept for the account is newer than anything from before accounts.
      this.db.prepare(`DELETE FROM bars WHERE provider = ? AND account = '' AND window IN (SELECT window FROM bars WHERE provider = ? AND account = ?)`).run(provider, provider, account);
      this.db.prepare(`UPDATE bars SET account = ?, account_label = COALESCE(account_label, ?) WHERE provider = ? AND account = ''`).run(account, accountLabel, provider);
      this.db.prepare(`UPDATE bar_samples SET account = ? WHERE provider = ? AND account = ''`).run(account, provider);
    })();
  }

  /**
   * Records a reading. Every reading is kept as a sample (with its source). Within one window a lower value from
   * another reader is a stale session's, so the bar holds its mark; but a newer reading from the reader the mark
   * came from (the same session, or the usage endpoint again) wins even when lower: usage can go down inside a
   * window (rolled back, a promotion, another account after /login). A moved reset (a rollover) starts it afresh.
   */
  record(reading: BarReading): void {
    this.db.transaction(() => {
      const current = this.getStmt.get(reading.provider, reading.account, reading.window) as Record<string, number | string | null> | undefined;
      const last = this.lastSampleStmt.get(reading.provider, reading.account, reading.window) as { observed_at: number } | undefined;
      const unchanged = current && current.used_pct === reading.usedPct && current.resets_at === reading.resetsAt;
      if (!unchanged || !last || reading.observedAt - last.observed_at >= HOLD_SAMPLE_EVERY_MS) {
        this.insertSample.run({ ...reading, sessionId: reading.sessionId ?? null });
      }
      if (current && (current.observed_at as number) > reading.observedAt) return; // an older reading arriving late
      const resetsAt = (current?.resets_at as number | null | undefined) ?? null;
      const rollover = current !== undefined && !sameTrail(resetsAt, reading.resetsAt) && (reading.resetsAt ?? 0) > (resetsAt ?? 0);
      if (current && !rollover && reading.usedPct < (current.used_pct as number) && !sameReader(current, reading)) {
        // Stale and lower: the bar holds its mark; the reading still tells us the reset, if we had none.
        if (resetsAt === null && reading.resetsAt !== null) this.upsert.run({ ...this.rowOf(current), resetsAt: reading.resetsAt, accountLabel: null });
        return;
      }
      if (current && !rollover && reading.resetsAt !== null && resetsAt !== null && reading.resetsAt < resetsAt - SAME_RESET_TOLERANCE_MS) return;
      const changedAt = unchanged ? (current!.changed_at as number) : reading.observedAt;
      this.upsert.run({
        ...reading,
        accountLabel: reading.accountLabel ?? null,
        sessionId: reading.sessionId ?? null,
        resetsAt: reading.resetsAt ?? (rollover ? null : resetsAt),
        changedAt,
      });
    })();
  }

  private rowOf(r: Record<string, number | string | null>): BarReading & { changedAt: number } {
    return {
      provider: r.provider as string,
      account: r.account as string,
      window: r.window as string,
      usedPct: r.used_pct as number,
      resetsAt: (r.resets_at as number | null) ?? null,
      observedAt: r.observed_at as number,
      changedAt: r.changed_at as number,
      source: r.source as string,
      sessionId: (r.session_id as string | null) ?? null,
    };
  }

  /** Every account's bars; `forAccount` narrows to one. */
  all(): BarRow[] {
    return (this.allStmt.all() as Array<Record<string, unknown>>).map((r) => ({
      provider: r.provider as string,
      account: r.account as string,
      accountLabel: (r.account_label as string | null) ?? null,
      window: r.window as string,
      usedPct: r.used_pct as number,
      resetsAt: (r.resets_at as number | null) ?? null,
      changedAt: r.changed_at as number,
      observedAt: r.observed_at as number,
      source: r.source as string,
      sessionId: (r.session_id as string | null) ?? null,
    }));
  }

  /** One account's bars of one provider. */
  forAccount(provider: string, account: string): BarRow[] {
    return this.all().filter((b) => b.provider === provider && b.account === account);
  }

  samples(provider: string, account: string, window: string, sinceMs: number): Array<{ usedPct: number; resetsAt: number | null; observedAt: number; source: string }> {
    return (this.samplesStmt.all(provider, account, window, sinceMs) as Array<Record<string, unknown>>).map((r) => ({
      usedPct: r.used_pct as number,
      resetsAt: (r.resets_at as number | null) ?? null,
      observedAt: r.observed_at as number,
      source: r.source as string,
    }));
  }
}
