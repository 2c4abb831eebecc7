/**
 * What one request to the platform key can cost, judged from its body before it goes upstream: the amount the
 * gateway reserves against the seat's allowance while the request runs (core/gateway/reservation.ts). Pure.
 *
 * The estimate errs high on purpose, because the allowance's bound is "spent ≤ cap + one request's estimate" only
 * while no running request costs more than its estimate; and erring high is cheap, because a lone request is
 * admitted whatever its estimate (the rule admits while spent + reserved < cap), so a high estimate only limits how
 * many requests run at once near the end of an allowance.
 *
 * - Output: the request's own ceiling, `max_tokens` (Messages) or `max_output_tokens` (Responses). The API never
 *   bills more output than that (thinking is inside `max_tokens`), so this side is a hard bound. Without one (a
 *   Responses request may leave it out), OUTPUT_CEILING_TOKENS: the most any current model writes in one response.
 * - Input: a token per BODY_BYTES_PER_TOKEN bytes of the whole body, priced at the dearest input rate the model has
 *   (the 1-hour cache write, 2× input). Tokenizers run 3.5–4 bytes a token on JSON-wrapped English and code, and
 *   most of a harness's prompt is billed as cache reads at a tenth of the input rate, so this is far above the real
 *   input bill of any ordinary request. Not a hard bound: a prompt built to be token-dense (mostly non-Latin script
 *   or odd symbols) can run denser than a token per 3 bytes. Base64 images and PDFs count by their bytes: far high.
 * - ×1.1 where the model has data-residency pricing (`inference_geo: "us"`), which the request may ask for.
 */
import { z } from 'zod';
import type { PriceTable } from '../price-table.js';
import { priceUsage } from '../pricing.js';
import { ZERO_TOKEN_COUNTS, type UsageTokens } from '../usage.js';
import type { GatewayProvider } from './meter.js';

export const BODY_BYTES_PER_TOKEN = 3;
export const OUTPUT_CEILING_TOKENS = 128_000;

export interface RequestEstimate {
  /** The model the body asks for; null when it names none (the upstream refuses it, for nothing). */
  model: string | null;
  inputTokens: number;
  outputTokens: number;
  /** What to reserve, in micro-dollars; 0 for a model without a price (its response is recorded unpriced and so
   * adds nothing to the allowance's spend either). */
  costMicros: number;
}

const ceiling = z.number().int().positive().max(Number.MAX_SAFE_INTEGER).optional().catch(undefined);
const RequestBody = z.object({
  model: z.string().min(1).optional().catch(undefined),
  max_tokens: ceiling,
  max_output_tokens: ceiling,
});

/** The parsed request body (already JSON) of `bodyBytes` bytes. */
export function estimateRequest(prices: PriceTable, provider: GatewayProvider, body: unknown, bodyBytes: number, atMs: number): RequestEstimate {
  const parsed = RequestBody.safeParse(body);
  const b = parsed.success ? parsed.data : {};
  const model = b.model ?? null;
  const inputTokens = Math.ceil(bodyBytes / BODY_BYTES_PER_TOKEN);
  const asked = provider === 'anthropic' ? b.max_tokens : b.max_output_tokens;
  const outputTokens = asked ?? OUTPUT_CEILING_TOKENS;
  if (model === null) return { model, inputTokens, outputTokens, costMicros: 0 };
  return { model, inputTokens, outputTokens, costMicros: dearestCost(prices, model, inputTokens, outputTokens, atMs) };
}

/** Priced as if data residency were asked for: the dearer of the two. */
const ZERO: UsageTokens = { ...ZERO_TOKEN_COUNTS, serviceTier: null, inferenceGeo: 'us' };

/** The input priced as each input class the row has (a class it has no price for is passed over): the dearest. */
function dearestCost(prices: PriceTable, model: string, inputTokens: number, outputTokens: number, atMs: number): number {
  let dearest = 0;
  const asClass: Array<Partial<UsageTokens>> = [{ inputTokens }, { cacheWrite5mTokens: inputTokens }, { cacheWrite1hTokens: inputTokens }];
  for (const input of asClass) {
    const priced = priceUsage(prices, { ...ZERO, ...input, outputTokens, source: 'gateway-estimate', dedupKey: '', sessionId: '', model, timestampMs: atMs, cwd: null });
    if (priced.priced) dearest = Math.max(dearest, priced.costMicros);
  }
  return dearest;
}
