import { z } from 'zod';
import { ZERO_TOKEN_COUNTS } from '../../core/usage.js';
import { isSessionId } from '../../core/session-id.js';
import type { TranscriptLine } from '../port.js';

/**
 * Gemini CLI's session files (measured on 0.61.0; shared/facts/gemini-cli.md §3):
 * `<GEMINI_CLI_HOME or ~>/.gemini/tmp/<project>/chats/session-<YYYY-MM-DDTHH-MM>-<first 8 of the id>.jsonl`, where
 * <project> is the short name `.gemini/projects.json` gives the cwd (its basename, made unique). Lines: a header
 * `{sessionId, projectHash, startTime, lastUpdated, kind}`, `{"$set": {…}}` updates, and messages
 * `{id, timestamp, type: "user" | "gemini", content, tokens?, model?}`. A reply is written again under the same id
 * when its tool calls finish, so usage is counted once per id. The file name holds only 8 hex digits of the id:
 * the full id is in the header.
 */

export const GEMINI_SESSION_SOURCE = 'gemini-session';

const FILE_NAME = /^session-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-([0-9a-f]{8})\.jsonl?$/;

/** The 8 hex digits of the session id a session file's name carries, or null when it is not one. */
export function shortIdFromFileName(fileName: string): string | null {
  const base = fileName.slice(fileName.lastIndexOf('/') + 1);
  return FILE_NAME.exec(base)?.[1] ?? null;
}

export function isGeminiSessionFileOf(fileName: string, sessionId: string): boolean {
  const short = shortIdFromFileName(fileName);
  return short !== null && isSessionId(sessionId) && sessionId.toLowerCase().startsWith(short);
}

const Header = z.looseObject({ sessionId: z.string(), projectHash: z.string().optional(), startTime: z.string().optional() });
const count = z.number().int().nonnegative().catch(0).default(0);
const Reply = z.looseObject({
  id: z.string(),
  timestamp: z.string(),
  type: z.literal('gemini'),
  model: z.string().optional(),
  tokens: z.looseObject({ input: count, output: count, cached: count, thoughts: count }),
});
const Known = z.looseObject({ type: z.string().optional(), $set: z.unknown().optional() });

/** Reads one session file's lines in order: the header names the session, each reply's tokens count once. */
export class GeminiSessionReader {
  private sessionId: string | null = null;
  private readonly counted = new Set<string>();

  read(line: string): TranscriptLine {
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch {
      return { kind: 'error', message: `not a Gemini session record: ${line.slice(0, 80)}` };
    }
    const header = Header.safeParse(json);
    if (header.success && this.sessionId === null && isSessionId(header.data.sessionId)) {
      this.sessionId = header.data.sessionId;
      return { kind: 'session', sessionId: header.data.sessionId, cwd: null };
    }
    const reply = Reply.safeParse(json);
    if (reply.success && this.sessionId !== null) {
      const r = reply.data;
      const at = Date.parse(r.timestamp);
      if (this.counted.has(r.id) || !Number.isFinite(at)) return { kind: 'ignored' };
      this.counted.add(r.id);
      // `input` counts the cached prompt tokens too (measured: 120 with 20 cached); thoughts are billed as output.
      const usage = {
        ...ZERO_TOKEN_COUNTS,
        inputTokens: Math.max(0, r.tokens.input - r.tokens.cached),
        outputTokens: r.tokens.output + r.tokens.thoughts,
        cacheReadTokens: r.tokens.cached,
        serviceTier: null,
        inferenceGeo: null,
      };
      if (usage.inputTokens + usage.outputTokens + usage.cacheReadTokens === 0) return { kind: 'ignored' };
      return { kind: 'usage', usage: { ...usage, source: GEMINI_SESSION_SOURCE, dedupKey: `${this.sessionId}:${r.id}`, sessionId: this.sessionId, model: r.model ?? 'unknown', timestampMs: at, cwd: null } };
    }
    return Known.safeParse(json).success ? { kind: 'ignored' } : { kind: 'error', message: 'a Gemini session line that is not an object' };
  }
}
