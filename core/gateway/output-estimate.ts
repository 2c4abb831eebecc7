/**
 * The output of a response whose final usage never came (the client went away and the upstream stopped or was cut
 * before `message_delta` / `response.completed`; an upstream `error` mid-stream), estimated from the output deltas
 * the gateway saw pass. Pure.
 *
 * The estimate errs high: a token per OUTPUT_CHARS_PER_TOKEN characters of delta text (tokenizers run about 4 on
 * English and 3 on code), and never fewer tokens than deltas seen (a delta carries at least one token). Counted:
 * Anthropic `text_delta`, `thinking_delta`, `input_json_delta`; OpenAI every `response.*.delta` with a text `delta`
 * (`output_text`, `function_call_arguments`, `reasoning_summary_text`, `reasoning_text`, `refusal`, …) but audio.
 * Not seen, so not counted: thinking the API does not stream (`display: "omitted"`, OpenAI's hidden reasoning) and
 * whatever the model generated after the last byte the gateway read.
 */

export const OUTPUT_CHARS_PER_TOKEN = 2;

export class OutputDeltaCount {
  chars = 0;
  deltas = 0;

  add(chars: number): void {
    if (chars <= 0) return; // an empty fragment ("" opens many tool calls) carries no token
    this.chars += chars;
    this.deltas += 1;
  }

  /** The estimate, never below `floor` (Anthropic's `message_start` placeholder, 1 or more). */
  tokens(floor = 0): number {
    return Math.max(floor, this.deltas, Math.ceil(this.chars / OUTPUT_CHARS_PER_TOKEN));
  }
}

function parse(data: string): unknown {
  try {
    return JSON.parse(data);
  } catch {
    // A delta that is not JSON adds no text to the estimate.
    return undefined;
  }
}

const ANTHROPIC_DELTA_TEXT: Record<string, string> = { text_delta: 'text', thinking_delta: 'thinking', input_json_delta: 'partial_json' };

/**
 * The length of the JSON string value of `"<field>":"…"` in `data` without parsing it, when that is exact: no
 * backslash anywhere (so no escape makes the JSON longer than its text) and the key there once. Null otherwise.
 * Every streamed delta passes here, and most are plain text: this keeps JSON.parse off the gateway's hot path.
 */
function plainStringLength(data: string, field: string): number | null {
  if (data.includes('\\')) return null;
  const key = `"${field}":"`;
  const at = data.indexOf(key);
  if (at < 0 || data.indexOf(key, at + 1) >= 0) return null;
  const start = at + key.length;
  const end = data.indexOf('"', start);
  return end < 0 ? null : end - start;
}

/** The output characters of one Anthropic `content_block_delta` event's data; null when it carries none. */
export function anthropicDeltaChars(data: string): number | null {
  for (const [type, field] of Object.entries(ANTHROPIC_DELTA_TEXT)) {
    if (!data.includes(`"${type}"`)) continue;
    const fast = plainStringLength(data, field);
    if (fast !== null) return fast;
    break;
  }
  const e = parse(data) as { delta?: Record<string, unknown> } | undefined;
  const delta = e?.delta;
  if (!delta || typeof delta.type !== 'string') return null;
  const field = ANTHROPIC_DELTA_TEXT[delta.type];
  const text = field === undefined ? undefined : delta[field];
  return typeof text === 'string' ? text.length : null;
}

/** Whether an OpenAI Responses event name is one whose `delta` is generated text. */
export function isOpenAITextDelta(event: string): boolean {
  return event.startsWith('response.') && event.endsWith('.delta') && !event.startsWith('response.audio');
}

/** The output characters of one OpenAI text-delta event's data; null when it carries none. */
export function openAIDeltaChars(data: string): number | null {
  const fast = plainStringLength(data, 'delta');
  if (fast !== null) return fast;
  const e = parse(data) as { delta?: unknown } | undefined;
  return typeof e?.delta === 'string' ? e.delta.length : null;
}
