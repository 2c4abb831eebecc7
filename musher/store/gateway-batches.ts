import type { Db } from './db.js';

/**
 * The Message Batches the gateway's batch tier sent (musher/gateway/batch-route.ts), kept so that a musher killed
 * while a batch runs loses nothing: the same request sent again to the restarted musher finds its batch here and
 * follows it instead of buying another, and the answer is billed by whichever process first reads it, once.
 * The only writer of `gateway_batches`.
 *
 * States: `running` from the create on (the API has it, and will bill it when it ends); `ended` once its answer was
 * read (it still answers the same request within the dedup window); `failed` when it ended without an answer
 * (errored, expired, canceled): sent again, that request deserves a new batch. A batch whose end nobody saw (musher
 * stopped, the API unreachable) stays `running`: it may still end, and paying for a second one is what this prevents.
 */
export type GatewayBatchState = 'running' | 'ended' | 'failed';

export interface StoredBatch {
  batchId: string;
  /** sha256 of the seat and the request body (the gateway's dedup key). */
  dedupKey: string;
  seat: string;
  /** This request's custom_id in the batch: its line of the results. */
  customId: string;
  createdAtMs: number;
  state: GatewayBatchState;
  endedAtMs: number | null;
  billedAtMs: number | null;
}

/** A Message Batch ends within 24 hours (expired past that): a `running` row older than that is no batch to follow. */
export const BATCH_LIFETIME_MS = 24 * 3_600_000;

interface Row {
  batch_id: string;
  dedup_key: string;
  seat: string;
  custom_id: string;
  created_at: number;
  state: GatewayBatchState;
  ended_at: number | null;
  billed_at: number | null;
}

function stored(r: Row): StoredBatch {
  return { batchId: r.batch_id, dedupKey: r.dedup_key, seat: r.seat, customId: r.custom_id, createdAtMs: r.created_at, state: r.state, endedAtMs: r.ended_at, billedAtMs: r.billed_at };
}

export class GatewayBatchStore {
  private readonly insert;
  private readonly setState;
  private readonly findStmt;
  private readonly bill;
  private readonly pruneStmt;
  private readonly getStmt;
  constructor(private readonly db: Db) {
    this.insert = db.prepare(
      `INSERT OR IGNORE INTO gateway_batches (batch_id, dedup_key, seat, custom_id, created_at, state) VALUES (@batchId, @dedupKey, @seat, @customId, @createdAtMs, 'running')`,
    );
    this.setState = db.prepare(`UPDATE gateway_batches SET state = ?, ended_at = ? WHERE batch_id = ? AND state = 'running'`);
    this.findStmt = db.prepare(
      `SELECT * FROM gateway_batches WHERE dedup_key = ? AND ((state = 'running' AND created_at >= ?) OR (state = 'ended' AND ended_at >= ?))
       ORDER BY created_at DESC LIMIT 1`,
    );
    this.bill = db.prepare(`UPDATE gateway_batches SET billed_at = ? WHERE batch_id = ? AND billed_at IS NULL`);
    this.pruneStmt = db.prepare(`DELETE FROM gateway_batches WHERE created_at < ?`);
    this.getStmt = db.prepare(`SELECT * FROM gateway_batches WHERE batch_id = ?`);
  }

  /** A batch the API accepted: kept before its client hears anything. */
  created(b: { batchId: string; dedupKey: string; seat: string; customId: string; createdAtMs: number }): void {
    this.insert.run(b);
  }

  /** Its answer was read (`ended`), or it ended without one (`failed`). Only a running batch moves. */
  finished(batchId: string, state: Exclude<GatewayBatchState, 'running'>, atMs: number): void {
    this.setState.run(state, atMs, batchId);
  }

  /**
   * The batch this request already has: one still running (within a batch's lifetime), or one whose answer was
   * read within `dedupMs`. The newest, if a request was sent more than once.
   */
  find(dedupKey: string, nowMs: number, dedupMs: number): StoredBatch | null {
    const r = this.findStmt.get(dedupKey, nowMs - BATCH_LIFETIME_MS, nowMs - dedupMs) as Row | undefined;
    return r ? stored(r) : null;
  }

  get(batchId: string): StoredBatch | null {
    const r = this.getStmt.get(batchId) as Row | undefined;
    return r ? stored(r) : null;
  }

  /**
   * Meters a batch's answer unless some process did already: `billed_at` is claimed and `meter` runs in one
   * transaction, so of two readers of the same result exactly one bills it, and a crash between the two leaves
   * neither. True when this call billed it. A batch with no row (pruned) is not billed here.
   */
  billOnce(batchId: string, atMs: number, meter: () => void): boolean {
    return this.db.transaction(() => {
      if (this.bill.run(atMs, batchId).changes === 0) return false;
      meter();
      return true;
    })();
  }

  /** Forgets the batches created before `beforeMs`; how many. */
  prune(beforeMs: number): number {
    return this.pruneStmt.run(beforeMs).changes;
  }
}
