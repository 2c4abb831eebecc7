/**
 * Which 429s the flex tier waits out (musher/gateway/flex.ts): "no capacity now" only, never a quota or a rate limit,
 * and how long it waits.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_FLEX_SETTINGS, flexBackoffMs, isFlexUnavailable } from '../../musher/gateway/flex.js';

const body = (error: Record<string, unknown>) => JSON.stringify({ error: { param: null, ...error } });

describe('a flex 429', () => {
  const cases: Array<[string, string, boolean]> = [
    ['resource unavailable, by its code', body({ type: 'rate_limit_error', code: 'resource_unavailable', message: 'Try again later.' }), true],
    ['resource unavailable, by its message alone', body({ type: 'invalid_request_error', code: null, message: 'Resource Unavailable: flex capacity exhausted' }), true],
    ['the rate limit (RPM/TPM)', body({ type: 'requests', code: 'rate_limit_exceeded', message: 'Rate limit reached for gpt-5.4 on requests per min' }), false],
    ['the quota, even if it says unavailable', body({ type: 'insufficient_quota', code: 'insufficient_quota', message: 'You exceeded your current quota; resource unavailable until you add credits' }), false],
    ['a spend limit', body({ type: 'invalid_request_error', code: 'project_spend_limit_exceeded', message: 'Project spend limit reached' }), false],
    ['not JSON (a proxy page)', '<html>429 Too Many Requests</html>', false],
    ['no error object', JSON.stringify({ message: 'resource unavailable' }), false],
  ];
  for (const [name, text, retried] of cases) {
    it(`${name}: ${retried ? 'waited out' : 'passed on at once'}`, () => {
      expect(isFlexUnavailable(text)).toBe(retried);
    });
  }

  it('waits 2 s, 4 s, 8 s… doubling, never past the cap', () => {
    expect([1, 2, 3, 4, 5].map((n) => flexBackoffMs(DEFAULT_FLEX_SETTINGS, n))).toEqual([2_000, 4_000, 8_000, 16_000, 32_000]);
    expect(flexBackoffMs({ ...DEFAULT_FLEX_SETTINGS, maxBackoffMs: 5_000 }, 4)).toBe(5_000);
    expect(DEFAULT_FLEX_SETTINGS.timeoutMs).toBe(15 * 60_000);
  });
});
