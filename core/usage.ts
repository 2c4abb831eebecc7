/**
 * One priced unit of model usage, as read from any source (a transcript record, a rollout event, the gateway).
 * Tokens are counted the way the Anthropic usage object counts them; see shared/facts/model-apis.md §2.
 */
export interface UsageTokens {
  inputTokens: number;
  outputTokens: number;
  /** Cache writes with the 5-minute TTL (the default when the split is missing). */
  cacheWrite5mTokens: number;
  cacheWrite1hTokens: number;
  cacheReadTokens: number;
  /** Server-side web searches, billed per request. */
  webSearchRequests: number;
  /** "standard" | "priority" | "batch"; batch halves every token price. */
  serviceTier: string | null;
  /** "us" costs x1.1 on the models that have data residency pricing. */
  inferenceGeo: string | null;
}

/** Every token count at zero: a record spreads it, then sets what it is about. */
export const ZERO_TOKEN_COUNTS: Omit<UsageTokens, 'serviceTier' | 'inferenceGeo'> = {
  inputTokens: 0,
  outputTokens: 0,
  cacheWrite5mTokens: 0,
  cacheWrite1hTokens: 0,
  cacheReadTokens: 0,
  webSearchRequests: 0,
};

export interface UsageRecord extends UsageTokens {
  /** The adapter that produced it, e.g. "claude-transcript". */
  source: string;
  /** Unique across the source: for Claude, message.id + ":" + requestId. */
  dedupKey: string;
  sessionId: string;
  model: string;
  /** Epoch milliseconds. */
  timestampMs: number;
  cwd: string | null;
}

/** A plan window a wall can be hit in (the Claude `rateLimitType` / claim names, plus Codex windows later). */
export type WindowName = string;

/** A usage-limit rejection seen in a source: the bar hit 100%. */
export interface WallRecord {
  source: string;
  /** Unique across the source, so re-reading never records it twice. */
  dedupKey: string;
  sessionId: string;
  timestampMs: number;
  window: WindowName | null;
  resetsAtMs: number | null;
  message: string;
}

/** Money inside sleds is integer micro-dollars. */
export type Micros = number;

export type PricedCost = { priced: true; costMicros: Micros } | { priced: false; reason: string };
