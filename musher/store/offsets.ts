import type { Db } from './db.js';

/** How far each followed file has been read, so musher only ever reads new bytes. */
export class OffsetStore {
  private readonly getStmt;
  private readonly setStmt;
  private readonly sumStmt;
  constructor(db: Db) {
    this.getStmt = db.prepare(`SELECT offset, inode FROM file_offsets WHERE path = ?`);
    this.setStmt = db.prepare(
      `INSERT INTO file_offsets (path, offset, inode, updated_at) VALUES (?, ?, ?, ?)
       ON CONFLICT(path) DO UPDATE SET offset = excluded.offset, inode = excluded.inode, updated_at = excluded.updated_at`,
    );
    this.sumStmt = db.prepare(`SELECT COUNT(*) AS files, COALESCE(SUM(offset), 0) AS bytes FROM file_offsets`);
  }

  get(path: string): { offset: number; inode: number } | null {
    return (this.getStmt.get(path) as { offset: number; inode: number } | undefined) ?? null;
  }

  set(path: string, offset: number, inode: number, at: number): void {
    this.setStmt.run(path, offset, inode, at);
  }

  summary(): { files: number; bytes: number } {
    return this.sumStmt.get() as { files: number; bytes: number };
  }
}
