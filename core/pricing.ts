/**
 * Prices one usage record against the effective-dated table. Pure.
 *
 * Cost = Σ tokens × rate (integer pico-dollars), × 0.5 for batch/flex, × the row's US multiplier for
 * `inference_geo: "us"`, + web searches × the row's per-search price; rounded once to integer micro-dollars.
 * See shared/facts/model-apis.md §2.
 */
import type { PriceTable, TokenRates } from './price-table.js';
import type { PricedCost, UsageRecord } from './usage.js';

/** Claude Code's own records (limit errors, "No response requested."): not a model call, never billed. */
export const SYNTHETIC_MODEL = '<synthetic>';

/** Service tiers billed at half of every token price (Anthropic Batch API; OpenAI batch and flex). */
const HALF_PRICE_TIERS: ReadonlySet<string> = new Set(['batch', 'flex']);

const PICO_PER_MICRO = 1e6;

type TokenClass = keyof TokenRates;

const TOKEN_CLASS_LABEL: Record<TokenClass, string> = {
  input: 'input',
  output: 'output',
  cacheWrite5m: '5-minute cache-write',
  cacheWrite1h: '1-hour cache-write',
  cacheRead: 'cache-read',
};

function isCount(n: number): boolean {
  return Number.isSafeInteger(n) && n >= 0;
}

export function priceUsage(table: PriceTable, usage: UsageRecord): PricedCost {
  if (usage.model === SYNTHETIC_MODEL) return { priced: true, costMicros: 0 };

  const row = table.lookup(usage.model, usage.timestampMs);
  if (row === null) return { priced: false, reason: `no price for model ${usage.model}` };

  const tokens: Record<TokenClass, number> = {
    input: usage.inputTokens,
    output: usage.outputTokens,
    cacheWrite5m: usage.cacheWrite5mTokens,
    cacheWrite1h: usage.cacheWrite1hTokens,
    cacheRead: usage.cacheReadTokens,
  };
  for (const [cls, n] of Object.entries(tokens)) {
    if (!isCount(n)) return { priced: false, reason: `invalid ${TOKEN_CLASS_LABEL[cls as TokenClass]} token count ${n}` };
  }
  if (!isCount(usage.webSearchRequests)) {
    return { priced: false, reason: `invalid web search count ${usage.webSearchRequests}` };
  }

  // The prompt-size tier is chosen by total input and then prices the whole request.
  const totalInput = tokens.input + tokens.cacheWrite5m + tokens.cacheWrite1h + tokens.cacheRead;
  let rates = row.base;
  for (const tier of row.tiers) {
    if (totalInput > tier.aboveTokens) rates = tier.rates;
  }

  let tokenPico = 0;
  for (const cls of Object.keys(tokens) as TokenClass[]) {
    const n = tokens[cls];
    if (n === 0) continue;
    const rate = rates[cls];
    if (rate === null) {
      return { priced: false, reason: `no ${TOKEN_CLASS_LABEL[cls]} price for model ${usage.model}` };
    }
    tokenPico += n * rate;
  }

  let multiplier = 1;
  if (usage.serviceTier !== null && HALF_PRICE_TIERS.has(usage.serviceTier)) multiplier *= 0.5;
  if (usage.inferenceGeo === 'us') multiplier *= row.usGeoMultiplier;

  let searchPico = 0;
  if (usage.webSearchRequests > 0) {
    if (row.webSearchPerRequest === null) {
      return { priced: false, reason: `no web search price for model ${usage.model}` };
    }
    searchPico = usage.webSearchRequests * row.webSearchPerRequest;
  }

  const costMicros = Math.round((tokenPico * multiplier + searchPico) / PICO_PER_MICRO);
  return { priced: true, costMicros };
}
