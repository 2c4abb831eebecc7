import { describe, expect, it } from 'vitest';
import type { UsageReadings } from '../../core/usage-endpoint.js';
import { settleRecord, type Outcome, type PollRecord } from '../../musher/quota/usage-poller.js';

/** The usage poller's one step, pure: what an answer of the endpoint does to its record, and when it looks next. */
const MIN = 60_000;
const NOW = Date.UTC(2026, 11, 2, 3, 0, 0);
const LIMITS = { minIntervalMs: 3 * MIN, maxBackoffMs: 60 * MIN };
const READINGS = { ok: true, observedAt: NOW, bars: [], credits: null, notes: [] } as unknown as UsageReadings;
const BASE: PollRecord = {
  fp: 'ab12cd34',
  credentials: 'ok',
  lastAttemptAt: NOW,
  lastOkAt: NOW - 10 * MIN,
  lastError: null,
  lastErrorAt: null,
  backoffUntil: null,
  backoffSteps: 0,
  authBlocked: false,
  consecutiveFailures: 0,
  lastReadings: READINGS,
};
const failing: PollRecord = { ...BASE, lastError: 'x', lastErrorAt: NOW - MIN, backoffSteps: 2, consecutiveFailures: 2, backoffUntil: NOW - 1 };

const ROWS: Array<[name: string, rec: PollRecord, outcome: Outcome, want: Partial<PollRecord>, nextAt: number, problem: RegExp | null]> = [
  ['a good answer clears the trouble and looks again after the floor', failing, { kind: 'ok', readings: READINGS }, { lastOkAt: NOW, lastError: null, backoffSteps: 0, consecutiveFailures: 0, backoffUntil: null }, NOW + 3 * MIN, null],
  ['a 429 with Retry-After waits that long', BASE, { kind: 'rate-limited', retryAfter: 20 * MIN }, { backoffSteps: 1, consecutiveFailures: 1, backoffUntil: NOW + 20 * MIN }, NOW + 20 * MIN, /^claude usage endpoint rate-limited \(429, Retry-After 1200 s\); keeping the last readings; next try at /],
  ['a 429 without one backs off 5 min, doubling', { ...BASE, backoffSteps: 1 }, { kind: 'rate-limited', retryAfter: null }, { backoffSteps: 2, backoffUntil: NOW + 10 * MIN }, NOW + 10 * MIN, /\(429, no Retry-After\)/],
  ['a Retry-After of a week is capped at a day', BASE, { kind: 'rate-limited', retryAfter: 7 * 24 * 60 * MIN }, { backoffUntil: NOW + 24 * 60 * MIN }, NOW + 24 * 60 * MIN, /429/],
  ['401 blocks the token until the login changes', BASE, { kind: 'auth', status: 401 }, { authBlocked: true, consecutiveFailures: 1, backoffUntil: null }, NOW + 3 * MIN, /refused the OAuth token ab12cd34 \(401\); not polling until the login changes/],
  ['a first failure retries after the floor, with no backoff', BASE, { kind: 'failed', line: 'claude usage endpoint answered 500', retryAfter: null }, { backoffSteps: 1, consecutiveFailures: 1, backoffUntil: null }, NOW + 3 * MIN, /^claude usage endpoint answered 500; next try at /],
  ['failures double the wait up to the cap', { ...BASE, backoffSteps: 6 }, { kind: 'failed', line: 'unreachable', retryAfter: null }, { backoffSteps: 7, backoffUntil: NOW + 60 * MIN }, NOW + 60 * MIN, /^unreachable; next try at /],
];

describe('usage poller: one answer, one step', () => {
  for (const [name, rec, outcome, want, nextAt, problem] of ROWS) {
    it(name, () => {
      const before = structuredClone(rec);
      const step = settleRecord(rec, outcome, NOW, LIMITS);
      expect(step.rec).toMatchObject(want);
      expect(step.nextAt).toBe(nextAt);
      if (problem === null) expect(step.problem).toBeNull();
      else expect(step.problem).toMatch(problem);
      // The login and the floor are not the answer's to change; the record passed in is left as it was.
      expect(step.rec).toMatchObject({ fp: rec.fp, lastAttemptAt: rec.lastAttemptAt, credentials: rec.credentials });
      expect(rec).toEqual(before);
    });
  }
});
