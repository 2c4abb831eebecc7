import type { Db } from './db.js';
import { stepHandoff, type HandoffLife, type HandoffLifeEvent, type HandoffLifeState } from '../../core/lifecycle/handoff.js';
import { LifecycleEvents } from './lifecycle-events.js';

/**
 * A hand-off this seat sent or received. States: sending → sent → picked_up | expired, or sending → failed;
 * picking → received → resumed | refused (picking: a pickup under way, its note the journal of what it wrote, so a
 * pickup that died midway is undone before anything else happens to the hand-off). Moved only through
 * core/lifecycle/handoff.ts (SPEC.md § handoff): each move a conditional UPDATE (or DELETE, for an undone pickup)
 * with its row in lifecycle_events; a move the life cycle refuses writes nothing and returns false.
 */
export type HandoffState = Exclude<HandoffLifeState, 'undone'>;

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
  private readonly lifecycle: LifecycleEvents;
  constructor(private readonly db: Db) {
    this.lifecycle = new LifecycleEvents(db);
  }

  record(h: Omit<HandoffRow, 'pickedUpBy' | 'pickedUpAt'>): boolean {
    return this.db.transaction(() => {
      const fresh =
        this.db
          .prepare(
            `INSERT OR IGNORE INTO handoffs (id, direction, wall_id, session_id, harness, peer, created_at, expires_at, transport, ref, branch, state, note)
             VALUES (@id, @direction, @wallId, @sessionId, @harness, @peer, @createdAt, @expiresAt, @transport, @ref, @branch, @state, @note)`,
          )
          .run(h).changes > 0;
      if (fresh) this.lifecycle.created('handoff', h.id, h.state, h.wallId ?? h.id, h.createdAt, { direction: h.direction, peer: h.peer });
      return fresh;
    })();
  }

  /** A sent one that did not go (its note the error), or one pruned from the remote (`expired`). */
  setState(id: string, state: 'failed' | 'expired' | 'resumed' | 'refused', at: number, note: string | null = null): boolean {
    const event: HandoffLifeEvent =
      state === 'failed' ? { type: 'push-failed', error: note ?? '' } : { type: state === 'expired' ? 'expire' : state === 'resumed' ? 'resume' : 'refuse' };
    return this.move(id, event, at, (from, to) =>
      this.db.prepare(`UPDATE handoffs SET state = ?, note = COALESCE(?, note) WHERE id = ? AND state = ?`).run(to.state, note, id, from.state).changes,
    );
  }

  /** A pickup begins: its journal row, replacing the row of an earlier attempt that was undone. */
  beginPickup(h: Omit<HandoffRow, 'pickedUpBy' | 'pickedUpAt' | 'state' | 'direction'>, at: number): void {
    this.db.transaction(() => {
      this.dropPickup(h.id, at);
      this.db
        .prepare(
          `INSERT INTO handoffs (id, direction, wall_id, session_id, harness, peer, created_at, expires_at, transport, ref, branch, state, note)
           VALUES (@id, 'received', @wallId, @sessionId, @harness, @peer, @createdAt, @expiresAt, @transport, @ref, @branch, 'picking', @note)`,
        )
        .run(h);
      this.lifecycle.created('handoff', h.id, 'picking', h.wallId ?? h.id, at, { direction: 'received', peer: h.peer });
    })();
  }

  /** The journal of a pickup under way, as it grows. */
  journal(id: string, note: string): void {
    this.db.prepare(`UPDATE handoffs SET note = ? WHERE id = ? AND state = 'picking'`).run(note, id);
  }

  /** The pickup is complete: false when the row was not a pickup under way. */
  finishPickup(id: string, note: string, at: number): boolean {
    return this.move(id, { type: 'pickup-finished' }, at, (from, to) =>
      this.db.prepare(`UPDATE handoffs SET state = ?, note = ? WHERE id = ? AND state = ?`).run(to.state, note, id, from.state).changes,
    );
  }

  /** A pickup undone: its row goes (it is as if it never began); the event stays. False: no pickup under way. */
  dropPickup(id: string, at: number): boolean {
    const row = this.get(id);
    if (row?.direction !== 'received' || row.state !== 'picking') return false;
    return this.move(id, { type: 'pickup-undone' }, at, (from) =>
      this.db.prepare(`DELETE FROM handoffs WHERE id = ? AND direction = 'received' AND state = ?`).run(id, from.state).changes,
    );
  }

  inState(state: HandoffState): HandoffRow[] {
    return (this.db.prepare(`SELECT * FROM handoffs WHERE state = ? ORDER BY created_at`).all(state) as Array<Record<string, unknown>>).map(toRow);
  }

  sent(id: string, ref: string, branch: string | null, note: string | null, at: number): boolean {
    return this.move(id, { type: 'pushed', ref }, at, (from, to) =>
      this.db.prepare(`UPDATE handoffs SET state = ?, ref = ?, branch = ?, note = ? WHERE id = ? AND state = ?`).run(to.state, ref, branch, note, id, from.state).changes,
    );
  }

  pickedUp(id: string, by: string, at: number): boolean {
    return this.move(id, { type: 'picked-up', by }, at, (from, to) =>
      this.db
        .prepare(`UPDATE handoffs SET state = ?, picked_up_by = ?, picked_up_at = ? WHERE id = ? AND state = ?`)
        .run(to.state, to.pickedUpBy, to.pickedUpAt, id, from.state).changes,
    );
  }

  /** One step of the hand-off's life cycle; false (nothing written) when it refuses or the row moved meanwhile. */
  private move(id: string, event: HandoffLifeEvent, at: number, write: (from: HandoffLife, to: HandoffLife) => number): boolean {
    const row = this.get(id);
    return this.lifecycle.apply({
      kind: 'handoff',
      id,
      correlationId: row?.wallId ?? id,
      event,
      at,
      read: () => {
        const r = this.get(id);
        return r ? { state: r.state, pickedUpBy: r.pickedUpBy, pickedUpAt: r.pickedUpAt } : null;
      },
      step: stepHandoff,
      write,
    }).ok;
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
