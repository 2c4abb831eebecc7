import type { KeyRow } from '../../core/report/report.js';
import type { Db } from './db.js';

/**
 * The platform-key rail: what the team's API key spent, per seat, project and model. The gateway (the wall's
 * "continue on the key" exit) meters every response into it; musher reads it for status and the allowance.
 */
export interface PlatformKeyUse {
  /** The response's request id: a re-read or a retry of the same record never counts twice. */
  requestId: string;
  seat: string;
  project: string | null;
  model: string;
  timestampMs: number;
  inputTokens: number;
  outputTokens: number;
  cacheWriteTokens: number;
  cacheReadTokens: number;
  /** Null when the model has no price: shown as unpriced, never as $0. */
  costMicros: number | null;
  source: string;
  /** False when the response ended before its final usage: the output is the gateway's estimate from the deltas it
   * saw (core/gateway/output-estimate.ts), which errs high. */
  outputKnown?: boolean;
  /** The session the gateway's token was minted for (a task's receipt sums its sessions' key spend). */
  sessionId?: string | null;
}

export interface KeySpend {
  seat: string;
  model: string;
  costMicros: number;
  unpricedRecords: number;
  records: number;
}

export class PlatformKeyStore {
  private readonly insert;
  private readonly rangeStmt;
  private readonly seatStmt;
  constructor(private readonly db: Db) {
    this.insert = db.prepare(
      `INSERT OR IGNORE INTO platform_key_usage (request_id, seat, project, model, ts, input_tokens, output_tokens, cache_write,
         cache_read, cost_micros, source, output_known, session_id)
       VALUES (@requestId, @seat, @project, @model, @timestampMs, @inputTokens, @outputTokens, @cacheWriteTokens,
         @cacheReadTokens, @costMicros, @source, @outputKnown, @sessionId)`,
    );
    this.seatStmt = db.prepare(
      `SELECT COALESCE(SUM(cost_micros), 0) AS cost FROM platform_key_usage WHERE ts >= ? AND ts < ? AND seat = ?`,
    );
    this.rangeStmt = db.prepare(
      `SELECT seat, model, COALESCE(SUM(cost_micros), 0) AS cost, SUM(cost_micros IS NULL) AS unpriced, COUNT(*) AS n
       FROM platform_key_usage WHERE ts >= ? AND ts < ? GROUP BY seat, model ORDER BY cost DESC`,
    );
  }

  /** False when this response was recorded before. */
  record(use: PlatformKeyUse): boolean {
    return this.insert.run({ ...use, outputKnown: use.outputKnown === false ? 0 : 1, sessionId: use.sessionId ?? null }).changes > 0;
  }

  /** The priced key spend of these sessions (a task's receipt: "of which on the key"). */
  sessionsSpendMicros(sessionIds: readonly string[]): number {
    if (sessionIds.length === 0) return 0;
    const r = this.db.prepare(`SELECT COALESCE(SUM(cost_micros), 0) AS cost FROM platform_key_usage WHERE session_id IN (${sessionIds.map(() => '?').join(',')})`).get(...sessionIds) as { cost: number };
    return r.cost;
  }

  /** One seat's priced spend between two times (the allowance's measure; unpriced responses add nothing). */
  seatSpendMicros(seat: string, fromMs: number, toMs: number): number {
    return (this.seatStmt.get(fromMs, toMs, seat) as { cost: number }).cost;
  }

  /** Every reply the key paid between two times, for the reports (core/report/report.ts). */
  reportRows(fromMs: number, toMs: number): KeyRow[] {
    return this.db
      .prepare(`SELECT ts, session_id AS sessionId, model, project, seat, cost_micros AS costMicros FROM platform_key_usage WHERE ts >= ? AND ts < ?`)
      .all(fromMs, toMs) as KeyRow[];
  }

  /** Spend per seat and model between two times. */
  spend(fromMs: number, toMs: number): KeySpend[] {
    return (this.rangeStmt.all(fromMs, toMs) as Array<{ seat: string; model: string; cost: number; unpriced: number; n: number }>).map((r) => ({
      seat: r.seat,
      model: r.model,
      costMicros: r.cost,
      unpricedRecords: r.unpriced,
      records: r.n,
    }));
  }
}
