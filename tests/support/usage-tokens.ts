import type { UsageTokens } from '../../core/usage.js';

/** Every token count of a usage record (or a metered response) at zero: a test's row spreads it, then sets what it is about. */
export const ZERO_TOKEN_COUNTS: Omit<UsageTokens, 'serviceTier' | 'inferenceGeo'> = {
  inputTokens: 0,
  outputTokens: 0,
  cacheWrite5mTokens: 0,
  cacheWrite1hTokens: 0,
  cacheReadTokens: 0,
  webSearchRequests: 0,
};
