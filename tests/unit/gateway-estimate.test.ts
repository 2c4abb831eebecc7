import { describe, expect, it } from 'vitest';
import { buildPriceTable } from '../../core/price-table.js';
import { estimateRequest, OUTPUT_CEILING_TOKENS, type RequestEstimate } from '../../core/gateway/request-estimate.js';
import { anthropicDeltaChars, isOpenAITextDelta, openAIDeltaChars, OutputDeltaCount } from '../../core/gateway/output-estimate.js';
import type { GatewayProvider } from '../../core/gateway/meter.js';

const table = buildPriceTable([
  {
    effectiveFrom: '2024-01-01',
    rows: {
      // $3 in, $15 out, $3.75 5m write, $6 1h write per M; data residency ×1.1
      'claude-t': {
        litellm_provider: 'anthropic',
        input_cost_per_token: 3e-6,
        output_cost_per_token: 15e-6,
        cache_creation_input_token_cost: 3.75e-6,
        cache_creation_input_token_cost_above_1hr: 6e-6,
        cache_read_input_token_cost: 0.3e-6,
        sleds_us_geo_multiplier: 1.1,
      },
      // no cache-write price: the input rate is the dearest
      'gpt-t': { litellm_provider: 'openai', input_cost_per_token: 2.5e-6, output_cost_per_token: 15e-6, cache_read_input_token_cost: 0.25e-6 },
    },
  },
]);
const at = Date.UTC(2026, 10, 30);

describe('the estimate reserved for a request', () => {
  it.each<[string, GatewayProvider, unknown, number, RequestEstimate]>([
    [
      'Messages: a token per 3 body bytes at the 1-hour cache-write rate, max_tokens at the output rate, ×1.1 for US residency',
      'anthropic', { model: 'claude-t', max_tokens: 1000 }, 3000,
      { model: 'claude-t', inputTokens: 1000, outputTokens: 1000, costMicros: Math.round((1000 * 6 + 1000 * 15) * 1.1) },
    ],
    [
      'Messages without max_tokens (the API refuses it, but the estimate does not trust that): the output ceiling',
      'anthropic', { model: 'claude-t' }, 300,
      { model: 'claude-t', inputTokens: 100, outputTokens: OUTPUT_CEILING_TOKENS, costMicros: Math.round((100 * 6 + OUTPUT_CEILING_TOKENS * 15) * 1.1) },
    ],
    [
      'Responses: max_output_tokens; no cache-write price, so input at the input rate; no residency multiplier on the row',
      'openai', { model: 'gpt-t', max_output_tokens: 2000, input: 'hi' }, 3001,
      { model: 'gpt-t', inputTokens: 1001, outputTokens: 2000, costMicros: Math.round(1001 * 2.5 + 2000 * 15) },
    ],
    [
      'Responses: the Messages field is not its ceiling',
      'openai', { model: 'gpt-t', max_tokens: 10 }, 30,
      { model: 'gpt-t', inputTokens: 10, outputTokens: OUTPUT_CEILING_TOKENS, costMicros: Math.round(10 * 2.5 + OUTPUT_CEILING_TOKENS * 15) },
    ],
    [
      'a ceiling that is not a positive integer is no ceiling',
      'anthropic', { model: 'claude-t', max_tokens: 'lots' }, 3,
      { model: 'claude-t', inputTokens: 1, outputTokens: OUTPUT_CEILING_TOKENS, costMicros: Math.round((6 + OUTPUT_CEILING_TOKENS * 15) * 1.1) },
    ],
    [
      'a model without a price reserves nothing (its response is recorded unpriced and adds nothing to the spend)',
      'anthropic', { model: 'claude-unheard-of', max_tokens: 1000 }, 3000,
      { model: 'claude-unheard-of', inputTokens: 1000, outputTokens: 1000, costMicros: 0 },
    ],
    ['no model, or not a request at all: nothing (the upstream refuses it, for nothing)', 'anthropic', ['not', 'an', 'object'], 21, { model: null, inputTokens: 7, outputTokens: OUTPUT_CEILING_TOKENS, costMicros: 0 }],
  ])('%s', (_name, provider, body, bytes, want) => {
    expect(estimateRequest(table, provider, body, bytes, at)).toEqual(want);
  });

  it('never below what the request is billed when its input is all 1-hour cache writes at 3 bytes a token and it writes max_tokens', () => {
    const e = estimateRequest(table, 'anthropic', { model: 'claude-t', max_tokens: 32_000 }, 300_000, at);
    expect(e.costMicros).toBeGreaterThanOrEqual(100_000 * 6 + 32_000 * 15);
  });
});

describe('the output estimate from the deltas seen', () => {
  const delta = (d: object) => JSON.stringify({ type: 'content_block_delta', index: 0, delta: d });
  it.each([
    ['text_delta', delta({ type: 'text_delta', text: 'hello world' }), 11],
    ['thinking_delta', delta({ type: 'thinking_delta', thinking: '12 × 12 = 144' }), 13],
    ['input_json_delta', delta({ type: 'input_json_delta', partial_json: '{"path": "a.ts"' }), 15],
    ['signature_delta: not output text', delta({ type: 'signature_delta', signature: 'EvgBCpIB…' }), null],
    ['citations_delta: not generated text', delta({ type: 'citations_delta', citation: { cited_text: 'x' } }), null],
    ['an unknown delta', delta({ type: 'future_delta', text: 'x' }), null],
    ['not JSON', '{"type":"content_block_delta",', null],
    // Read without JSON.parse when nothing is escaped; the same count as the parse, whatever the text holds.
    ['text with a non-BMP character', delta({ type: 'text_delta', text: 'héllo 🎉' }), 'héllo 🎉'.length],
    ['text with quotes and a newline (escaped)', delta({ type: 'text_delta', text: 'say "text":"x"\n' }), 'say "text":"x"\n'.length],
    ['text naming another delta type', delta({ type: 'text_delta', text: 'thinking_delta' }), 14],
  ])('Anthropic %s', (_name, data, chars) => {
    expect(anthropicDeltaChars(data)).toBe(chars);
  });

  it.each([
    ['response.output_text.delta', true],
    ['response.function_call_arguments.delta', true],
    ['response.reasoning_summary_text.delta', true],
    ['response.reasoning_text.delta', true],
    ['response.refusal.delta', true],
    ['response.custom_tool_call_input.delta', true],
    ['response.audio.delta', false],
    ['response.audio.transcript.delta', false],
    ['response.output_text.done', false],
    ['response.completed', false],
    ['codex.rate_limits', false],
  ])('OpenAI %s counts: %s', (event, counts) => {
    expect(isOpenAITextDelta(event)).toBe(counts);
  });

  it('OpenAI delta characters', () => {
    expect(openAIDeltaChars(JSON.stringify({ type: 'response.output_text.delta', delta: 'Hi there', sequence_number: 3 }))).toBe(8);
    expect(openAIDeltaChars(JSON.stringify({ type: 'response.output_text.delta', delta: { nested: true } }))).toBeNull();
    expect(openAIDeltaChars(JSON.stringify({ type: 'response.output_text.delta', delta: 'a "delta":"b" \t c' }))).toBe('a "delta":"b" \t c'.length);
    expect(openAIDeltaChars(JSON.stringify({ type: 'response.output_text.delta', delta: '🎉 ok' }))).toBe('🎉 ok'.length);
  });

  it.each([
    ['nothing seen: the floor', [], 1, 1],
    ['a token per 2 characters', [10, 7], 0, 9],
    ['never fewer tokens than deltas (a delta carries at least one)', [1, 1, 1, 1], 0, 4],
    ['empty fragments carry nothing', [0, 0, 0], 0, 0],
    ['never below the floor (message_start placeholder)', [4], 22, 22],
  ])('%s', (_name, chars, floor, tokens) => {
    const c = new OutputDeltaCount();
    for (const n of chars) c.add(n);
    expect(c.tokens(floor)).toBe(tokens);
  });
});
