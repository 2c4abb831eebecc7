import type { Db } from './db.js';

/**
 * A hand-off this seat sent or received. States: sending → sent → picked_up | expired, or sending → failed;
 * received → resumed | refused.
 */
export type HandoffState = 'sending' | 'sent' | 'failed' | 'picked_up' | 'expired' | 'received' | 'resumed' | 'refused';

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
