/**
 * A batch result's Message, replayed as Messages SSE (core/gateway/batch-stream.ts): event by event as the real API
 * orders them (shared/facts/model-apis.md §1.7), and whole again through the SDK's accumulator
 * (tests/support/message-accumulator.ts), so Claude Code's transcript holds the Message the batch produced.
 */
import { describe, expect, it } from 'vitest';
import { BatchMessage, errorEvent, formatSse, messageEvents, splitText, SSE_KEEPALIVE, statusOfErrorType, type SseOut } from '../../core/gateway/batch-stream.js';
import { accumulate, sseEvents, StreamError } from '../support/message-accumulator.js';

const USAGE = {
  input_tokens: 68,
  cache_creation_input_tokens: 40,
  cache_read_input_tokens: 2000,
  cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 40 },
  output_tokens: 138,
  service_tier: 'batch',
  inference_geo: 'not_available',
};

function message(content: Array<Record<string, unknown>>, more: Record<string, unknown> = {}): BatchMessage {
  return BatchMessage.parse({ id: 'msg_01Batched', type: 'message', role: 'assistant', model: 'claude-sonnet-4-6', content, stop_reason: 'end_turn', stop_sequence: null, usage: USAGE, ...more });
}

/** Event names, and each block's deltas by kind, in order: the shape a reader of the stream sees. */
function shape(events: SseOut[]): string[] {
  return events.map((e) => (e.event === 'content_block_delta' ? `delta:${String((e.data.delta as { type: string }).type)}` : e.event));
}

const wire = (events: SseOut[]) => sseEvents(events.map(formatSse).join(''));

describe('a Message as the SSE a streaming request gets', () => {
  const cases: Array<[string, BatchMessage, string[]]> = [
    ['text', message([{ type: 'text', text: 'All 340 tests pass.' }]), ['message_start', 'content_block_start', 'delta:text_delta', 'content_block_stop', 'message_delta', 'message_stop']],
    [
      'thinking with its signature, then text',
      message([{ type: 'thinking', thinking: '144 = 12 × 12', signature: 'EvgBCpIBGAIiQ…' }, { type: 'text', text: '144' }]),
      ['message_start', 'content_block_start', 'delta:thinking_delta', 'delta:signature_delta', 'content_block_stop', 'content_block_start', 'delta:text_delta', 'content_block_stop', 'message_delta', 'message_stop'],
    ],
    [
      'thinking shown as omitted: the signature alone',
      message([{ type: 'thinking', thinking: '', signature: 'EvgBsig' }]),
      ['message_start', 'content_block_start', 'delta:signature_delta', 'content_block_stop', 'message_delta', 'message_stop'],
    ],
    [
      'a tool call with its input',
      message([{ type: 'text', text: 'Reading it.' }, { type: 'tool_use', id: 'toolu_0131', name: 'Read', input: { file_path: '/repo/src/cart.ts', limit: 40 }, caller: { type: 'direct' } }], { stop_reason: 'tool_use' }),
      ['message_start', 'content_block_start', 'delta:text_delta', 'content_block_stop', 'content_block_start', 'delta:input_json_delta', 'content_block_stop', 'message_delta', 'message_stop'],
    ],
    [
      'a tool call with no input: no fragment at all',
      message([{ type: 'tool_use', id: 'toolu_0132', name: 'TodoRead', input: {} }], { stop_reason: 'tool_use' }),
      ['message_start', 'content_block_start', 'content_block_stop', 'message_delta', 'message_stop'],
    ],
    [
      'blocks with no deltas (redacted thinking, a server tool result, a type from next month) go out whole',
      message([
        { type: 'redacted_thinking', data: 'EmwKAhgBEgy3va…' },
        { type: 'server_tool_use', id: 'srvtoolu_01', name: 'web_search', input: { query: 'sqlite wal' } },
        { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_01', content: [{ type: 'web_search_result', url: 'https://sqlite.org/wal.html', title: 'WAL' }] },
        { type: 'hologram', payload: { shape: 'cube' } },
      ]),
      ['message_start', 'content_block_start', 'content_block_stop', 'content_block_start', 'delta:input_json_delta', 'content_block_stop', 'content_block_start', 'content_block_stop', 'content_block_start', 'content_block_stop', 'message_delta', 'message_stop'],
    ],
    [
      'text with citations: the text, then one citations_delta each',
      message([{ type: 'text', text: 'WAL lets readers run beside a writer.', citations: [{ type: 'web_search_result_location', url: 'https://sqlite.org/wal.html', cited_text: 'readers' }, { type: 'web_search_result_location', url: 'https://sqlite.org/wal.html', cited_text: 'writer' }] }]),
      ['message_start', 'content_block_start', 'delta:text_delta', 'delta:citations_delta', 'delta:citations_delta', 'content_block_stop', 'message_delta', 'message_stop'],
    ],
  ];

  for (const [name, m, expected] of cases) {
    it(`${name}: the events in the API's order, and the SDK's accumulator rebuilds the same Message`, () => {
      const events = messageEvents(m);
      expect(shape(events)).toEqual(expected);
      expect(accumulate(wire(events))).toEqual(m);
      // Cut into small deltas (a long answer), the same Message.
      const small = messageEvents(m, { chunkChars: 3 });
      expect(accumulate(wire(small))).toEqual(m);
    });
  }

  it('message_start carries the real id, no content, no stop reason, the input side of the usage and an output placeholder of 1', () => {
    const m = message([{ type: 'text', text: 'hi' }], { stop_details: { type: 'refusal', category: null, explanation: null } });
    const [start] = messageEvents(m);
    expect(start).toEqual({
      event: 'message_start',
      data: {
        type: 'message_start',
        message: { id: 'msg_01Batched', type: 'message', role: 'assistant', model: 'claude-sonnet-4-6', content: [], stop_reason: null, stop_sequence: null, stop_details: null, usage: { ...USAGE, output_tokens: 1 } },
      },
    });
  });

  it('message_delta carries the stop reason and the final usage; the beta fields (context_management, output details) survive the round trip', () => {
    const m = message([{ type: 'text', text: 'done' }], {
      stop_details: null,
      container: { id: 'container_01', expires_at: '2026-12-02T16:00:00Z' },
      context_management: { applied_edits: [{ type: 'clear_tool_uses_20250919', cleared_tool_uses: 3 }] },
      usage: { ...USAGE, server_tool_use: { web_search_requests: 2, web_fetch_requests: 0 }, output_tokens_details: { thinking_tokens: 7 }, iterations: [{ input_tokens: 68, output_tokens: 138 }] },
    });
    const events = messageEvents(m);
    const delta = events.at(-2)!;
    expect(delta.data).toEqual({
      type: 'message_delta',
      delta: { stop_reason: 'end_turn', stop_sequence: null, stop_details: null, container: { id: 'container_01', expires_at: '2026-12-02T16:00:00Z' } },
      usage: { output_tokens: 138, input_tokens: 68, cache_creation_input_tokens: 40, cache_read_input_tokens: 2000, server_tool_use: { web_search_requests: 2, web_fetch_requests: 0 }, output_tokens_details: { thinking_tokens: 7 }, iterations: [{ input_tokens: 68, output_tokens: 138 }] },
      context_management: { applied_edits: [{ type: 'clear_tool_uses_20250919', cleared_tool_uses: 3 }] },
    });
    expect(accumulate(wire(events))).toEqual(m);
  });

  it('a tool input cut at any character is one whole object again at content_block_stop', () => {
    const input = { command: 'npm test -- --grep "cart total"', description: 'Run the cart tests ✓ 🧪' };
    const m = message([{ type: 'tool_use', id: 'toolu_0133', name: 'Bash', input }], { stop_reason: 'tool_use' });
    for (const size of [1, 2, 5, 17]) {
      const fragments = messageEvents(m, { chunkChars: size }).filter((e) => e.event === 'content_block_delta').map((e) => (e.data.delta as { partial_json: string }).partial_json);
      expect(fragments.length).toBeGreaterThan(1);
      expect(JSON.parse(fragments.join(''))).toEqual(input);
    }
  });

  it('text is never cut inside a surrogate pair', () => {
    expect(splitText('a🧪b', 2)).toEqual(['a', '🧪', 'b']);
    expect(splitText('🧪🧪', 3)).toEqual(['🧪', '🧪']);
    expect(splitText('🧪🧪', 1)).toEqual(['🧪', '🧪']);
    expect(splitText('', 4)).toEqual(['']);
  });

  it('on the wire: one event per frame, keepalives as comments the SDK never sees, an error the SDK raises', () => {
    const m = message([{ type: 'text', text: 'ok' }]);
    const body = SSE_KEEPALIVE + SSE_KEEPALIVE + messageEvents(m).map(formatSse).join('');
    expect(body.startsWith(': keepalive\n\n: keepalive\n\nevent: message_start\ndata: {')).toBe(true);
    expect(accumulate(sseEvents(body))).toEqual(m);

    const failed = SSE_KEEPALIVE + formatSse(errorEvent({ type: 'overloaded_error', message: 'the batch expired 3 times' }));
    expect(failed).toBe(': keepalive\n\nevent: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"the batch expired 3 times"}}\n\n');
    expect(() => accumulate(sseEvents(failed))).toThrow(StreamError);
  });

  it('each error type maps to its HTTP status (for a client that did not stream)', () => {
    expect([['invalid_request_error', 400], ['rate_limit_error', 429], ['overloaded_error', 529], ['request_too_large', 413], ['a_new_error', 500]].map(([t]) => statusOfErrorType(t as string))).toEqual([400, 429, 529, 413, 500]);
  });
});
