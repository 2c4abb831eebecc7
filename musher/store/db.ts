import Database from 'better-sqlite3';
import { chmodSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { migrate } from './migrations.js';

export type Db = Database.Database;

/** The database and the files SQLite keeps beside it in WAL mode. */
function storeFiles(file: string): string[] {
  return [file, `${file}-wal`, `${file}-shm`];
}

/**
 * Opens (and migrates) the SQLite store. musher is its only writer; WAL lets readers run beside it. The files are
 * the user's alone (0600; musher's umask makes new ones so, and a database made by an older musher is tightened),
 * and deleted rows are zeroed rather than left in free pages (pruned events, rewritten payloads).
 */
export function openStore(file: string): Db {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('busy_timeout = 5000');
  db.pragma('foreign_keys = ON');
  db.pragma('secure_delete = ON');
  const before = db.pragma('user_version', { simple: true }) as number;
  const now = migrate(db);
  // What a migration rewrote leaves the WAL at once rather than at some later checkpoint.
  if (now > before) db.pragma('wal_checkpoint(TRUNCATE)');
  for (const f of storeFiles(file)) {
    try {
      chmodSync(f, 0o600);
    } catch {
      // not there (yet): SQLite makes -wal and -shm with the database's own mode
    }
  }
  return db;
}
