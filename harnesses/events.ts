import { z } from 'zod';

/**
 * The one vocabulary a headless run is read in, whatever harness runs it (`claude -p --output-format stream-json`,
 * `codex exec --json`): each adapter's parseHeadlessLine maps its own records onto these. Pure.
 *
 * - turn_started: the run is under way; the session id when the stream names it here (Claude's system/init, Codex's
 *   thread.started).
 * - tool_call: the model called a tool (Claude's tool_use block, Codex's command_execution / mcp_tool_call item).
 * - question: the model asks the person something and waits (Claude's AskUserQuestion tool).
 * - usage: tokens a reply used, in disjoint classes (input is the uncached part; cache reads and writes apart), or the
 *   session's running total so far when `sessionTotal` says so.
 * - rate_limited: the plan refused the run at a limit; when it resets (epoch ms) and which window, when known.
 * - turn_completed: the run ended; ok false when the harness says it failed; the session id to resume it by.
 * - error: something went wrong that the stream reported (the run may still go on: Codex retries a dropped stream).
 * - ignored: a line that carries nothing of the above (hook records, partial text, an unknown record).
 */
export const HarnessEvent = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('turn_started'), sessionId: z.string().nullable(), model: z.string().nullable() }),
  z.object({ kind: z.literal('tool_call'), name: z.string(), callId: z.string().nullable() }),
  z.object({ kind: z.literal('question'), text: z.string() }),
  z.object({
    kind: z.literal('usage'),
    inputTokens: z.number().int().nonnegative(),
    outputTokens: z.number().int().nonnegative(),
    cacheReadTokens: z.number().int().nonnegative(),
    cacheWriteTokens: z.number().int().nonnegative(),
    /**
     * True when the counts are the session's running total so far, not this reply's (Codex's turn.completed: a resumed
     * session reports its whole history again): a reader keeps the last one per session instead of adding them up.
     */
    sessionTotal: z.boolean().optional(),
  }),
  z.object({ kind: z.literal('rate_limited'), resetsAtMs: z.number().nullable(), window: z.string().nullable() }),
  z.object({ kind: z.literal('turn_completed'), sessionId: z.string().nullable(), ok: z.boolean(), text: z.string().nullable() }),
  z.object({ kind: z.literal('error'), message: z.string() }),
  z.object({ kind: z.literal('ignored') }),
]);
export type HarnessEvent = z.infer<typeof HarnessEvent>;
export type HarnessEventKind = HarnessEvent['kind'];

export const IGNORED: HarnessEvent = { kind: 'ignored' };

/** One line of a stream as JSON, or null when it is not a JSON object (blank lines, stray output). Never throws. */
export function jsonLine(line: string): Record<string, unknown> | null {
  const text = line.trim();
  if (!text.startsWith('{')) return null;
  try {
    const v: unknown = JSON.parse(text);
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    // Not JSON: the adapter reports it as an error event (the stream is the harness's, a broken line is news).
    return null;
  }
}

/** A long message cut to one line of at most 500 characters, for an event. */
export function eventText(s: string): string {
  return s.replace(/\s*\n\s*/g, ' ').slice(0, 500);
}

/** The last session id a run's events name (its start, or the end of its turn), or null when none does yet. */
export function sessionNamedIn(events: readonly HarnessEvent[]): string | null {
  let named: string | null = null;
  for (const e of events) if ((e.kind === 'turn_started' || e.kind === 'turn_completed') && e.sessionId) named = e.sessionId;
  return named;
}
