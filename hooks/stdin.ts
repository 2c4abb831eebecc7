import { fstatSync, readFileSync, writeSync } from 'node:fs';

/**
 * Reads all of stdin synchronously. Cheaper at start-up than process.stdin, whose stream machinery costs the
 * hot path several milliseconds. A terminal on stdin (a person trying the command) reads as empty.
 */
export function readStdinSync(): Buffer {
  try {
    if (fstatSync(0).isCharacterDevice()) return Buffer.alloc(0);
    return readFileSync(0);
  } catch {
    // Nothing to read (closed or no stdin): an empty event; the hook fails open.
    return Buffer.alloc(0);
  }
}

/** Unique enough to dedup one event between its live delivery and its spooled copy, without loading crypto. */
export function newEventId(): string {
  return `${Date.now().toString(36)}-${process.pid.toString(36)}-${Math.random().toString(36).slice(2, 12)}`;
}

/**
 * Writes to stdout synchronously, without process.stdout (whose stream set-up costs the hot path milliseconds).
 * Retries short writes, which a full pipe can cause.
 */
export function writeStdoutSync(text: string): void {
  const buf = Buffer.from(text);
  let off = 0;
  while (off < buf.length) {
    try {
      off += writeSync(1, buf, off);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EAGAIN') continue;
      return; // the reader went away: nothing more to do
    }
  }
}
