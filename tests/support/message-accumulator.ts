/**
 * The Anthropic TypeScript SDK's stream accumulator (`BetaMessageStream#accumulateMessage`, anthropic-sdk-typescript
 * `src/lib/BetaMessageStream.ts`), restated for tests: @anthropic-ai/sdk is not a dependency of sleds. It rebuilds a
 * Message from Messages SSE events as the SDK Claude Code bundles does, strictly: an event out of order throws, as the
 * SDK's does, `ping` is dropped, `error` throws (core/streaming.ts), and an unknown event is skipped.
 *
 * What it reads from `message_delta` is exactly the SDK's: container, stop_reason, stop_sequence, output_tokens,
 * context_management (top level), and input/cache counts and server_tool_use when not null. Nothing else. A tool
 * block's input is its `input_json_delta` fragments joined and parsed (when any came).
 */
type Json = Record<string, any>;

const TOOL_INPUT_BLOCKS = new Set(['tool_use', 'server_tool_use', 'mcp_tool_use']);

/** Parses a whole SSE body (comment lines and `\r\n` tolerated) into its events. */
export function sseEvents(body: string): Array<{ event: string; data: Json }> {
  const out: Array<{ event: string; data: Json }> = [];
  for (const frame of body.replace(/\r\n/g, '\n').split('\n\n')) {
    let event = 'message';
    const data: string[] = [];
    for (const line of frame.split('\n')) {
      if (line === '' || line.startsWith(':')) continue;
      if (line.startsWith('event:')) event = line.slice(6).trim();
      else if (line.startsWith('data:')) data.push(line.slice(5).trimStart());
    }
    if (data.length > 0) out.push({ event, data: JSON.parse(data.join('\n')) as Json });
  }
  return out;
}

export class StreamError extends Error {
  constructor(readonly error: Json) {
    super(`${String(error.error?.type)}: ${String(error.error?.message)}`);
  }
}

/** The Message the SDK would hand its caller after `message_stop`. */
export function accumulate(events: Array<{ event: string; data: Json }>): Json {
  let snapshot: Json | null = null;
  const jsonBuf = new Map<number, string>();
  let stopped = false;
  for (const { event, data } of events) {
    if (event === 'ping') continue;
    if (event === 'error') throw new StreamError(data);
    if (data.type !== event) throw new Error(`event ${event} carries type ${String(data.type)}`);
    if (event === 'message_start') {
      if (snapshot) throw new Error('Unexpected event order, got message_start before receiving "message_stop"');
      snapshot = structuredClone(data.message) as Json;
      continue;
    }
    if (!snapshot) throw new Error(`Unexpected event order, got ${event} before "message_start"`);
    switch (event) {
      case 'message_stop':
        stopped = true;
        break;
      case 'message_delta':
        snapshot.container = data.delta.container;
        snapshot.stop_reason = data.delta.stop_reason;
        snapshot.stop_sequence = data.delta.stop_sequence;
        snapshot.usage.output_tokens = data.usage.output_tokens;
        snapshot.context_management = data.context_management;
        for (const k of ['input_tokens', 'cache_creation_input_tokens', 'cache_read_input_tokens', 'server_tool_use']) {
          if (data.usage[k] != null) snapshot.usage[k] = data.usage[k];
        }
        break;
      case 'content_block_start':
        if (data.index !== snapshot.content.length) throw new Error(`content_block_start index ${data.index} at position ${snapshot.content.length}`);
        snapshot.content.push(structuredClone(data.content_block));
        break;
      case 'content_block_delta': {
        const block = snapshot.content.at(data.index) as Json | undefined;
        const d = data.delta as Json;
        if (!block) throw new Error(`a delta for block ${data.index}, never started`);
        if (d.type === 'text_delta' && block.type === 'text') block.text = (block.text || '') + d.text;
        else if (d.type === 'citations_delta' && block.type === 'text') block.citations = [...(block.citations ?? []), d.citation];
        else if (d.type === 'input_json_delta' && TOOL_INPUT_BLOCKS.has(block.type)) {
          jsonBuf.set(data.index, (jsonBuf.get(data.index) ?? '') + d.partial_json);
        } else if (d.type === 'thinking_delta' && block.type === 'thinking') block.thinking += d.thinking;
        else if (d.type === 'signature_delta' && block.type === 'thinking') block.signature = d.signature;
        else throw new Error(`delta ${String(d.type)} on a ${String(block.type)} block`);
        break;
      }
      case 'content_block_stop': {
        // The SDK re-parses the buffer at every fragment with a partial-JSON parser; the whole of it, parsed here at
        // the block's stop, is what it holds then.
        const buf = jsonBuf.get(data.index);
        if (buf) snapshot.content[data.index].input = JSON.parse(buf) as unknown;
        break;
      }
      default:
        // An event the SDK does not know: dropped.
        break;
    }
  }
  if (!snapshot || !stopped) throw new Error('the stream ended before message_stop');
  return snapshot;
}
