/**
 * The half-price tier for OpenAI (issue 15 § 3): a batch-tier token's Responses request goes upstream with
 * `service_tier: "flex"` (shared/facts/model-apis.md §5.4). Flex is slow and at times has no capacity: the API says so
 * with a `429 Resource Unavailable`, which is not charged. The gateway waits and sends the request again, with
 * backoff, a bounded number of times, and the client sees that 429 only once the retries are spent. A 429 for
 * anything else (the rate limit, the quota) passes on at once: waiting does not cure a quota.
 */
export interface FlexSettings {
  /** Retries of a "resource unavailable" 429 before it is passed on. */
  maxRetries: number;
  /** The first retry's delay; doubled each time, up to `maxBackoffMs`. */
  backoffMs: number;
  maxBackoffMs: number;
  /** undici's header and body timeouts for a flex request (the docs: 15 minutes). */
  timeoutMs: number;
}

/** 2 s, 4 s, 8 s, 16 s, 32 s: about a minute of waiting for capacity before the client hears of it. */
export const DEFAULT_FLEX_SETTINGS: FlexSettings = { maxRetries: 5, backoffMs: 2_000, maxBackoffMs: 60_000, timeoutMs: 15 * 60_000 };

/** The delay before retry `n` (1-based). */
export function flexBackoffMs(settings: FlexSettings, n: number): number {
  return Math.min(settings.maxBackoffMs, settings.backoffMs * 2 ** Math.max(0, n - 1));
}

/** Quota and spend 429s (§5.5): not capacity, never waited out. */
const NOT_CAPACITY = new Set(['insufficient_quota', 'credit_balance_exhausted', 'organization_spend_limit_exceeded', 'project_spend_limit_exceeded', 'organization_usage_limit_exceeded', 'rate_limit_exceeded']);

/**
 * Whether a 429's body is flex's "no capacity now". The exact body is unconfirmed (§5.4), so it is told by what it
 * says: "resource unavailable" in its code, type or message, and none of the quota codes.
 */
export function isFlexUnavailable(body: string): boolean {
  let error: { code?: unknown; type?: unknown; message?: unknown } | undefined;
  try {
    error = (JSON.parse(body) as { error?: typeof error }).error;
  } catch {
    return false; // not the API's envelope: passed on as it came
  }
  if (!error || typeof error !== 'object') return false;
  if (typeof error.code === 'string' && NOT_CAPACITY.has(error.code)) return false;
  return [error.code, error.type, error.message].some((v) => typeof v === 'string' && /resource[\s_-]*unavailable/i.test(v));
}
