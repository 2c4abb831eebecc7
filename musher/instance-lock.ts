import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';

/**
 * One musher per user: an exclusive lock held for musher's whole life, which the kernel releases when the process
 * dies, however it dies.
 *
 * Why this and not a pid file or the socket: a pid file outlives a `kill -9`, and its pid may still "exist" as a
 * zombie (a background musher is reparented, and a container's init may never reap it), so a pid check says
 * "running" for a dead musher. A socket file outlives it too, and two starters that both find it stale can each
 * unlink and re-bind it, ending with two mushers. What we want is flock(2), which node lacks; SQLite (already
 * musher's, no new native dependency) takes POSIX fcntl locks on its file. `BEGIN EXCLUSIVE` takes the write lock
 * at once and holds it until the transaction ends; no process ever ends it here, so the lock lasts until `release`
 * or until the process exits, when the kernel drops every fcntl lock the process held. The file is never unlinked
 * (unlinking a lock file is what lets two holders lock two different files), and nothing is ever written to it.
 * fcntl locks are not inherited by child processes, so what musher spawns (tmux, a resumed session) does not keep
 * the lock after musher is gone.
 */
export type InstanceLock = { acquired: true; release: () => void } | { acquired: false };

export function acquireInstanceLock(file: string): InstanceLock {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  // timeout 0: a held lock answers SQLITE_BUSY at once rather than after a wait.
  const db = new Database(file, { timeout: 0 });
  try {
    // The rollback journal in memory: no -journal file next to the lock (there are no writes to journal anyway).
    db.pragma('journal_mode = MEMORY');
    db.exec('BEGIN EXCLUSIVE');
  } catch (e) {
    db.close();
    if ((e as { code?: string }).code === 'SQLITE_BUSY' || (e as { code?: string }).code === 'SQLITE_LOCKED') return { acquired: false };
    throw e;
  }
  let held = true;
  return {
    acquired: true,
    release: () => {
      if (!held) return;
      held = false;
      db.close(); // ends the transaction and drops the lock
    },
  };
}
