import { keptHookFields } from '../../core/hook-fields.js';
import type { Db } from './db.js';

export interface HookEventRow {
  eventId: string;
  event: string;
  sessionId: string | null;
  receivedAt: number;
  viaSpool: boolean;
  /** The parsed hook payload: only what musher reads later is stored (core/hook-fields.ts), never the payload itself. */
  payload: unknown;
}

/** The append-only log of every hook event musher received (directly or from the spool), as the fields it uses. */
export class HookEventStore {
  private readonly insert;
  private readonly countStmt;
  private readonly pruneStmt;
  constructor(private readonly db: Db) {
    this.insert = db.prepare(
      `INSERT OR IGNORE INTO hook_events (event_id, event, session_id, received_at, via_spool, payload)
       VALUES (@eventId, @event, @sessionId, @receivedAt, @viaSpool, @payload)`,
    );
    this.countStmt = db.prepare(`SELECT event, COUNT(*) AS n FROM hook_events GROUP BY event`);
    this.pruneStmt = db.prepare(`DELETE FROM hook_events WHERE received_at < ?`);
  }

  /** False when this event id was already recorded (a spooled copy of a delivered event). */
  record(row: HookEventRow): boolean {
    const payload = JSON.stringify(keptHookFields(row.event, row.payload));
    return this.insert.run({ ...row, payload, viaSpool: row.viaSpool ? 1 : 0 }).changes > 0;
  }

  countsByEvent(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const r of this.countStmt.all() as Array<{ event: string; n: number }>) out[r.event] = r.n;
    return out;
  }

  /** What was kept of one event in these sessions, oldest first (a receipt's files touched); unparsable rows skipped. */
  keptFieldsOf(sessionIds: readonly string[], event: string): unknown[] {
    if (sessionIds.length === 0) return [];
    const rows = this.db
      .prepare(`SELECT payload FROM hook_events WHERE event = ? AND session_id IN (${sessionIds.map(() => '?').join(',')}) ORDER BY received_at`)
      .all(event, ...sessionIds) as Array<{ payload: string }>;
    const out: unknown[] = [];
    for (const r of rows) {
      try {
        out.push(JSON.parse(r.payload));
      } catch {
        // not JSON
      }
    }
    return out;
  }

  /** Removes the events received before `beforeMs` (the retention setting); how many went. */
  pruneBefore(beforeMs: number): number {
    return this.pruneStmt.run(beforeMs).changes;
  }
}
