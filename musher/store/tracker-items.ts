import type { Db } from './db.js';

/** A tracker item sleds took as a task, and the one comment it wrote there. */
export interface TrackerItemRow {
  /** The item's URL (the task's sourceRef). */
  sourceRef: string;
  adapter: string;
  /** How the adapter finds it again: "acme/shop#12". */
  itemKey: string;
  taskId: string;
  /** The adapter's id of sleds' comment; null until it is written. */
  commentRef: string | null;
  /** What the comment says now (an update that would not change it is not sent). */
  commentBody: string | null;
  commentedAt: number | null;
  receiptLine: string | null;
  seenAt: number;
}

/** The only writer of `tracker_items`. */
export class TrackerItemStore {
  constructor(private readonly db: Db) {}

  get(sourceRef: string): TrackerItemRow | null {
    const r = this.db.prepare(`SELECT * FROM tracker_items WHERE source_ref = ?`).get(sourceRef) as Record<string, unknown> | undefined;
    return r ? toRow(r) : null;
  }

  forTask(taskId: string): TrackerItemRow | null {
    const r = this.db.prepare(`SELECT * FROM tracker_items WHERE task_id = ? ORDER BY seen_at DESC LIMIT 1`).get(taskId) as Record<string, unknown> | undefined;
    return r ? toRow(r) : null;
  }

  /** Records the item (once); a later sighting only moves seen_at. */
  seen(row: { sourceRef: string; adapter: string; itemKey: string; taskId: string }, at: number): TrackerItemRow {
    this.db
      .prepare(
        `INSERT INTO tracker_items (source_ref, adapter, item_key, task_id, seen_at) VALUES (@sourceRef, @adapter, @itemKey, @taskId, @at)
         ON CONFLICT(source_ref) DO UPDATE SET seen_at = excluded.seen_at`,
      )
      .run({ ...row, at });
    return this.get(row.sourceRef)!;
  }

  commented(sourceRef: string, commentRef: string, body: string, at: number): void {
    this.db.prepare(`UPDATE tracker_items SET comment_ref = ?, comment_body = ?, commented_at = ? WHERE source_ref = ?`).run(commentRef, body, at, sourceRef);
  }

  receipted(sourceRef: string, line: string, body: string, at: number): void {
    this.db.prepare(`UPDATE tracker_items SET receipt_line = ?, comment_body = ?, commented_at = ? WHERE source_ref = ?`).run(line, body, at, sourceRef);
  }

  list(limit = 100): TrackerItemRow[] {
    return (this.db.prepare(`SELECT * FROM tracker_items ORDER BY seen_at DESC LIMIT ?`).all(limit) as Array<Record<string, unknown>>).map(toRow);
  }
}

function toRow(r: Record<string, unknown>): TrackerItemRow {
  return {
    sourceRef: r.source_ref as string,
    adapter: r.adapter as string,
    itemKey: r.item_key as string,
    taskId: r.task_id as string,
    commentRef: (r.comment_ref as string | null) ?? null,
    commentBody: (r.comment_body as string | null) ?? null,
    commentedAt: (r.commented_at as number | null) ?? null,
    receiptLine: (r.receipt_line as string | null) ?? null,
    seenAt: r.seen_at as number,
  };
}
