import { describe, expect, it } from 'vitest';
import { SseReader } from '../../core/gateway/sse.js';
import { createUsageMeter, meteredCost, type GatewayProvider, type MeteredResponse } from '../../core/gateway/meter.js';
import { buildPriceTable } from '../../core/price-table.js';
import { ZERO_TOKEN_COUNTS } from '../support/usage-tokens.js';

const sse = (event: string, data: unknown): string => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;

const START_USAGE = {
  input_tokens: 68,
  cache_creation_input_tokens: 300,
  cache_read_input_tokens: 2000,
  cache_creation: { ephemeral_5m_input_tokens: 100, ephemeral_1h_input_tokens: 200 },
  output_tokens: 1,
  service_tier: 'standard',
  inference_geo: 'global',
};
const messageStart = (usage: object = START_USAGE) =>
  sse('message_start', { type: 'message_start', message: { id: 'msg_011', type: 'message', role: 'assistant', model: 'claude-sonnet-4-6', content: [], usage } });
const TEXT = [
  sse('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
  sse('ping', { type: 'ping' }),
  sse('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'message_delta is a word here' } }),
  sse('content_block_stop', { type: 'content_block_stop', index: 0 }),
].join('');
const messageDelta = (usage: object) => sse('message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage });
const STOP = sse('message_stop', { type: 'message_stop' });

/** Feeds `body` in pieces of `size` characters (cut anywhere, even inside "\r\n"), then finishes. */
function meter(provider: GatewayProvider, contentType: string, body: string, size = body.length): MeteredResponse | null {
  const m = createUsageMeter(provider, contentType);
  for (let i = 0; i < body.length; i += size) m.push(body.slice(i, i + size));
  return m.finish();
}

const tokens = (over: Partial<MeteredResponse['tokens']>): MeteredResponse['tokens'] => ({
  ...ZERO_TOKEN_COUNTS,
  serviceTier: null,
  inferenceGeo: null,
  ...over,
});

describe('the SSE reader', () => {
  it.each([
    ['\\n', '\n'],
    ['\\r\\n', '\r\n'],
    ['\\r', '\r'],
  ])('frames events with %s line ends however the text is cut', (_name, eol) => {
    const text = `: comment${eol}event: a${eol}data: {"x":1}${eol}${eol}data: one${eol}data: two${eol}${eol}event: b${eol}data:no-space${eol}${eol}`;
    for (const size of [1, 2, 3, 7, text.length]) {
      const r = new SseReader();
      const got = [];
      for (let i = 0; i < text.length; i += size) got.push(...r.push(text.slice(i, i + size)));
      got.push(...r.end());
      expect(got, `pieces of ${size}`).toEqual([
        { event: 'a', data: '{"x":1}' },
        { event: 'message', data: 'one\ntwo' },
        { event: 'b', data: 'no-space' },
      ]);
    }
  });

  it('yields an event cut off by the end of the stream at end()', () => {
    const r = new SseReader();
    expect(r.push('event: x\ndata: 1')).toEqual([]);
    expect(r.end()).toEqual([{ event: 'x', data: '1' }]);
  });
});

describe('the Anthropic usage meter', () => {
  const cases: Array<{ name: string; body: string; want: Omit<MeteredResponse, 'provider'> }> = [
    {
      name: 'message_start overlaid by the last message_delta, never added; the 5m/1h split and tier from the start',
      body: messageStart() + TEXT + messageDelta({ output_tokens: 5 }) + messageDelta({ input_tokens: 68, cache_creation_input_tokens: 300, cache_read_input_tokens: 2000, output_tokens: 13, server_tool_use: { web_search_requests: 2 } }) + STOP,
      want: {
        responseId: 'msg_011',
        model: 'claude-sonnet-4-6',
        tokens: tokens({ inputTokens: 68, outputTokens: 13, cacheWrite5mTokens: 100, cacheWrite1hTokens: 200, cacheReadTokens: 2000, webSearchRequests: 2, serviceTier: 'standard', inferenceGeo: 'global' }),
        outputKnown: true,
      },
    },
    {
      name: 'an old-style delta with output_tokens only keeps the input side of the start',
      body: messageStart() + TEXT + messageDelta({ output_tokens: 22 }) + STOP,
      want: {
        responseId: 'msg_011',
        model: 'claude-sonnet-4-6',
        tokens: tokens({ inputTokens: 68, outputTokens: 22, cacheWrite5mTokens: 100, cacheWrite1hTokens: 200, cacheReadTokens: 2000, serviceTier: 'standard', inferenceGeo: 'global' }),
        outputKnown: true,
      },
    },
    {
      name: 'a delta that changes the cache-write total keeps the 1h part and counts the rest as 5m',
      body: messageStart() + messageDelta({ cache_creation_input_tokens: 250, output_tokens: 3 }),
      want: {
        responseId: 'msg_011',
        model: 'claude-sonnet-4-6',
        tokens: tokens({ inputTokens: 68, outputTokens: 3, cacheWrite5mTokens: 50, cacheWrite1hTokens: 200, cacheReadTokens: 2000, serviceTier: 'standard', inferenceGeo: 'global' }),
        outputKnown: true,
      },
    },
    {
      name: 'no split in the start: every cache write is a 5-minute one',
      body: messageStart({ input_tokens: 10, cache_creation_input_tokens: 40, output_tokens: 1 }) + messageDelta({ output_tokens: 4 }),
      want: { responseId: 'msg_011', model: 'claude-sonnet-4-6', tokens: tokens({ inputTokens: 10, outputTokens: 4, cacheWrite5mTokens: 40 }), outputKnown: true },
    },
    {
      // The one text delta is 28 characters: a token per 2, never the placeholder 1 of message_start.
      name: 'a stream cut before message_delta records the input side and estimates the output from the deltas seen, marked unknown',
      body: messageStart() + TEXT,
      want: {
        responseId: 'msg_011',
        model: 'claude-sonnet-4-6',
        tokens: tokens({ inputTokens: 68, outputTokens: 14, cacheWrite5mTokens: 100, cacheWrite1hTokens: 200, cacheReadTokens: 2000, serviceTier: 'standard', inferenceGeo: 'global' }),
        outputKnown: false,
      },
    },
    {
      name: 'an upstream error event mid-stream: the same',
      body: messageStart() + TEXT + sse('error', { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }),
      want: {
        responseId: 'msg_011',
        model: 'claude-sonnet-4-6',
        tokens: tokens({ inputTokens: 68, outputTokens: 14, cacheWrite5mTokens: 100, cacheWrite1hTokens: 200, cacheReadTokens: 2000, serviceTier: 'standard', inferenceGeo: 'global' }),
        outputKnown: false,
      },
    },
    {
      name: 'events without an event: line are recognised by their type',
      body: `data: ${JSON.stringify({ type: 'message_start', message: { id: 'msg_2', model: 'm', usage: { input_tokens: 5, output_tokens: 1 } } })}\n\ndata: ${JSON.stringify({ type: 'message_delta', usage: { output_tokens: 9 } })}\n\n`,
      want: { responseId: 'msg_2', model: 'm', tokens: tokens({ inputTokens: 5, outputTokens: 9 }), outputKnown: true },
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      for (const size of [1, 5, 64, c.body.length]) {
        expect(meter('anthropic', 'text/event-stream; charset=utf-8', c.body, size), `pieces of ${size}`).toEqual({ provider: 'anthropic', ...c.want });
      }
    });
  }

  it('a stream without message_start meters nothing', () => {
    expect(meter('anthropic', 'text/event-stream', TEXT + STOP)).toBeNull();
  });

  it('a non-streaming Message carries its usage whole', () => {
    const body = JSON.stringify({ id: 'msg_j', type: 'message', model: 'claude-opus-5-5', content: [{ type: 'text', text: 'hi' }], usage: { ...START_USAGE, output_tokens: 40, inference_geo: 'us' } });
    expect(meter('anthropic', 'application/json', body, 9)).toEqual({
      provider: 'anthropic',
      responseId: 'msg_j',
      model: 'claude-opus-5-5',
      tokens: tokens({ inputTokens: 68, outputTokens: 40, cacheWrite5mTokens: 100, cacheWrite1hTokens: 200, cacheReadTokens: 2000, serviceTier: 'standard', inferenceGeo: 'us' }),
      outputKnown: true,
    });
  });

  it('a JSON body that is not a Message (or is cut) meters nothing', () => {
    expect(meter('anthropic', 'application/json', '{"id":"msg_x","usage":{"input_tok')).toBeNull();
    expect(meter('anthropic', 'application/json', '{"type":"error"}')).toBeNull();
  });
});

describe('the OpenAI Responses usage meter', () => {
  const completed = (type: string, usage: object | null, tier = 'default') =>
    sse(type, { type, sequence_number: 42, response: { id: 'resp_1', object: 'response', status: 'completed', model: 'gpt-5.4', service_tier: tier, output: [], usage } });
  const USAGE = { input_tokens: 1200, input_tokens_details: { cached_tokens: 1024, cache_write_tokens: 0 }, output_tokens: 300, output_tokens_details: { reasoning_tokens: 128 }, total_tokens: 1500 };
  const early = sse('response.created', { type: 'response.created', sequence_number: 0, response: { id: 'resp_1', model: 'gpt-5.4', service_tier: 'auto', usage: null } }) +
    sse('response.output_text.delta', { type: 'response.output_text.delta', sequence_number: 5, delta: 'response.completed' });

  it.each([
    ['response.completed', 'default'],
    ['response.incomplete', 'flex'],
    ['response.failed', 'priority'],
  ])('%s: usage from the terminal event, cached tokens out of the input, the tier actually used', (type, tier) => {
    const body = early + completed(type, USAGE, tier);
    for (const size of [1, 13, body.length]) {
      expect(meter('openai', 'text/event-stream', body, size)).toEqual({
        provider: 'openai',
        responseId: 'resp_1',
        model: 'gpt-5.4',
        tokens: tokens({ inputTokens: 176, outputTokens: 300, cacheReadTokens: 1024, serviceTier: tier }),
        outputKnown: true,
      });
    }
  });

  it('no terminal event, or one without usage: the output estimated from the deltas, the input from the request, marked unknown', () => {
    // The one text delta is 18 characters ("response.completed": a word here, not an event): a token per 2.
    const estimated = { provider: 'openai', responseId: 'resp_1', model: 'gpt-5.4', tokens: tokens({ inputTokens: 340, outputTokens: 9 }), outputKnown: false };
    for (const body of [early, early + completed('response.failed', null)]) {
      const m = createUsageMeter('openai', 'text/event-stream');
      for (let i = 0; i < body.length; i += 7) m.push(body.slice(i, i + 7));
      expect(m.finish({ requestInputTokens: 340 })).toEqual(estimated);
    }
  });

  it('a stream that never said what it was meters nothing', () => {
    expect(meter('openai', 'text/event-stream', sse('response.output_text.delta', { type: 'response.output_text.delta', delta: 'hi' }))).toBeNull();
  });

  it('a non-streaming response', () => {
    const body = JSON.stringify({ id: 'resp_2', object: 'response', model: 'gpt-5.4-mini', service_tier: 'flex', usage: { input_tokens: 50, output_tokens: 7 } });
    expect(meter('openai', 'application/json', body)).toEqual({
      provider: 'openai',
      responseId: 'resp_2',
      model: 'gpt-5.4-mini',
      tokens: tokens({ inputTokens: 50, outputTokens: 7, serviceTier: 'flex' }),
      outputKnown: true,
    });
  });
});

describe('the cost of a metered response', () => {
  const table = buildPriceTable([
    {
      effectiveFrom: '2024-01-01',
      rows: {
        'claude-t': {
          litellm_provider: 'anthropic',
          input_cost_per_token: 3e-6,
          output_cost_per_token: 15e-6,
          cache_creation_input_token_cost: 3.75e-6,
          cache_creation_input_token_cost_above_1hr: 6e-6,
          cache_read_input_token_cost: 0.3e-6,
        },
        'gpt-t': { litellm_provider: 'openai', input_cost_per_token: 2.5e-6, output_cost_per_token: 15e-6, cache_read_input_token_cost: 0.25e-6 },
      },
    },
  ]);
  const at = Date.UTC(2026, 10, 30);
  const m = (provider: GatewayProvider, t: Partial<MeteredResponse['tokens']>): MeteredResponse => ({ provider, responseId: 'x', model: null, tokens: tokens(t), outputKnown: true });

  it.each([
    ['every token class at its rate', m('anthropic', { inputTokens: 1000, outputTokens: 100, cacheWrite5mTokens: 100, cacheWrite1hTokens: 200, cacheReadTokens: 2000 }), 'claude-t', 3000 + 1500 + 375 + 1200 + 600],
    ['batch tier at half price', m('anthropic', { inputTokens: 1000, serviceTier: 'batch' }), 'claude-t', 1500],
    ['OpenAI cached input at the cache-read rate', m('openai', { inputTokens: 176, cacheReadTokens: 1024, outputTokens: 300 }), 'gpt-t', 440 + 256 + 4500],
    ['OpenAI flex at half price', m('openai', { inputTokens: 1000, serviceTier: 'flex' }), 'gpt-t', 1250],
  ])('%s', (_name, metered, model, micros) => {
    expect(meteredCost(table, metered, model, at)).toBe(micros);
  });

  it('an unknown model is unpriced (null), never $0', () => {
    expect(meteredCost(table, m('anthropic', { inputTokens: 1000 }), 'claude-unheard-of', at)).toBeNull();
  });
});
