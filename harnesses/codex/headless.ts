import { z } from 'zod';
import { eventText, IGNORED, jsonLine, type HarnessEvent } from '../events.js';
import type { HeadlessResult } from '../port.js';

/**
 * `codex exec --json` read into the shared vocabulary. Events (captured on 0.169.0 against the fake API,
 * tests/fixtures/headless/codex.*.jsonl; shared/facts/codex-cli.md §5 and §4): `thread.started{thread_id}` (the session id,
 * said once), `turn.started`, `item.started|item.completed` (command_execution and mcp_tool_call are tool calls,
 * agent_message the reply, an `error` item a warning), `turn.completed{usage}`, `turn.failed{error}`, and a top-level
 * `error` (a dropped stream Codex retries, or the usage-limit refusal). No rate-limit numbers and no hook events:
 * the reset time is only in the refusal's local-time sentence, so rate_limited carries none.
 */

const Item = z.looseObject({
  type: z.string().optional(),
  text: z.string().optional(),
  message: z.string().optional(),
  server: z.string().optional(),
  tool: z.string().optional(),
  id: z.string().optional(),
});
const Usage = z.looseObject({
  input_tokens: z.number().int().nonnegative().catch(0).default(0),
  cached_input_tokens: z.number().int().nonnegative().catch(0).default(0),
  cache_write_input_tokens: z.number().int().nonnegative().catch(0).default(0),
  output_tokens: z.number().int().nonnegative().catch(0).default(0),
});
const CodexEvent = z.looseObject({
  type: z.string(),
  thread_id: z.string().optional(),
  item: Item.optional(),
  usage: Usage.optional(),
  error: z.looseObject({ message: z.string().optional() }).nullish(),
  message: z.string().optional(),
});

/**
 * Codex's `input_tokens` counts the cached (and cache-written) ones too (shared/facts/model-apis.md: OpenAI's input
 * includes cached): the vocabulary's classes are disjoint, as the rollout reader prices them (codex/rollout.ts).
 */
function disjoint(u: z.infer<typeof Usage>): { inputTokens: number; cacheReadTokens: number; cacheWriteTokens: number } {
  const cached = Math.min(u.cached_input_tokens, u.input_tokens);
  const writes = u.cache_write_input_tokens;
  const inputTokens = cached + writes <= u.input_tokens ? u.input_tokens - cached - writes : u.input_tokens - cached;
  return { inputTokens, cacheReadTokens: cached, cacheWriteTokens: writes };
}

/** The refusal at a plan limit ("You’ve hit your usage limit. … try again at 9:30 PM."), in its wordings (§4). */
const USAGE_LIMIT = /hit your usage limit/i;

function toolName(item: z.infer<typeof Item>): string | null {
  // Codex's own hooks call its shell tool "Bash" and MCP tools mcp__<server>__<tool> (facts §1): the same names here.
  if (item.type === 'command_execution') return 'Bash';
  if (item.type === 'mcp_tool_call') return `mcp__${item.server ?? 'unknown'}__${item.tool ?? 'unknown'}`;
  return null;
}

export function parseCodexHeadlessLine(line: string): HarnessEvent[] {
  const json = jsonLine(line);
  if (json === null) return [{ kind: 'error', message: `not an exec --json event: ${eventText(line.slice(0, 120))}` }];
  const r = CodexEvent.safeParse(json);
  if (!r.success) return [IGNORED];
  const e = r.data;
  switch (e.type) {
    case 'thread.started':
      return [{ kind: 'turn_started', sessionId: e.thread_id ?? null, model: null }];
    case 'item.started': {
      const name = e.item ? toolName(e.item) : null;
      return name ? [{ kind: 'tool_call', name, callId: e.item?.id ?? null }] : [IGNORED];
    }
    case 'turn.completed': {
      const u = e.usage;
      const usage: HarnessEvent[] = u
        ? [{ kind: 'usage', ...disjoint(u), outputTokens: u.output_tokens, sessionTotal: true }]
        : [];
      return [...usage, { kind: 'turn_completed', sessionId: null, ok: true, text: null }];
    }
    case 'turn.failed':
      return [{ kind: 'turn_completed', sessionId: null, ok: false, text: e.error?.message ? eventText(e.error.message) : null }];
    case 'error': {
      const message = e.message ?? e.error?.message ?? 'error';
      return [USAGE_LIMIT.test(message) ? { kind: 'rate_limited', resetsAtMs: null, window: null } : { kind: 'error', message: eventText(message) }];
    }
    default:
      return [IGNORED];
  }
}

/** `codex exec --json`: the last agent_message, and whether the turn completed or failed. */
export function readCodexOutput(stdout: string): HeadlessResult | null {
  let text: string | null = null;
  let sessionId: string | null = null;
  let turn: 'completed' | 'failed' | null = null;
  let failure: string | null = null;
  let lastError: string | null = null;
  let seen = false;
  for (const line of stdout.split('\n')) {
    const json = jsonLine(line);
    if (json === null) continue;
    const r = CodexEvent.safeParse(json);
    if (!r.success) continue;
    seen = true;
    const e = r.data;
    if (e.type === 'thread.started' && e.thread_id) sessionId = e.thread_id;
    else if (e.type === 'item.completed' && e.item?.type === 'agent_message' && e.item.text !== undefined) text = e.item.text;
    else if (e.type === 'turn.completed') turn = 'completed';
    else if (e.type === 'turn.failed') {
      turn = 'failed';
      failure = e.error?.message ?? 'the turn failed';
    }
    // A top-level error may be one Codex recovered from (a retried stream): it decides only when no turn ended.
    else if (e.type === 'error') lastError = e.message ?? e.error?.message ?? 'error';
  }
  if (!seen) return null;
  const error = turn === 'failed' ? failure : turn === null ? lastError : null;
  const isError = turn === 'failed' ? true : turn === 'completed' ? false : lastError !== null ? true : null;
  return { text, isError, sessionId, costUsd: null, error: error !== null ? eventText(error) : null };
}
