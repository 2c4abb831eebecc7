/**
 * The gateway's usage meter: what one model response used, read from the bytes the gateway passes through. Pure.
 *
 * Anthropic Messages (shared/facts/model-apis.md §1.5): final usage = the `message_start` usage overlaid field by field
 * with the last `message_delta` usage, never added; the cache-write 5m/1h split, `service_tier` and `inference_geo`
 * only come in `message_start`. A stream that ends without a `message_delta` (the upstream cut or stopped after the
 * client left, an upstream `error`) keeps the input side and estimates the output from the deltas seen
 * (core/gateway/output-estimate.ts), marked as not known. A non-streaming response carries `usage` whole.
 * OpenAI Responses (§5.2, §5.3): usage only in the terminal event (`response.completed`, `.incomplete`, `.failed`);
 * `input_tokens` includes `cached_tokens`. A stream without one is estimated: output from its deltas, input from the
 * request's size (the caller's), model and id from `response.created`.
 */
import { z } from 'zod';
import type { PriceTable } from '../price-table.js';
import { priceUsage } from '../pricing.js';
import type { UsageTokens } from '../usage.js';
import { SseReader, type SseEvent } from './sse.js';
import { anthropicDeltaChars, isOpenAITextDelta, openAIDeltaChars, OutputDeltaCount } from './output-estimate.js';

export type GatewayProvider = 'anthropic' | 'openai';

export interface MeteredResponse {
  provider: GatewayProvider;
  /** `message.id` / `response.id`; null when the response named none. */
  responseId: string | null;
  /** The model that answered (the response's own, not the one asked for); null when it named none. */
  model: string | null;
  tokens: UsageTokens;
  /** False when the response ended before its final usage: the output is an estimate from the deltas seen (it errs
   * high, but cannot count what the API never streamed). */
  outputKnown: boolean;
}

/** What the gateway knows of the request, for a response that never said its own usage. */
export interface MeterContext {
  /** The request's input tokens, estimated from its size (OpenAI states its input only in the terminal event). */
  requestInputTokens?: number;
}

const count = z.number().int().nonnegative().nullish();

const AnthropicUsage = z.object({
  input_tokens: count,
  output_tokens: count,
  cache_creation_input_tokens: count,
  cache_read_input_tokens: count,
  cache_creation: z.object({ ephemeral_5m_input_tokens: count, ephemeral_1h_input_tokens: count }).nullish(),
  server_tool_use: z.object({ web_search_requests: count }).nullish(),
  service_tier: z.string().nullish(),
  inference_geo: z.string().nullish(),
});
type AnthropicUsage = z.infer<typeof AnthropicUsage>;

const AnthropicMessage = z.object({ id: z.string().nullish(), model: z.string().nullish(), usage: AnthropicUsage.nullish() });
const MessageStart = z.object({ message: AnthropicMessage });
const MessageDelta = z.object({ usage: AnthropicUsage.nullish() });

const OpenAIUsage = z.object({
  input_tokens: count,
  input_tokens_details: z.object({ cached_tokens: count }).nullish(),
  output_tokens: count,
});
const OpenAIResponse = z.object({
  id: z.string().nullish(),
  model: z.string().nullish(),
  service_tier: z.string().nullish(),
  usage: OpenAIUsage.nullish(),
});
const OpenAIEvent = z.object({ response: OpenAIResponse.nullish() });
const OPENAI_TERMINAL = new Set(['response.completed', 'response.incomplete', 'response.failed']);

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    // An event that is not JSON carries no usage: it is skipped.
    return undefined;
  }
}

/**
 * The overlay rule. The delta's cache-write total can differ from the start's, and how the difference splits
 * between 5m and 1h is unconfirmed: the 1h part stays as `message_start` said (capped), the rest counts as 5m
 * (the default TTL, and the cheaper guess).
 */
export function overlayAnthropicUsage(start: AnthropicUsage, delta: AnthropicUsage | null): { tokens: UsageTokens; outputKnown: boolean } {
  const cacheWrite = delta?.cache_creation_input_tokens ?? start.cache_creation_input_tokens ?? 0;
  const oneHour = Math.min(cacheWrite, start.cache_creation?.ephemeral_1h_input_tokens ?? 0);
  const output = delta?.output_tokens;
  return {
    tokens: {
      inputTokens: delta?.input_tokens ?? start.input_tokens ?? 0,
      outputTokens: output ?? 0,
      cacheWrite5mTokens: cacheWrite - oneHour,
      cacheWrite1hTokens: oneHour,
      cacheReadTokens: delta?.cache_read_input_tokens ?? start.cache_read_input_tokens ?? 0,
      webSearchRequests: delta?.server_tool_use?.web_search_requests ?? start.server_tool_use?.web_search_requests ?? 0,
      serviceTier: start.service_tier ?? null,
      inferenceGeo: start.inference_geo ?? null,
    },
    outputKnown: output !== null && output !== undefined,
  };
}

function openAITokens(usage: z.infer<typeof OpenAIUsage>, serviceTier: string | null): UsageTokens {
  const input = usage.input_tokens ?? 0;
  const cached = Math.min(input, usage.input_tokens_details?.cached_tokens ?? 0);
  return {
    inputTokens: input - cached,
    outputTokens: usage.output_tokens ?? 0,
    cacheWrite5mTokens: 0,
    cacheWrite1hTokens: 0,
    cacheReadTokens: cached,
    webSearchRequests: 0,
    serviceTier,
    inferenceGeo: null,
  };
}

/** Accumulates one response; `push` the decoded body text as it streams, `finish` at its end. */
export interface UsageMeter {
  push(text: string): void;
  finish(context?: MeterContext): MeteredResponse | null;
}

class AnthropicStreamMeter implements UsageMeter {
  private readonly sse = new SseReader();
  private start: z.infer<typeof AnthropicMessage> | null = null;
  private delta: AnthropicUsage | null = null;
  private readonly output = new OutputDeltaCount();

  push(text: string): void {
    for (const e of this.sse.push(text)) this.event(e);
  }

  private event(e: SseEvent): void {
    // Two events carry usage; the content deltas are counted, for a response whose final usage never comes.
    if (e.event === 'content_block_delta' || (e.event === 'message' && e.data.includes('"content_block_delta"'))) {
      const chars = anthropicDeltaChars(e.data);
      if (chars !== null) this.output.add(chars);
    } else if (e.event === 'message_start' || (e.event === 'message' && e.data.includes('"message_start"'))) {
      const m = MessageStart.safeParse(parseJson(e.data));
      if (m.success) this.start = m.data.message;
    } else if (e.event === 'message_delta' || (e.event === 'message' && e.data.includes('"message_delta"'))) {
      const d = MessageDelta.safeParse(parseJson(e.data));
      if (d.success && d.data.usage) this.delta = d.data.usage;
    }
  }

  finish(): MeteredResponse | null {
    for (const e of this.sse.end()) this.event(e);
    if (!this.start) return null;
    const { tokens, outputKnown } = overlayAnthropicUsage(this.start.usage ?? {}, this.delta);
    // No final count: the deltas seen, never below message_start's placeholder.
    if (!outputKnown) tokens.outputTokens = this.output.tokens(this.start.usage?.output_tokens ?? 0);
    return { provider: 'anthropic', responseId: this.start.id ?? null, model: this.start.model ?? null, tokens, outputKnown };
  }
}

class OpenAIStreamMeter implements UsageMeter {
  private readonly sse = new SseReader();
  private terminal: z.infer<typeof OpenAIResponse> | null = null;
  /** `response.created`: the id and model, for a stream that never reaches its terminal event. */
  private created: z.infer<typeof OpenAIResponse> | null = null;
  private readonly output = new OutputDeltaCount();

  push(text: string): void {
    for (const e of this.sse.push(text)) this.event(e);
  }

  private event(e: SseEvent): void {
    const name = e.event === 'message' ? /"type"\s*:\s*"([^"]+)"/.exec(e.data)?.[1] ?? '' : e.event;
    if (isOpenAITextDelta(name)) {
      const chars = openAIDeltaChars(e.data);
      if (chars !== null) this.output.add(chars);
      return;
    }
    const terminal = OPENAI_TERMINAL.has(name);
    if (!terminal && !(name === 'response.created' && this.created === null)) return;
    const parsed = OpenAIEvent.safeParse(parseJson(e.data));
    if (!parsed.success || !parsed.data.response) return;
    if (terminal) this.terminal = parsed.data.response;
    else this.created = parsed.data.response;
  }

  finish(context: MeterContext = {}): MeteredResponse | null {
    for (const e of this.sse.end()) this.event(e);
    const result = openAIResult(this.terminal);
    if (result) return result;
    // Usage comes only with the terminal event: without it, an estimate — if the stream said what it was at all.
    const r = this.terminal ?? this.created;
    if (!r) return null;
    return {
      provider: 'openai',
      responseId: r.id ?? null,
      model: r.model ?? null,
      tokens: { ...openAITokens({}, null), inputTokens: context.requestInputTokens ?? 0, outputTokens: this.output.tokens() },
      outputKnown: false,
    };
  }
}

function openAIResult(r: z.infer<typeof OpenAIResponse> | null): MeteredResponse | null {
  if (!r?.usage) return null;
  return {
    provider: 'openai',
    responseId: r.id ?? null,
    model: r.model ?? null,
    tokens: openAITokens(r.usage, r.service_tier ?? null),
    outputKnown: true,
  };
}

/** A non-streaming response: the JSON body, kept up to `limitChars` (a bigger one is passed through unmetered). */
class JsonBodyMeter implements UsageMeter {
  private body = '';
  private over = false;
  constructor(
    private readonly provider: GatewayProvider,
    private readonly limitChars: number,
  ) {}

  push(text: string): void {
    if (this.over) return;
    if (this.body.length + text.length > this.limitChars) {
      this.over = true;
      this.body = '';
      return;
    }
    this.body += text;
  }

  finish(): MeteredResponse | null {
    if (this.over) return null;
    const json = parseJson(this.body);
    if (this.provider === 'openai') {
      const r = OpenAIResponse.safeParse(json);
      return r.success ? openAIResult(r.data) : null;
    }
    return meteredMessage(json);
  }
}

/** A whole Anthropic Message (a non-streaming answer, a Message Batch's result): what its usage meters as. */
export function meteredMessage(json: unknown): MeteredResponse | null {
  const m = AnthropicMessage.safeParse(json);
  if (!m.success || !m.data.usage) return null;
  const { tokens, outputKnown } = overlayAnthropicUsage(m.data.usage, m.data.usage);
  return { provider: 'anthropic', responseId: m.data.id ?? null, model: m.data.model ?? null, tokens, outputKnown };
}

/** Big enough for any real Messages/Responses JSON body; the response itself is never held back by it. */
const JSON_METER_LIMIT_CHARS = 64 * 1024 * 1024;

/** The meter for a response of this provider and content type (`text/event-stream` or JSON). */
export function createUsageMeter(provider: GatewayProvider, contentType: string): UsageMeter {
  const streaming = contentType.toLowerCase().includes('text/event-stream');
  if (!streaming) return new JsonBodyMeter(provider, JSON_METER_LIMIT_CHARS);
  return provider === 'anthropic' ? new AnthropicStreamMeter() : new OpenAIStreamMeter();
}

/** The cost of a metered response from the price table; null when the model has no price (shown as unpriced). */
export function meteredCost(prices: PriceTable, m: MeteredResponse, model: string, atMs: number): number | null {
  const priced = priceUsage(prices, {
    ...m.tokens,
    source: 'gateway',
    dedupKey: m.responseId ?? '',
    sessionId: '',
    model,
    timestampMs: atMs,
    cwd: null,
  });
  return priced.priced ? priced.costMicros : null;
}
