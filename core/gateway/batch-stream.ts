/**
 * A complete Anthropic `Message` (a Message Batch's `succeeded` result) turned into the Messages SSE a streaming
 * request gets, in the order of the real API, so a client's stream accumulator rebuilds the very same Message
 * (shared/facts/model-apis.md §1.7). Pure.
 *
 *   message_start (the Message without its content, output_tokens 1)
 *   per block i: content_block_start, its deltas, content_block_stop
 *   message_delta (stop reason, the final usage), message_stop
 *
 * Unknown fields ride along untouched (the vendor adds some every month); an unknown block type goes out whole in its
 * `content_block_start`, with no deltas, as the API sends its tool results.
 */
import { z } from 'zod';

/** The Message as a batch result carries it: only what the synthesis reads is checked; the rest is kept. */
export const BatchMessage = z.looseObject({
  id: z.string(),
  type: z.string().optional(),
  model: z.string().nullish(),
  content: z.array(z.looseObject({ type: z.string() })),
  stop_reason: z.string().nullish(),
  stop_sequence: z.string().nullish(),
  usage: z.looseObject({ output_tokens: z.number().int().nonnegative().nullish() }),
});
export type BatchMessage = z.infer<typeof BatchMessage>;

export interface SseOut {
  event: string;
  data: Record<string, unknown>;
}

export interface SynthesisOptions {
  /** Characters per text/thinking/JSON delta (a long answer goes out as several deltas, as the API's would); default 2048. */
  chunkChars?: number;
}

/** The usage fields `message_delta` carries (cumulative; the start's cache split, tier and geo stay as they were). */
const DELTA_USAGE = ['output_tokens', 'input_tokens', 'cache_creation_input_tokens', 'cache_read_input_tokens', 'server_tool_use', 'output_tokens_details', 'iterations', 'fallback_credit'] as const;
const TOOL_USE_BLOCKS = new Set(['tool_use', 'server_tool_use', 'mcp_tool_use']);

/** `text` cut into pieces of at most `size` UTF-16 units, never between the halves of a surrogate pair. */
export function splitText(text: string, size: number): string[] {
  if (text.length <= size) return [text];
  const out: string[] = [];
  let i = 0;
  while (i < text.length) {
    let end = Math.min(text.length, i + size);
    const code = text.charCodeAt(end - 1);
    // A high surrogate last: its pair goes with it (into the next piece, or into this one when it is alone here).
    if (end < text.length && code >= 0xd800 && code <= 0xdbff) end += end - 1 > i ? -1 : 1;
    out.push(text.slice(i, end));
    i = end;
  }
  return out;
}

function has(o: object, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(o, key);
}

function blockEvents(block: Record<string, unknown> & { type: string }, index: number, chunk: number): SseOut[] {
  const start = (content_block: Record<string, unknown>): SseOut => ({ event: 'content_block_start', data: { type: 'content_block_start', index, content_block } });
  const delta = (d: Record<string, unknown>): SseOut => ({ event: 'content_block_delta', data: { type: 'content_block_delta', index, delta: d } });
  const out: SseOut[] = [];
  if (block.type === 'text' && typeof block.text === 'string') {
    const citations = Array.isArray(block.citations) && block.citations.length > 0 ? (block.citations as unknown[]) : null;
    const head: Record<string, unknown> = { ...block, text: '' };
    // The accumulators start `citations` themselves at the first citations_delta.
    if (citations) delete head.citations;
    out.push(start(head));
    for (const text of splitText(block.text, chunk)) out.push(delta({ type: 'text_delta', text }));
    for (const citation of citations ?? []) out.push(delta({ type: 'citations_delta', citation }));
  } else if (block.type === 'thinking' && typeof block.thinking === 'string') {
    out.push(start({ ...block, thinking: '', signature: '' }));
    if (block.thinking !== '') for (const thinking of splitText(block.thinking, chunk)) out.push(delta({ type: 'thinking_delta', thinking }));
    // One signature, whole, just before the stop (a cut signature does not verify).
    out.push(delta({ type: 'signature_delta', signature: typeof block.signature === 'string' ? block.signature : '' }));
  } else if (TOOL_USE_BLOCKS.has(block.type) && block.input !== null && typeof block.input === 'object') {
    out.push(start({ ...block, input: {} }));
    const json = JSON.stringify(block.input);
    if (json !== '{}') for (const partial_json of splitText(json, chunk)) out.push(delta({ type: 'input_json_delta', partial_json }));
  } else {
    out.push(start(block));
  }
  out.push({ event: 'content_block_stop', data: { type: 'content_block_stop', index } });
  return out;
}

/** The events of one Message, in order (§1.7). */
export function messageEvents(message: BatchMessage, opts: SynthesisOptions = {}): SseOut[] {
  const chunk = Math.max(1, opts.chunkChars ?? 2048);
  const { content, usage, ...rest } = message;
  // The whole usage in message_start, but for the output placeholder: the SDK's accumulator takes only output_tokens,
  // the input and cache counts and server_tool_use from message_delta, so a field left for the delta alone
  // (output_tokens_details, iterations) would be missing from the Message it rebuilds.
  const startUsage: Record<string, unknown> = { ...usage, output_tokens: 1 };
  const startMessage: Record<string, unknown> = { ...rest, content: [], stop_reason: null, stop_sequence: null, usage: startUsage };
  if (has(message, 'stop_details')) startMessage.stop_details = null;

  const out: SseOut[] = [{ event: 'message_start', data: { type: 'message_start', message: startMessage } }];
  content.forEach((block, i) => out.push(...blockEvents(block, i, chunk)));

  const delta: Record<string, unknown> = { stop_reason: message.stop_reason ?? null, stop_sequence: message.stop_sequence ?? null };
  for (const k of ['stop_details', 'container']) if (has(message, k)) delta[k] = (message as Record<string, unknown>)[k];
  const deltaUsage: Record<string, unknown> = {};
  for (const k of DELTA_USAGE) if (has(usage, k) && usage[k] !== undefined) deltaUsage[k] = usage[k];
  deltaUsage.output_tokens = usage.output_tokens ?? 0;
  const end: Record<string, unknown> = { type: 'message_delta', delta, usage: deltaUsage };
  // The beta accumulator reads context_management beside delta and usage, not inside delta.
  if (has(message, 'context_management')) end.context_management = (message as Record<string, unknown>).context_management;
  out.push({ event: 'message_delta', data: end }, { event: 'message_stop', data: { type: 'message_stop' } });
  return out;
}

/** One event on the wire: `event: <name>\ndata: <one-line JSON>\n\n`. */
export function formatSse(e: SseOut): string {
  return `event: ${e.event}\ndata: ${JSON.stringify(e.data)}\n\n`;
}

/** What keeps a connection alive while the batch runs: a comment line, which every SSE reader skips. */
export const SSE_KEEPALIVE = ': keepalive\n\n';

/** An error after the 200 was sent (§1.6), in the error envelope's shape. */
export function errorEvent(error: { type: string; message: string } & Record<string, unknown>): SseOut {
  return { event: 'error', data: { type: 'error', error } };
}

/** The HTTP status an Anthropic error type stands for (§4.1); an unknown type is a 500. */
export function statusOfErrorType(type: string): number {
  return ERROR_STATUS[type] ?? 500;
}

const ERROR_STATUS: Record<string, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  conflict_error: 409,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  timeout_error: 504,
  overloaded_error: 529,
};
