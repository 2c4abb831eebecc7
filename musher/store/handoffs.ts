import type { Db } from './db.js';

/**
 * A hand-off this seat sent or received. States: sending → sent → picked_up | expired, or sending → failed;
 * picking → received → resumed | refused (picking: a pickup under way, its note the journal of what it wrote, so a
 * pickup that died midway is undone before anything else happens to the hand-off).
 */
export type HandoffState = 'sending' | 'sent' | 'failed' | 'picked_up' | 'expired' | 'picking' | 'received' | 'resumed' | 'refused';

export interface HandoffRow {
  id: string;
  direction: 'sent' | 'received';
  wallId: string | null;
  sessionId: string | null;
  harness: string | null;
  /** The recipient of a sent one, the sender of a received one. */
  peer: string;
  createdAt: number;
  expiresAt: number;
  transport: string;
  ref: string | null;
  branch: string | null;
  state: HandoffState;
  pickedUpBy: string | null;
  pickedUpAt: number | null;
  note: string | null;
}

/** The hand-offs table's one writer. */
export class HandoffStore {
  constructor(private readonly db: Db) {}

  record(h: Omit<HandoffRow, 'pickedUpBy' | 'pickedUpAt'>): boolean {
    return (
      this.db
        .prepare(
          `INSERT OR IGNORE INTO handoffs (id, direction, wall_id, session_id, harness, peer, created_at, expires_at, transport, ref, branch, state, note)
           VALUES (@id, @direction, @wallId, @sessionId, @harness, @peer, @createdAt, @expiresAt, @transport, @ref, @branch, @state, @note)`,
        )
        .run(h).changes > 0
    );
  }

  setState(id: string, state: HandoffState, note: string | null = null): void {
    this.db.prepare(`UPDATE handoffs SET state = ?, note = COALESCE(?, note) WHERE id = ?`).run(state, note, id);
  }

  /** A pickup begins: its journal row, replacing the row of an earlier attempt that was undone. */
  beginPickup(h: Omit<HandoffRow, 'pickedUpBy' | 'pickedUpAt' | 'state' | 'direction'>): void {
    this.db.transaction(() => {
      this.db.prepare(`DELETE FROM handoffs WHERE id = ? AND direction = 'received' AND state = 'picking'`).run(h.id);
      this.db
        .prepare(
          `INSERT INTO handoffs (id, direction, wall_id, session_id, harness, peer, created_at, expires_at, transport, ref, branch, state, note)
           VALUES (@id, 'received', @wallId, @sessionId, @harness, @peer, @createdAt, @expiresAt, @transport, @ref, @branch, 'picking', @note)`,
        )
        .run(h);
    })();
  }

  /** The journal of a pickup under way, as it grows. */
  journal(id: string, note: string): void {
    this.db.prepare(`UPDATE handoffs SET note = ? WHERE id = ? AND state = 'picking'`).run(note, id);
  }

  /** The pickup is complete: false when the row was not a pickup under way. */
  finishPickup(id: string, note: string): boolean {
    return this.db.prepare(`UPDATE handoffs SET state = 'received', note = ? WHERE id = ? AND state = 'picking'`).run(note, id).changes > 0;
  }

  /** A pickup undone: its row goes (it is as if it never began). */
  dropPickup(id: string): void {
    this.db.prepare(`DELETE FROM handoffs WHERE id = ? AND direction = 'received' AND state = 'picking'`).run(id);
  }

  inState(state: HandoffState): HandoffRow[] {
    return (this.db.prepare(`SELECT * FROM handoffs WHERE state = ? ORDER BY created_at`).all(state) as Array<Record<string, unknown>>).map(toRow);
  }

  sent(id: string, ref: string, branch: string | null, note: string | null): void {
    this.db.prepare(`UPDATE handoffs SET state = 'sent', ref = ?, branch = ?, note = ? WHERE id = ?`).run(ref, branch, note, id);
  }

  pickedUp(id: string, by: string, at: number): void {
    this.db.prepare(`UPDATE handoffs SET state = 'picked_up', picked_up_by = ?, picked_up_at = ? WHERE id = ?`).run(by, at, id);
  }

  get(id: string): HandoffRow | null {
    const r = this.db.prepare(`SELECT * FROM handoffs WHERE id = ?`).get(id) as Record<string, unknown> | undefined;
    return r ? toRow(r) : null;
  }

  list(limit = 50): HandoffRow[] {
    return (this.db.prepare(`SELECT * FROM handoffs ORDER BY created_at DESC LIMIT ?`).all(limit) as Array<Record<string, unknown>>).map(toRow);
  }
}

function toRow(r: Record<string, unknown>): HandoffRow {
  return {
    id: r.id as string,
    direction: r.direction as HandoffRow['direction'],
    wallId: (r.wall_id as string | null) ?? null,
    sessionId: (r.session_id as string | null) ?? null,
    harness: (r.harness as string | null) ?? null,
    peer: r.peer as string,
    createdAt: r.created_at as number,
    expiresAt: r.expires_at as number,
    transport: r.transport as string,
    ref: (r.ref as string | null) ?? null,
    branch: (r.branch as string | null) ?? null,
    state: r.state as HandoffState,
    pickedUpBy: (r.picked_up_by as string | null) ?? null,
    pickedUpAt: (r.picked_up_at as number | null) ?? null,
    note: (r.note as string | null) ?? null,
  };
}
