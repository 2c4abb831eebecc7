import { realpathSync } from 'node:fs';
import type { Db } from './db.js';

/**
 * The transcripts and rollouts a pickup installed, and how many of their bytes came from the sender: those are the
 * sender's history on this machine — never a wall here, their usage the sender's seat's. What the harness appends
 * after them is this seat's own. The pickup records a file before it is written, so ingestion never reads one
 * unmarked; an undone pickup forgets its files.
 */
export interface InstalledHistory {
  /** The seat whose history the bytes are (the sender's handle). */
  seat: string;
  /** The bytes from the start of the file that were installed. */
  bytes: number;
}

export class HistoryStore {
  private readonly upsert;
  private readonly getStmt;
  private readonly forgetStmt;
  private readonly countStmt;
  /** A followed file's path as the watcher names it → its real path (the pickup records real paths). */
  private readonly realPaths = new Map<string, string>();

  constructor(db: Db) {
    this.upsert = db.prepare(
      `INSERT INTO installed_histories (path, bytes, seat, handoff_id, installed_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT(path) DO UPDATE SET bytes = excluded.bytes, seat = excluded.seat, handoff_id = excluded.handoff_id, installed_at = excluded.installed_at`,
    );
    this.getStmt = db.prepare(`SELECT seat, bytes FROM installed_histories WHERE path = ?`);
    this.forgetStmt = db.prepare(`DELETE FROM installed_histories WHERE handoff_id = ?`);
    this.countStmt = db.prepare(`SELECT COUNT(*) AS n FROM installed_histories`);
  }

  /** Hand-off `handoffId` is about to install `bytes` of `seat`'s history at `path` (its real path). */
  installed(h: { path: string; bytes: number; seat: string; handoffId: string; at: number }): void {
    this.upsert.run(h.path, h.bytes, h.seat, h.handoffId, h.at);
  }

  /** An undone pickup's files are no one's history any more. */
  forget(handoffId: string): void {
    this.forgetStmt.run(handoffId);
  }

  /** The history installed at `path` (as named, or through its real path), or null: then the whole file is ours. */
  of(path: string): InstalledHistory | null {
    const direct = this.getStmt.get(path) as InstalledHistory | undefined;
    if (direct !== undefined) return direct;
    if ((this.countStmt.get() as { n: number }).n === 0) return null;
    let real = this.realPaths.get(path);
    if (real === undefined) {
      try {
        real = realpathSync(path);
      } catch {
        // A path that does not resolve any more: no installed history for it.
        return null;
      }
      this.realPaths.set(path, real);
    }
    return real === path ? null : ((this.getStmt.get(real) as InstalledHistory | undefined) ?? null);
  }
}
