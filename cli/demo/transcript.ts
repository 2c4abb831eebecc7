import { appendFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { randomUUID } from 'node:crypto';

/**
 * jake's Claude Code transcript, written as the harness writes it (shared/facts/claude-code.md §4): a user record, then
 * one assistant record per reply with its usage, so musher follows the file and prices the replies as it would a
 * real session's. The demo adds replies between frames; the timestamps are the real time they are written.
 */
export interface Transcript {
  path: string;
  sessionId: string;
  cwd: string;
  /** Replies written so far (musher counts one usage record per reply). */
  replies: number;
  lastUuid: string | null;
}

/** Claude Code's folder for a launch cwd: every character other than [A-Za-z0-9] becomes '-'. */
export function projectFolder(claudeDir: string, cwd: string): string {
  return join(claudeDir, 'projects', cwd.replace(/[^A-Za-z0-9]/g, '-'));
}

export function newTranscript(claudeDir: string, cwd: string): Transcript {
  const sessionId = randomUUID();
  const path = join(projectFolder(claudeDir, cwd), `${sessionId}.jsonl`);
  mkdirSync(dirname(path), { recursive: true });
  return { path, sessionId, cwd, replies: 0, lastUuid: null };
}

const MODEL = 'claude-opus-5-5';

/** The user's prompt and `replies` assistant turns, each with the usage of a mid-sized agentic step. */
export function appendExchange(t: Transcript, prompt: string, replies: string[], nowMs: number): void {
  const base = { isSidechain: false, userType: 'external', entrypoint: 'cli', cwd: t.cwd, sessionId: t.sessionId, version: '2.1.328', gitBranch: 'main' };
  const lines: unknown[] = [];
  const userUuid = randomUUID();
  lines.push({ ...base, parentUuid: t.lastUuid, type: 'user', message: { role: 'user', content: prompt }, uuid: userUuid, timestamp: new Date(nowMs).toISOString() });
  let parent = userUuid;
  replies.forEach((text, i) => {
    const uuid = randomUUID();
    t.replies++;
    lines.push({
      ...base,
      parentUuid: parent,
      type: 'assistant',
      message: {
        id: `msg_demo${String(t.replies).padStart(4, '0')}`,
        type: 'message',
        role: 'assistant',
        model: MODEL,
        content: [{ type: 'text', text }],
        stop_reason: i === replies.length - 1 ? 'end_turn' : 'tool_use',
        stop_sequence: null,
        usage: { input_tokens: 1800, cache_creation_input_tokens: 6000, cache_read_input_tokens: 42000, output_tokens: 2400, service_tier: 'standard' },
      },
      requestId: `req_demo${String(t.replies).padStart(4, '0')}`,
      requestedModel: MODEL,
      uuid,
      timestamp: new Date(nowMs + 1 + i).toISOString(),
    });
    parent = uuid;
  });
  t.lastUuid = parent;
  appendFileSync(t.path, lines.map((l) => `${JSON.stringify(l)}\n`).join(''));
}
