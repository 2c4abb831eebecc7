import { parseClaudeTranscriptLine, repeatedBlockTime, type ParsedBlock, type ParsedTranscriptLine } from '../../harnesses/claude-code/transcript.js';
import { parseTimestamp } from '../../core/record-parse.js';
import type { UsageRecord } from '../../core/usage.js';

/**
 * The first half of reading a chunk of a Claude Code transcript: which lines are parsed, and what each says. Pure, and
 * shared by the main thread (ClaudeTranscriptSource.record) and the backlog's parse workers (transcript-slice.ts), so
 * both skip and keep the same lines. What the items then do to the store is ClaudeTranscriptSource's.
 */
export type TranscriptItem =
  | { offset: number; kind: 'usage'; parsed: Extract<ParsedTranscriptLine, { kind: 'usage' }>; firstOfSession: boolean }
  | { offset: number; kind: 'session'; parsed: Extract<ParsedTranscriptLine, { kind: 'session' }>; firstOfSession: boolean }
  | { offset: number; kind: 'wall'; parsed: Extract<ParsedTranscriptLine, { kind: 'wall' }> }
  | { offset: number; kind: 'error'; message: string }
  | { offset: number; kind: 'malformed'; length: number };

/**
 * What one chunk's reading knows: the sessions it has met, the session its file was last seen to belong to, the
 * replies it has read (for their repeated blocks), and each session's latest reply.
 */
export interface ChunkState {
  readonly seen: Set<string>;
  known: string | null;
  /** Each reply's (dedupKey's) session, model and greatest output count so far in the chunk. */
  readonly replies: Map<string, { sessionId: string; model: string; outputTokens: number }>;
  /** Each session's latest reply in the chunk, every block counted: it is last seen then, however the file was cut. */
  readonly latestReply: Map<string, number>;
  /** The last reply block parsed: the next line that only repeats it is not parsed (repeatsTheLastBlock). */
  lastBlock: { block: ParsedBlock; usage: UsageRecord } | null;
  readonly skipRepeats: boolean;
  /** How many lines repeatsTheLastBlock kept from the parser. */
  repeatsSkipped: number;
}

/** `skipRepeats`: false parses every line (what the shortcut is held to in tests). */
export function chunkState(known: string | null, skipRepeats = true): ChunkState {
  return { seen: new Set(), known, replies: new Map(), latestReply: new Map(), lastBlock: null, skipRepeats, repeatsSkipped: 0 };
}

/**
 * Whether a line is a block of the reply parsed just before it and says nothing more (repeatedBlockTime), so it would
 * parse to that block's record with its own time, which repeatsAnEarlierBlock would then drop. Then only its time is
 * kept, unparsed: a reply is two or more blocks, and parsing them was the larger part of a backfill's work.
 */
function repeatsTheLastBlock(text: string, state: ChunkState): boolean {
  const last = state.lastBlock;
  if (last === null) return false;
  const stamp = repeatedBlockTime(text, last.block);
  const at = stamp === null ? null : parseTimestamp(stamp);
  const earlier = state.replies.get(last.usage.dedupKey);
  if (at === null || earlier === undefined || earlier.sessionId !== last.usage.sessionId || earlier.model !== last.usage.model) return false;
  if (at > (state.latestReply.get(last.usage.sessionId) ?? -Infinity)) state.latestReply.set(last.usage.sessionId, at);
  state.repeatsSkipped++;
  return true;
}

/** Keeps a parsed block for the lines after it (its parts are found when a line after it is compared with it). */
function rememberBlock(text: string, usage: UsageRecord, state: ChunkState): void {
  if (state.skipRepeats) state.lastBlock = { block: { line: text }, usage };
}

/**
 * Whether a usage line only repeats a block already read in this chunk: Claude Code writes one record per content
 * block, each with the reply's usage, and the store keeps the first block's fields with the greatest output count
 * (mergeRepeatedReplies, the upsert). A block of the same reply, session and model that counts no more output than
 * the greatest so far changes nothing there, so it is not passed on (half a history's replies, on the way to the
 * store and across the worker's message); its time still counts for the session's latest reply.
 */
function repeatsAnEarlierBlock(usage: UsageRecord, state: ChunkState): boolean {
  if (usage.timestampMs > (state.latestReply.get(usage.sessionId) ?? -Infinity)) state.latestReply.set(usage.sessionId, usage.timestampMs);
  const earlier = state.replies.get(usage.dedupKey);
  if (earlier === undefined) {
    state.replies.set(usage.dedupKey, { sessionId: usage.sessionId, model: usage.model, outputTokens: usage.outputTokens });
    return false;
  }
  if (earlier.sessionId !== usage.sessionId || earlier.model !== usage.model) return false;
  if (usage.outputTokens <= earlier.outputTokens) return true;
  earlier.outputTokens = usage.outputTokens;
  return false;
}

/**
 * Cheap tests before JSON.parse. Only a record that names usage or an API error can be a reply or a wall; of the rest,
 * only a user record tells us anything (its session). Each line is scanned for these once: a user record is most of a
 * history's bytes (tool results), and every full scan of it was a measurable share of a backfill.
 */
export function mayCarryUsage(text: string): boolean {
  return text.includes('"usage"') || text.includes('"apiError"');
}

/** A user record of a session this chunk (or its file) already named: it says nothing new, so it is not parsed. */
export function userRecordAlreadyKnown(sessionId: string | null, state: ChunkState): boolean {
  return sessionId !== null && (state.seen.has(sessionId) || state.known === sessionId);
}

/**
 * Reads one line into `out` (nothing for a line that says nothing). `screened`: the caller has made these tests on the
 * line's bytes already (a parse worker, transcript-slice.ts) and it passed them, so they are not made again.
 */
export function readTranscriptLine(text: string, offset: number, filePath: string, state: ChunkState, out: TranscriptItem[], screened = false): void {
  if (!screened) {
    if (!text.trimEnd().endsWith('}')) {
      out.push({ offset, kind: 'malformed', length: text.length });
      return;
    }
    // User records only tell us the session; once it is known, skip them unparsed (most of a history's bytes).
    if (!mayCarryUsage(text)) {
      if (!text.includes('"type":"user"')) return;
      if (userRecordAlreadyKnown(sessionIdOf(text), state)) return;
    }
  }
  if (repeatsTheLastBlock(text, state)) return;
  const parsed = parseClaudeTranscriptLine(text, { filePath });
  switch (parsed.kind) {
    case 'usage': {
      rememberBlock(text, parsed.usage, state);
      if (repeatsAnEarlierBlock(parsed.usage, state)) return;
      const first = !state.seen.has(parsed.usage.sessionId);
      if (first) state.seen.add(parsed.usage.sessionId);
      out.push({ offset, kind: 'usage', parsed, firstOfSession: first });
      return;
    }
    case 'session': {
      const first = !state.seen.has(parsed.sessionId);
      if (first) {
        state.seen.add(parsed.sessionId);
        state.known = parsed.sessionId;
      }
      out.push({ offset, kind: 'session', parsed, firstOfSession: first });
      return;
    }
    case 'wall':
      out.push({ offset, kind: 'wall', parsed });
      return;
    case 'error':
      out.push({ offset, kind: 'error', message: parsed.message });
      return;
    case 'ignored':
      return;
  }
}

/** The record's sessionId, found without parsing the whole line. */
export function sessionIdOf(text: string): string | null {
  const at = text.lastIndexOf('"sessionId":"');
  if (at < 0) return null;
  const start = at + '"sessionId":"'.length;
  const end = text.indexOf('"', start);
  return end > start ? text.slice(start, end) : null;
}
