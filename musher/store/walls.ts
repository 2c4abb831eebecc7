import type { Db } from './db.js';
import type { WallRecord } from '../../core/usage.js';

/** Every sign that a bar hit 100%: the limit record in a transcript, a StopFailure rate_limit hook, … */
export class WallStore {
  private readonly insert;
  private readonly recentStmt;
  constructor(db: Db) {
    this.insert = db.prepare(
      `INSERT OR IGNORE INTO wall_signals (dedup_key, source, session_id, ts, window, resets_at, message)
       VALUES (@dedupKey, @source, @sessionId, @timestampMs, @window, @resetsAtMs, @message)`,
    );
    this.recentStmt = db.prepare(`SELECT * FROM wall_signals ORDER BY ts DESC LIMIT ?`);
  }

  private readonly listeners: Array<(wall: WallRecord) => void> = [];

  /** Called with each signal recorded for the first time (the wall keeper opens walls from them). */
  onRecorded(listener: (wall: WallRecord) => void): void {
    this.listeners.push(listener);
  }

  record(wall: WallRecord): boolean {
    const fresh = this.insert.run(wall).changes > 0;
    if (fresh) for (const l of this.listeners) l(wall);
    return fresh;
  }

  recent(limit = 20): WallRecord[] {
    return (this.recentStmt.all(limit) as Array<Record<string, unknown>>).map((r) => ({
      dedupKey: r.dedup_key as string,
      source: r.source as string,
      sessionId: (r.session_id as string | null) ?? '',
      timestampMs: r.ts as number,
      window: (r.window as string | null) ?? null,
      resetsAtMs: (r.resets_at as number | null) ?? null,
      message: r.message as string,
    }));
  }
}
