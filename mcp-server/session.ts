/**
 * Which harness session calls a tool, so a tool called without a task works on that session's task.
 * Codex puts it in every tools/call's `_meta` (facts codex-cli §6: `sessionId`, `threadId`, and
 * `x-codex-turn-metadata.session_id`). Claude Code sends only `claudecode/toolUseId` there, but starts the server
 * with `CLAUDE_CODE_SESSION_ID` in its environment (measured on 2.1.328).
 */
export function sessionOf(meta: Record<string, unknown> | undefined, env: Record<string, string | undefined>): string | null {
  const turn = meta?.['x-codex-turn-metadata'];
  const fromTurn = turn && typeof turn === 'object' ? (turn as Record<string, unknown>).session_id : undefined;
  for (const v of [fromTurn, meta?.sessionId, meta?.threadId, env.CLAUDE_CODE_SESSION_ID]) {
    if (typeof v === 'string' && v.trim() !== '') return v.trim();
  }
  return null;
}
