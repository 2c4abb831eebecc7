import { z } from 'zod';

/**
 * The shape of a harness's session id. Both Claude Code (`~/.claude/projects/<slug>/<uuid>.jsonl`) and Codex
 * (`rollout-<localtime>-<thread uuid>.jsonl`, UUIDv7-style) name sessions by a UUID (facts: claude-code §4,
 * codex-cli §rollouts). An id that arrives from another machine (a hand-off bundle) or a stored row reaches an argv
 * (`--resume=<id>`), so it is checked against this before it is used: nothing that starts with `-`, holds a space,
 * a `/` or a quote gets through.
 */
export const SESSION_ID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isSessionId(id: string): boolean {
  return SESSION_ID_RE.test(id);
}

export const SessionIdSchema = z.string().regex(SESSION_ID_RE, 'a session id is a UUID (8-4-4-4-12 hex digits)');
