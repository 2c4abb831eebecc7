import { closeSync, mkdirSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';

/** One musher per user: a lock file holding the owner's pid. A lock whose owner is gone is taken over. */
export type LockResult = { acquired: true; release: () => void } | { acquired: false; ownerPid: number };

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export function acquireLock(file: string): LockResult {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = openSync(file, 'wx', 0o600);
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return {
        acquired: true,
        release: () => {
          try {
            if (readFileSync(file, 'utf8') === String(process.pid)) unlinkSync(file);
          } catch {
            // already gone
          }
        },
      };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      let owner = NaN;
      try {
        owner = Number(readFileSync(file, 'utf8'));
      } catch {
        continue; // released meanwhile: try again
      }
      if (Number.isInteger(owner) && owner > 0 && alive(owner)) return { acquired: false, ownerPid: owner };
      try {
        unlinkSync(file); // stale: its owner died without releasing it
      } catch {
        // someone else took it over first
      }
    }
  }
  return { acquired: false, ownerPid: NaN };
}
