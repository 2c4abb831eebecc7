import { z } from 'zod';
import { eventText, IGNORED, jsonLine, type HarnessEvent } from '../events.js';
import type { HeadlessResult } from '../port.js';

/**
 * `gemini -p '' --output-format stream-json` read into the shared vocabulary. Records (measured on 0.61.0 against
 * the fake API, tests/fixtures/gemini-cli/*.jsonl; shared/facts/gemini-cli.md §2): `init{session_id, model}`,
 * `message{role, content, delta}` (the prompt echoed, then the reply in pieces), `tool_use{tool_name, tool_id}`,
 * `tool_result{tool_id, status}`, `error{severity, message}` (a loop detected, too many turns), and one
 * `result{status, error?, stats}` at the end with the run's summed tokens. A plan or quota refusal is a result
 * with status "error" whose message is Gemini's own quota sentence (§4); a retry delay, when Google sends one,
 * is in it as "Suggested retry after <n>s." and is counted from the result's timestamp.
 */

const count = z.number().int().nonnegative().catch(0).default(0);
const Stats = z.looseObject({ input_tokens: count, output_tokens: count, cached: count, input: z.number().int().nonnegative().optional().catch(undefined) });
const GeminiRecord = z.looseObject({
  type: z.string(),
  timestamp: z.string().optional().catch(undefined),
  session_id: z.string().optional().catch(undefined),
  model: z.string().optional().catch(undefined),
  role: z.string().optional().catch(undefined),
  content: z.string().optional().catch(undefined),
  tool_name: z.string().optional().catch(undefined),
  tool_id: z.string().optional().catch(undefined),
  status: z.string().optional().catch(undefined),
  severity: z.string().optional().catch(undefined),
  message: z.string().optional().catch(undefined),
  error: z.looseObject({ type: z.string().optional(), message: z.string().optional() }).nullish().catch(null),
  stats: Stats.nullish().catch(null),
});
type GeminiRecord = z.infer<typeof GeminiRecord>;

/** Gemini's refusals at a quota or plan limit (TerminalQuotaError's wordings, and Google's RESOURCE_EXHAUSTED). */
const QUOTA = /exhausted your (?:daily )?quota|exceeded your current quota|exhausted your capacity|RESOURCE_EXHAUSTED|quota exceeded/i;
const RETRY_AFTER = /Suggested retry after (\d+(?:\.\d+)?)(ms|s)\b/;

/** When a quota refusal says it resets: its retry delay counted from the record's own time, else null. */
export function quotaResetMs(message: string, timestamp: string | undefined): number | null {
  const m = RETRY_AFTER.exec(message);
  const at = timestamp ? Date.parse(timestamp) : NaN;
  if (!m || !Number.isFinite(at)) return null;
  const delay = Number(m[1]) * (m[2] === 'ms' ? 1 : 1000);
  return Number.isFinite(delay) ? at + Math.round(delay) : null;
}

function usageOf(stats: z.infer<typeof Stats>): HarnessEvent {
  // `input_tokens` counts the cached ones too; `input` is the part that was not cached (measured: 220 = 200 + 20).
  const uncached = stats.input ?? Math.max(0, stats.input_tokens - stats.cached);
  return { kind: 'usage', inputTokens: uncached, outputTokens: stats.output_tokens, cacheReadTokens: stats.cached, cacheWriteTokens: 0 };
}

function resultEvents(e: GeminiRecord): HarnessEvent[] {
  const ok = e.status === 'success';
  const message = e.error?.message ?? null;
  const usage = e.stats && e.stats.input_tokens + e.stats.output_tokens > 0 ? [usageOf(e.stats)] : [];
  const limited: HarnessEvent[] = !ok && message !== null && QUOTA.test(message) ? [{ kind: 'rate_limited', resetsAtMs: quotaResetMs(message, e.timestamp), window: null }] : [];
  return [...usage, ...limited, { kind: 'turn_completed', sessionId: null, ok, text: !ok && message !== null ? eventText(message) : null }];
}

export function parseGeminiHeadlessLine(line: string): HarnessEvent[] {
  const json = jsonLine(line);
  if (json === null) return [{ kind: 'error', message: `not a stream-json record: ${eventText(line.slice(0, 120))}` }];
  const r = GeminiRecord.safeParse(json);
  if (!r.success) return [IGNORED];
  const e = r.data;
  switch (e.type) {
    case 'init':
      return [{ kind: 'turn_started', sessionId: e.session_id ?? null, model: e.model ?? null }];
    case 'tool_use':
      return e.tool_name ? [{ kind: 'tool_call', name: e.tool_name, callId: e.tool_id ?? null }] : [IGNORED];
    case 'error':
      return [{ kind: 'error', message: eventText(e.message ?? 'error') }];
    case 'result':
      return resultEvents(e);
    default:
      return [IGNORED];
  }
}

/** The whole stream summed up: the reply's text (its pieces joined), the session, and how the run ended. */
export function readGeminiOutput(stdout: string): HeadlessResult | null {
  let seen = false;
  let sessionId: string | null = null;
  let text: string | null = null;
  let status: string | null = null;
  let error: string | null = null;
  for (const line of stdout.split('\n')) {
    const json = jsonLine(line);
    if (json === null) continue;
    const r = GeminiRecord.safeParse(json);
    if (!r.success) continue;
    seen = true;
    const e = r.data;
    if (e.type === 'init' && e.session_id) sessionId = e.session_id;
    else if (e.type === 'message' && e.role === 'assistant' && e.content !== undefined) text = (text ?? '') + e.content;
    else if (e.type === 'result') {
      status = e.status ?? null;
      error = e.error?.message ?? (status === 'success' ? null : 'the run failed');
    }
  }
  if (!seen) return null;
  const isError = status === null ? null : status !== 'success';
  return { text, isError, sessionId, costUsd: null, error: isError && error !== null ? eventText(error) : null };
}
