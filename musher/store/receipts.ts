import type { Db } from './db.js';
import { canonicalReceipt } from '../../core/receipt/canonical.js';
import type { ReceiptBody, SignedReceipt } from '../../core/receipt/receipt.js';

/**
 * Receipts, one per task. The only writer of `receipts`. The body is kept as the canonical bytes it was signed
 * over, so verifying a stored receipt checks exactly what was signed.
 */
export class ReceiptStore {
  private readonly insertStmt;
  private readonly byTaskStmt;
  private readonly getStmt;
  private readonly sinceStmt;
  constructor(private readonly db: Db) {
    this.insertStmt = db.prepare(
      `INSERT OR IGNORE INTO receipts (id, task_id, body, signature, signer, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
    );
    this.byTaskStmt = db.prepare(`SELECT * FROM receipts WHERE task_id = ?`);
    this.getStmt = db.prepare(`SELECT * FROM receipts WHERE id = ?`);
    this.sinceStmt = db.prepare(`SELECT rowid AS row, body FROM receipts WHERE rowid > ? ORDER BY rowid`);
  }

  /** Keeps a receipt; false when its task has one already (never two for a task). */
  insert(r: SignedReceipt, at: number): boolean {
    return this.insertStmt.run(r.body.id, r.body.taskId, canonicalReceipt(r.body), r.signature, r.signer, at).changes > 0;
  }

  forTask(taskId: string): SignedReceipt | null {
    const row = this.byTaskStmt.get(taskId) as Row | undefined;
    return row ? toReceipt(row) : null;
  }

  get(id: string): SignedReceipt | null {
    const row = this.getStmt.get(id) as Row | undefined;
    return row ? toReceipt(row) : null;
  }

  /** A receipt by its id, an unambiguous prefix of it, or its task's id. */
  find(idOrPrefix: string): SignedReceipt | null | 'ambiguous' {
    const exact = this.get(idOrPrefix) ?? this.forTask(idOrPrefix);
    if (exact) return exact;
    if (idOrPrefix.length < 4) return null;
    const rows = this.db.prepare(`SELECT * FROM receipts WHERE id LIKE ? ESCAPE '\\' LIMIT 2`).all(`${idOrPrefix.replace(/[%_\\]/g, '\\$&')}%`) as Row[];
    if (rows.length > 1) return 'ambiguous';
    return rows[0] ? toReceipt(rows[0]) : null;
  }

  /** Newest first. */
  list(limit = 50): SignedReceipt[] {
    return (this.db.prepare(`SELECT * FROM receipts ORDER BY created_at DESC, id LIMIT ?`).all(limit) as Row[]).map(toReceipt);
  }

  /**
   * The receipts written after row `afterRow`, oldest first, with their row numbers (receipts are never changed once
   * written: a reader that has seen up to a row needs only the rows after it).
   */
  since(afterRow: number): Array<{ row: number; body: string }> {
    return this.sinceStmt.all(afterRow) as Array<{ row: number; body: string }>;
  }
}

interface Row {
  id: string;
  task_id: string;
  body: string;
  signature: string | null;
  signer: string | null;
  created_at: number;
}

/**
 * A row as it is stored: the body is not reshaped by a schema, so a body edited in the database is shown, and
 * fails verify, exactly as it now stands.
 */
function toReceipt(r: Row): SignedReceipt {
  return { body: JSON.parse(r.body) as ReceiptBody, signature: r.signature, signer: r.signer };
}
