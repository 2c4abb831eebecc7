import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { MAX_LINE_BYTES } from './file-follower.js';
import { chunkState, readTranscriptLine, userRecordAlreadyKnown, type TranscriptItem } from './transcript-lines.js';

/**
 * A slice of a transcript read off the main thread (a backlog's parse worker): its complete lines from `from`, up to
 * about `sliceBytes`, read as ClaudeTranscriptSource.record reads a chunk. Lines that cannot say anything are skipped
 * on their bytes, before they are decoded: most of a history is user records of a session already named (tool
 * results), and decoding them was most of what the main thread's reading allocated.
 */
export interface SliceRequest {
  path: string;
  /** Where to start: the end of a complete line (the stored offset). */
  from: number;
  /** The inode the offset was stored for: another means the file was replaced, and the caller reads it itself. */
  ino: number;
  /** The session the file was last seen to belong to. */
  known: string | null;
  sliceBytes: number;
}

export type SliceResult =
  | {
      ok: true;
      to: number;
      bytes: number;
      done: boolean;
      items: TranscriptItem[];
      known: string | null;
      /** Each session's latest reply in the slice (ChunkState.latestReply). */
      latestReply: Array<[string, number]>;
      errors: string[];
    }
  | { ok: false; reason: string };

const USAGE = Buffer.from('"usage"');
const API_ERROR = Buffer.from('"apiError"');
const USER = Buffer.from('"type":"user"');
const SESSION_ID = Buffer.from('"sessionId":"');
const QUOTE = 0x22;
const NEWLINE = 0x0a;
const CLOSE_BRACE = 0x7d;

/** ASCII whitespace, as trimEnd drops it (a line ending in other whitespace is decoded and left to the text test). */
function isAsciiSpace(b: number): boolean {
  return b === 0x20 || b === 0x09 || b === 0x0d || b === 0x0b || b === 0x0c;
}

/** The next place `needle` occurs at or after `from` (a cursor kept per needle, so each is searched for once per slice). */
class Cursor {
  private at = -2;
  constructor(
    private readonly buf: Buffer,
    private readonly needle: Buffer,
  ) {}
  /** Whether the needle occurs inside [start, end). */
  within(start: number, end: number): boolean {
    if (this.at !== -1 && this.at < start) this.at = this.buf.indexOf(this.needle, start);
    return this.at >= 0 && this.at < end;
  }
}

/**
 * One buffer per thread, kept between slices and grown to the largest: a fresh one per file cost a page fault per
 * 4 KB of it (the read was half a worker's time on 1 GB); nothing of it outlives the slice (lines are decoded copies).
 */
let kept = Buffer.alloc(0);
function sliceBuffer(bytes: number): Buffer {
  if (kept.length < bytes) kept = Buffer.allocUnsafe(Math.max(bytes, Math.min(2 * kept.length, 32 * 1024 * 1024)));
  return kept;
}

export function readTranscriptSlice(req: SliceRequest): SliceResult {
  let fd: number;
  try {
    fd = openSync(req.path, 'r');
  } catch (e) {
    return { ok: false, reason: (e as Error).message };
  }
  try {
    const { size, ino } = fstatSync(fd);
    if (ino !== req.ino || req.from > size) return { ok: false, reason: 'the file was replaced' };
    // Never less than the longest line kept: a slice with no newline in it then holds only a line to skip.
    const want = Math.min(size - req.from, Math.max(MAX_LINE_BYTES + 1, req.sliceBytes));
    const buf = sliceBuffer(want);
    let got = 0;
    while (got < want) {
      const n = readSync(fd, buf, got, want - got, req.from + got);
      if (n === 0) break;
      got += n;
    }
    return readLines(req, buf.subarray(0, got), size, fd);
  } finally {
    closeSync(fd);
  }
}

function readLines(req: SliceRequest, buf: Buffer, size: number, fd: number): SliceResult {
  const { path, from } = req;
  const state = chunkState(req.known);
  const items: TranscriptItem[] = [];
  const errors: string[] = [];
  const lastNewline = buf.lastIndexOf(NEWLINE);
  if (lastNewline < 0) {
    // No complete line. At the file's end that is a line still being written; otherwise it is longer than any slice.
    if (from + buf.length >= size) return { ok: true, to: from, bytes: size - from, done: true, items, known: state.known, latestReply: [...state.latestReply], errors };
    const end = skipLongLine(fd, from + buf.length, size);
    errors.push(`${path}: line at byte ${from} is over the ${MAX_LINE_BYTES / 1e6} MB limit — skipped`);
    return { ok: true, to: end, bytes: end - from, done: end >= size, items, known: state.known, latestReply: [...state.latestReply], errors };
  }
  const usage = new Cursor(buf, USAGE);
  const apiError = new Cursor(buf, API_ERROR);
  const user = new Cursor(buf, USER);
  for (let start = 0, end = buf.indexOf(NEWLINE); end >= 0 && end <= lastNewline; start = end + 1, end = buf.indexOf(NEWLINE, start)) {
    const length = end - start;
    if (length === 0) continue;
    if (length > MAX_LINE_BYTES) {
      errors.push(`${path}: line at byte ${from + start} is ${(length / 1e6).toFixed(1)} MB, over the ${MAX_LINE_BYTES / 1e6} MB limit — skipped`);
      continue;
    }
    let last = end - 1;
    while (last > start && isAsciiSpace(buf[last]!)) last--;
    // A line that ends in '}' is not malformed; then one that names no usage and no API error is skipped when its
    // session is already named (a user record says nothing more; any other record nothing at all) or it is no user
    // record, all without decoding it. Such a line has passed the text tests, so only the rest goes to them.
    const screened = buf[last] === CLOSE_BRACE;
    if (screened && !usage.within(start, end) && !apiError.within(start, end)) {
      if (userRecordAlreadyKnown(sessionIdIn(buf, start, end), state)) continue;
      if (!user.within(start, end)) continue;
    }
    readTranscriptLine(buf.toString('utf8', start, end), from + start, path, state, items, screened);
  }
  const to = from + lastNewline + 1;
  const done = from + buf.length >= size;
  // At the end, the bytes after the last complete line count as read (a line being written), as the follower counts them.
  return { ok: true, to, bytes: done ? size - from : to - from, done, items, known: state.known, latestReply: [...state.latestReply], errors };
}

/** The last `"sessionId":"…"` of a line, from its bytes (as sessionIdOf finds it in the text). */
function sessionIdIn(buf: Buffer, start: number, end: number): string | null {
  const at = buf.lastIndexOf(SESSION_ID, end - 1);
  if (at < start) return null;
  const idStart = at + SESSION_ID.length;
  const idEnd = buf.indexOf(QUOTE, idStart);
  return idEnd > idStart && idEnd < end ? buf.toString('utf8', idStart, idEnd) : null;
}

/** The offset just past the newline that ends an over-long line starting before `at` (or the file's size). */
function skipLongLine(fd: number, at: number, size: number): number {
  const piece = Buffer.allocUnsafe(1024 * 1024);
  for (let pos = at; pos < size; ) {
    const n = readSync(fd, piece, 0, piece.length, pos);
    if (n === 0) break;
    const nl = piece.subarray(0, n).indexOf(NEWLINE);
    if (nl >= 0) return pos + nl + 1;
    pos += n;
  }
  return size;
}
