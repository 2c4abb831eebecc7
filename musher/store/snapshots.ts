import type { Db } from './db.js';
import type { SnapshotRow } from '../../core/snapshot.js';
import { resolveIdPrefix, type IdLookup } from '../snapshot/files.js';

/**
 * Snapshots taken at walls: one row per stored snapshot (its files are under the data dir, musher/snapshot/files.ts).
 * The same content taken again has the same id: the first row is kept.
 */
export class SnapshotStore {
  private readonly insert;
  private readonly listStmt;
  private readonly byPrefixStmt;
  private readonly bySessionStmt;
  constructor(db: Db) {
    this.insert = db.prepare(
      `INSERT OR IGNORE INTO snapshots (id, session_id, wall_id, harness, taken_at, size_bytes, note)
       VALUES (@id, @sessionId, @wallId, @harness, @takenAtMs, @sizeBytes, @note)`,
    );
    this.listStmt = db.prepare(`SELECT * FROM snapshots ORDER BY taken_at DESC, id LIMIT ?`);
    // Ids are lower-case letters and digits only: a prefix has no LIKE wildcards in it.
    this.byPrefixStmt = db.prepare(`SELECT * FROM snapshots WHERE id >= ? AND id < ? ORDER BY id LIMIT 20`);
    this.bySessionStmt = db.prepare(`SELECT * FROM snapshots WHERE session_id = ? ORDER BY taken_at DESC LIMIT ?`);
  }

  /** True when the row is new; false when this content was stored before. */
  record(row: SnapshotRow): boolean {
    return this.insert.run(row).changes > 0;
  }

  list(limit = 50): SnapshotRow[] {
    return (this.listStmt.all(limit) as Array<Record<string, unknown>>).map(toRow);
  }

  forSession(sessionId: string, limit = 20): SnapshotRow[] {
    return (this.bySessionStmt.all(sessionId, limit) as Array<Record<string, unknown>>).map(toRow);
  }

  /** An id or an unambiguous prefix of one. */
  resolve(idOrPrefix: string): IdLookup {
    const prefix = idOrPrefix.trim().toLowerCase();
    const rows = this.byPrefixStmt.all(prefix, `${prefix}\uffff`) as Array<Record<string, unknown>>;
    return resolveIdPrefix(prefix, rows.map((r) => r.id as string));
  }

  get(idOrPrefix: string): SnapshotRow | null {
    const lookup = this.resolve(idOrPrefix);
    if (lookup.kind !== 'one') return null;
    return this.byPrefixStmt.all(lookup.id, `${lookup.id}\uffff`).map((r) => toRow(r as Record<string, unknown>))[0] ?? null;
  }
}

function toRow(r: Record<string, unknown>): SnapshotRow {
  return {
    id: r.id as string,
    sessionId: r.session_id as string,
    wallId: (r.wall_id as string | null) ?? null,
    harness: r.harness as string,
    takenAtMs: r.taken_at as number,
    sizeBytes: r.size_bytes as number,
    note: (r.note as string | null) ?? null,
  };
}
