import { z } from 'zod';
import { eventText, IGNORED, jsonLine, type HarnessEvent } from '../events.js';
import type { HeadlessResult } from '../port.js';

/**
 * `cursor-agent -p --output-format stream-json` read into the shared vocabulary, from its DOCUMENTED format
 * (https://cursor.com/docs/cli/reference/output-format; shared/facts/cursor-agent.md — not measured: the binary
 * cannot be installed here). Records: `system/init` (session_id, model), `user` (the prompt), `assistant` (one line
 * per message between tool calls), `tool_call` `started`/`completed` (the call under a `<name>ToolCall` key), and a
 * terminal `result` on success. The documented stream carries no token usage, and a failure (a limit among them)
 * exits non-zero with the message on stderr and no terminal record: the stream alone cannot say "rate limited".
 */

const Init = z.looseObject({ type: z.literal('system'), subtype: z.literal('init'), session_id: z.string().optional(), model: z.string().optional() });
const ToolCall = z.looseObject({ type: z.literal('tool_call'), subtype: z.string(), call_id: z.string().optional(), tool_call: z.record(z.string(), z.unknown()).optional() });
const Result = z.looseObject({
  type: z.literal('result'),
  subtype: z.string().optional(),
  is_error: z.boolean().optional(),
  result: z.string().optional(),
  session_id: z.string().optional(),
});

/** `readToolCall` → `read`, `shellToolCall` → `shell`; an MCP or unknown key as it is. */
function toolName(call: Record<string, unknown> | undefined): string | null {
  const key = call ? Object.keys(call)[0] : undefined;
  if (!key) return null;
  return key.endsWith('ToolCall') && key.length > 'ToolCall'.length ? key.slice(0, -'ToolCall'.length) : key;
}

export function parseCursorHeadlessLine(line: string): HarnessEvent[] {
  const json = jsonLine(line);
  if (json === null) return [{ kind: 'error', message: `not a stream-json record: ${eventText(line.slice(0, 120))}` }];
  const init = Init.safeParse(json);
  if (init.success) return [{ kind: 'turn_started', sessionId: init.data.session_id ?? null, model: init.data.model ?? null }];
  const call = ToolCall.safeParse(json);
  if (call.success) {
    // Reported when it starts (the name and arguments) and again when it completes (its result): counted once.
    if (call.data.subtype !== 'started') return [IGNORED];
    const name = toolName(call.data.tool_call);
    return name ? [{ kind: 'tool_call', name, callId: call.data.call_id ?? null }] : [IGNORED];
  }
  const r = Result.safeParse(json);
  if (r.success) {
    const ok = r.data.is_error !== true && (r.data.subtype ?? 'success') === 'success';
    return [{ kind: 'turn_completed', sessionId: r.data.session_id ?? null, ok, text: r.data.result ?? null }];
  }
  return [IGNORED];
}

/** The terminal `result` record (the stream's or `--output-format json`'s), or what the stream says without one. */
export function readCursorOutput(stdout: string): HeadlessResult | null {
  let sessionId: string | null = null;
  let seen = false;
  for (const line of stdout.split('\n')) {
    const json = jsonLine(line);
    if (json === null) continue;
    const init = Init.safeParse(json);
    if (init.success) {
      seen = true;
      sessionId = init.data.session_id ?? sessionId;
      continue;
    }
    const r = Result.safeParse(json);
    if (!r.success) continue;
    const failed = r.data.is_error === true || (r.data.subtype ?? 'success') !== 'success';
    return { text: r.data.result ?? null, isError: failed, sessionId: r.data.session_id ?? sessionId, costUsd: null, error: failed ? eventText(r.data.result ?? r.data.subtype ?? 'error') : null };
  }
  // Started and ended without a result: the run failed and said why on stderr only (documented).
  return seen ? { text: null, isError: null, sessionId, costUsd: null, error: null } : null;
}
