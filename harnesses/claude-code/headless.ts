import { z } from 'zod';
import { eventText, IGNORED, jsonLine, type HarnessEvent } from '../events.js';
import type { HeadlessResult } from '../port.js';

/**
 * `claude -p --output-format stream-json --verbose` read into the shared vocabulary. Records (captured on 2.1.328
 * against the fake API, tests/fixtures/headless/claude-code.*.jsonl; shared/facts/claude-code.md §6 and §3):
 * `system/init` (session_id, model), `assistant` (one content block a record: tool_use is a call), `user` (tool
 * results), `rate_limit_event` (after every subscriber response; `status:"rejected"` at a limit), `system/api_retry`,
 * `result` (session_id, result, is_error, usage with the final output tokens). Stream `assistant` records carry the
 * message_start usage (output_tokens 1), so usage is taken from `result` only.
 */

const Usage = z.looseObject({
  input_tokens: z.number().int().nonnegative().catch(0).default(0),
  output_tokens: z.number().int().nonnegative().catch(0).default(0),
  cache_read_input_tokens: z.number().int().nonnegative().catch(0).default(0),
  cache_creation_input_tokens: z.number().int().nonnegative().catch(0).default(0),
});

const Init = z.looseObject({ type: z.literal('system'), subtype: z.literal('init'), session_id: z.string().optional(), model: z.string().optional() });
const Retry = z.looseObject({ type: z.literal('system'), subtype: z.literal('api_retry'), error: z.unknown().optional(), attempt: z.number().optional() });
const Block = z.looseObject({ type: z.string(), name: z.string().optional(), id: z.string().optional(), input: z.unknown().optional() });
const Assistant = z.looseObject({ type: z.literal('assistant'), message: z.looseObject({ content: z.array(Block).catch([]).default([]) }) });
const RateLimit = z.looseObject({
  type: z.literal('rate_limit_event'),
  rate_limit_info: z.looseObject({ status: z.string(), resetsAt: z.number().nullish(), rateLimitType: z.string().nullish() }),
});
const Result = z.looseObject({
  type: z.literal('result'),
  session_id: z.string().optional(),
  result: z.string().optional(),
  is_error: z.boolean().optional(),
  usage: Usage.optional(),
  total_cost_usd: z.number().optional(),
  api_error_status: z.number().nullish(),
  terminal_reason: z.string().nullish(),
});

/** The tool Claude Code asks the person through (it waits for an answer a headless run cannot give). */
const ASK_TOOL = 'AskUserQuestion';

function questionText(input: unknown): string {
  const q = z.looseObject({ questions: z.array(z.looseObject({ question: z.string() })).min(1) }).safeParse(input);
  return q.success ? eventText(q.data.questions.map((x) => x.question).join(' ')) : 'the model asks a question';
}

export function parseClaudeHeadlessLine(line: string): HarnessEvent[] {
  const json = jsonLine(line);
  if (json === null) return [{ kind: 'error', message: `not a stream-json record: ${eventText(line.slice(0, 120))}` }];
  const init = Init.safeParse(json);
  if (init.success) return [{ kind: 'turn_started', sessionId: init.data.session_id ?? null, model: init.data.model ?? null }];
  const retry = Retry.safeParse(json);
  if (retry.success) return [{ kind: 'error', message: `the API request failed; retrying (attempt ${retry.data.attempt ?? '?'})` }];
  const a = Assistant.safeParse(json);
  if (a.success) {
    const events = a.data.message.content
      .filter((b) => b.type === 'tool_use' && typeof b.name === 'string')
      .map((b): HarnessEvent => (b.name === ASK_TOOL ? { kind: 'question', text: questionText(b.input) } : { kind: 'tool_call', name: b.name!, callId: b.id ?? null }));
    return events.length > 0 ? events : [IGNORED];
  }
  const rl = RateLimit.safeParse(json);
  if (rl.success) {
    const info = rl.data.rate_limit_info;
    if (info.status !== 'rejected') return [IGNORED];
    return [{ kind: 'rate_limited', resetsAtMs: typeof info.resetsAt === 'number' ? info.resetsAt * 1000 : null, window: info.rateLimitType ?? null }];
  }
  const r = Result.safeParse(json);
  if (r.success) {
    const u = r.data.usage;
    const usage: HarnessEvent[] =
      u && u.input_tokens + u.output_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens > 0
        ? [{ kind: 'usage', inputTokens: u.input_tokens, outputTokens: u.output_tokens, cacheReadTokens: u.cache_read_input_tokens, cacheWriteTokens: u.cache_creation_input_tokens }]
        : [];
    return [...usage, { kind: 'turn_completed', sessionId: r.data.session_id ?? null, ok: r.data.is_error !== true, text: r.data.result ?? null }];
  }
  return [IGNORED];
}

const ClaudeResult = z.looseObject({
  type: z.string().optional(),
  result: z.string().optional(),
  is_error: z.boolean().optional(),
  session_id: z.string().optional(),
  total_cost_usd: z.number().optional(),
  api_error_status: z.number().nullish(),
  terminal_reason: z.string().nullish(),
});

/** `claude -p --output-format json` (or the stream's `result`): the last line that parses as a result is taken. */
export function readClaudeOutput(stdout: string): HeadlessResult | null {
  const lines = stdout.split('\n').filter((l) => l.trim().startsWith('{'));
  for (let i = lines.length - 1; i >= 0; i--) {
    const json = jsonLine(lines[i]!);
    if (json === null) continue;
    const r = ClaudeResult.safeParse(json);
    if (!r.success || (r.data.result === undefined && r.data.is_error === undefined)) continue;
    const d = r.data;
    const why = d.is_error ? [d.terminal_reason, d.api_error_status ? `HTTP ${d.api_error_status}` : null].filter(Boolean).join(', ') : '';
    return {
      text: d.result ?? null,
      isError: d.is_error ?? null,
      sessionId: d.session_id ?? null,
      costUsd: d.total_cost_usd ?? null,
      error: d.is_error ? eventText(`${d.result ?? 'error'}${why ? ` (${why})` : ''}`) : null,
    };
  }
  return null;
}
