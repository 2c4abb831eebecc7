import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, mkdirSync, openSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { open, rename, stat, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';

/** Temp files written next to their target start with this (so a sweep of a crash's leftovers can find them). */
export const TEMP_PREFIX = '.tmp-';

/** Writes `bytes` at `path` atomically: a temp name in the same folder, fsync, rename. A reader never sees half. */
export async function writeFileAtomic(path: string, bytes: Buffer, mode = 0o600): Promise<void> {
  const temp = join(dirname(path), `${TEMP_PREFIX}${process.pid}-${randomBytes(6).toString('hex')}`);
  try {
    const fh = await open(temp, 'wx', mode);
    try {
      await fh.writeFile(bytes);
      await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(temp, path);
  } catch (e) {
    await unlink(temp).catch(() => undefined);
    throw e;
  }
}

export async function pathExists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    // stat failed: the path does not exist (or cannot be seen), which is the answer.
    return false;
  }
}

/**
 * The same, synchronously, for small private files (the secret file, the pinned keys): the folder made 0700, the
 * file born 0600 under a temp name ('wx' never reuses a file someone planted), fsync, rename.
 */
export function writePrivateFileSync(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const tmp = `${path}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  const fd = openSync(tmp, 'wx', 0o600);
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    renameSync(tmp, path);
  } catch (e) {
    unlinkSync(tmp);
    throw e;
  }
}
