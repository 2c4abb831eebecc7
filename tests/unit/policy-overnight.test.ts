import { describe, expect, it } from 'vitest';
import { nextOvernightWindow } from '../../core/policy/evaluate.js';
import { resolvePolicy } from '../../core/policy/resolve.js';
import type { Policy } from '../../core/policy/schema.js';

function policyWith(overnight: unknown): Policy {
  const r = resolvePolicy([{ source: 'p', data: { overnight } }]);
  if (!r.policy) throw new Error(JSON.stringify(r.errors));
  return r.policy;
}

const iso = (ms: number) => new Date(ms).toISOString().replace(':00.000Z', 'Z');
const at = (text: string) => Date.parse(text);

describe('the overnight window', () => {
  it.each<[string, unknown, string, string, string, string]>([
    // what, overnight, now (UTC), zone passed in, start (UTC), end (UTC)
    ['before it, the same evening', { from: '22:00', to: '06:00' }, '2026-06-10T16:00Z', 'UTC', '2026-06-10T22:00Z', '2026-06-11T06:00Z'],
    ['inside it, after midnight: the running window', { from: '22:00', to: '06:00' }, '2026-06-11T03:00Z', 'UTC', '2026-06-10T22:00Z', '2026-06-11T06:00Z'],
    ['inside it, before midnight', { from: '22:00', to: '06:00' }, '2026-06-10T23:00Z', 'UTC', '2026-06-10T22:00Z', '2026-06-11T06:00Z'],
    ['at its very end: the next one', { from: '22:00', to: '06:00' }, '2026-06-11T06:00Z', 'UTC', '2026-06-11T22:00Z', '2026-06-12T06:00Z'],
    ['at its very start', { from: '22:00', to: '06:00' }, '2026-06-10T22:00Z', 'UTC', '2026-06-10T22:00Z', '2026-06-11T06:00Z'],
    ['a window that does not cross midnight, later today', { from: '01:00', to: '05:00' }, '2026-06-10T00:30Z', 'UTC', '2026-06-10T01:00Z', '2026-06-10T05:00Z'],
    ['a window that does not cross midnight, tomorrow', { from: '01:00', to: '05:00' }, '2026-06-10T12:00Z', 'UTC', '2026-06-11T01:00Z', '2026-06-11T05:00Z'],
    ['across the year end', { from: '22:00', to: '06:00' }, '2026-12-31T23:30Z', 'UTC', '2026-12-31T22:00Z', '2027-01-01T06:00Z'],
    ['New York in summer (EDT, UTC−4)', { from: '22:00', to: '06:00' }, '2026-06-10T16:00Z', 'America/New_York', '2026-06-11T02:00Z', '2026-06-11T10:00Z'],
    ['New York in winter (EST, UTC−5)', { from: '22:00', to: '06:00' }, '2026-01-15T16:00Z', 'America/New_York', '2026-01-16T03:00Z', '2026-01-16T11:00Z'],
    // 8 March 2026: clocks go 02:00 EST → 03:00 EDT; the night is 7 hours long.
    ['New York, the spring-forward night', { from: '22:00', to: '06:00' }, '2026-03-08T01:00Z', 'America/New_York', '2026-03-08T03:00Z', '2026-03-08T10:00Z'],
    // 1 November 2026: clocks go 02:00 EDT → 01:00 EST; the night is 9 hours long.
    ['New York, the fall-back night', { from: '22:00', to: '06:00' }, '2026-10-31T20:00Z', 'America/New_York', '2026-11-01T02:00Z', '2026-11-01T11:00Z'],
    ['a start inside the spring gap moves forward by the gap (02:30 → 03:30 EDT)', { from: '02:30', to: '05:00' }, '2026-03-08T05:00Z', 'America/New_York', '2026-03-08T07:30Z', '2026-03-08T09:00Z'],
    ['a start in the repeated autumn hour is its first occurrence (01:30 EDT)', { from: '01:30', to: '04:00' }, '2026-11-01T04:00Z', 'America/New_York', '2026-11-01T05:30Z', '2026-11-01T09:00Z'],
    ['a half-hour zone (India, UTC+5:30)', { from: '22:00', to: '06:00' }, '2026-06-10T12:00Z', 'Asia/Kolkata', '2026-06-10T16:30Z', '2026-06-11T00:30Z'],
    ["the policy's own zone wins over the one passed in", { from: '22:00', to: '06:00', time_zone: 'Asia/Tokyo' }, '2026-06-10T00:00Z', 'America/New_York', '2026-06-10T13:00Z', '2026-06-10T21:00Z'],
    ['an unknown zone passed in counts as UTC', { from: '22:00', to: '06:00' }, '2026-06-10T16:00Z', 'Not/AZone', '2026-06-10T22:00Z', '2026-06-11T06:00Z'],
  ])('%s', (_what, overnight, now, zone, start, end) => {
    const w = nextOvernightWindow(policyWith(overnight), at(now), zone);
    expect(w && { start: iso(w.startMs), end: iso(w.endMs) }).toEqual({ start, end });
  });

  it('a cap per job and a concurrency, with defaults ($10, one at a time); a bad cap is refused at its key', () => {
    expect(policyWith({ from: '22:00', to: '06:00' }).overnight).toMatchObject({ capMicros: 10_000_000, concurrency: 1 });
    expect(policyWith({ from: '22:00', to: '06:00', cap: '$12', concurrency: 3 }).overnight).toMatchObject({ capMicros: 12_000_000, concurrency: 3 });
    const bad = resolvePolicy([{ source: 'p', data: { overnight: { from: '22:00', to: '06:00', cap: 'plenty' } } }]);
    expect(bad.errors).toMatchObject([{ path: ['overnight', 'cap'], message: "'plenty' is not an amount: write e.g. $40, 40 or 40.50 USD" }]);
  });

  it('no window when the policy says none', () => {
    expect(nextOvernightWindow(policyWith('none'), at('2026-06-10T16:00Z'), 'UTC')).toBeNull();
    expect(nextOvernightWindow(policyWith(false), at('2026-06-10T16:00Z'), 'UTC')).toBeNull();
  });

  it('every hour of the day across a year in New York gives a window that has not ended and lasts 7 to 9 hours', () => {
    const policy = policyWith({ from: '22:00', to: '06:00' });
    for (let now = at('2026-01-01T00:00Z'); now < at('2027-01-01T00:00Z'); now += 7 * 3_600_000) {
      // Steps of 7 hours land on every hour of the day over the year, and on both DST nights' neighbourhoods.
      const w = nextOvernightWindow(policy, now, 'America/New_York')!;
      expect(w.endMs).toBeGreaterThan(now);
      expect(w.startMs).toBeLessThan(now + 24 * 3_600_000);
      expect([7, 8, 9]).toContain((w.endMs - w.startMs) / 3_600_000);
    }
  });
});

describe('the night’s people: on-call and the digest', () => {
  it('on-call, how long an escalation holds, and the digest’s time and channel; 30 minutes and no digest by default', () => {
    expect(policyWith({ from: '22:00', to: '06:00' }).overnight).toMatchObject({ onCall: null, escalateAfterMs: 30 * 60_000, digest: null });
    expect(policyWith({ from: '22:00', to: '06:00', on_call: '#eng-oncall', escalate_after: '45m', digest: { at: '08:00', channel: '#eng' } }).overnight).toMatchObject({
      onCall: '#eng-oncall',
      escalateAfterMs: 45 * 60_000,
      digest: { at: '08:00', minute: 480, channel: '#eng' },
    });
  });

  it('a digest without a channel, or at no time of day, is refused at its key', () => {
    const noChannel = resolvePolicy([{ source: 'p', data: { overnight: { from: '22:00', to: '06:00', digest: { at: '08:00' } } } }]);
    expect(noChannel.policy).toBeNull();
    expect(noChannel.errors[0]!.path).toEqual(['overnight', 'digest', 'channel']);
    const badTime = resolvePolicy([{ source: 'p', data: { overnight: { from: '22:00', to: '06:00', digest: { at: '8 o’clock', channel: '#eng' } } } }]);
    expect(badTime.errors[0]!.path).toEqual(['overnight', 'digest', 'at']);
  });
});
