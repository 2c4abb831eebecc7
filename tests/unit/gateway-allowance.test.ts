import { describe, expect, it } from 'vitest';
import {
  allowanceRefusalMessage,
  allowanceRemaining,
  checkAllowance,
  localDayStart,
  localWeekStart,
  type UtcOffset,
} from '../../core/gateway/allowance.js';

const utc: UtcOffset = () => 0;
const newYork: UtcOffset = (ms) => (ms >= Date.UTC(2026, 2, 8, 7) && ms < Date.UTC(2026, 10, 1, 6) ? -240 : -300); // EDT / EST, 2026
const tokyo: UtcOffset = () => 540;
const iso = (ms: number) => new Date(ms).toISOString();

describe('the local day and week', () => {
  it.each([
    ['UTC, mid-afternoon', utc, '2026-12-02T15:30:00Z', '2026-12-02T00:00:00.000Z', '2026-11-30T00:00:00.000Z'],
    ['UTC, one ms before midnight stays in the day', utc, '2026-12-02T23:59:59.999Z', '2026-12-02T00:00:00.000Z', '2026-11-30T00:00:00.000Z'],
    ['UTC, midnight itself starts the next day', utc, '2026-12-03T00:00:00Z', '2026-12-03T00:00:00.000Z', '2026-11-30T00:00:00.000Z'],
    ['UTC, Sunday night is still the week that began on Monday', utc, '2026-12-06T23:59:00Z', '2026-12-06T00:00:00.000Z', '2026-11-30T00:00:00.000Z'],
    ['UTC, Monday 00:00 starts a new week', utc, '2026-12-07T00:00:00Z', '2026-12-07T00:00:00.000Z', '2026-12-07T00:00:00.000Z'],
    ['Tokyo: 01:00 local Monday is Sunday 16:00 UTC, already the new week', tokyo, '2026-12-06T16:00:00Z', '2026-12-06T15:00:00.000Z', '2026-12-06T15:00:00.000Z'],
    ['New York (EST): 11pm local is the next UTC day', newYork, '2026-12-03T04:00:00Z', '2026-12-02T05:00:00.000Z', '2026-11-30T05:00:00.000Z'],
    ['New York: the day after the fall-back change started at EDT midnight', newYork, '2026-11-01T15:00:00Z', '2026-11-01T04:00:00.000Z', '2026-10-26T04:00:00.000Z'],
    ['New York: the week after the spring-forward change began at EDT midnight', newYork, '2026-03-10T12:00:00Z', '2026-03-10T04:00:00.000Z', '2026-03-09T04:00:00.000Z'],
    ['New York: the week holding the spring-forward Sunday began on Monday at EST midnight', newYork, '2026-03-08T12:00:00Z', '2026-03-08T05:00:00.000Z', '2026-03-02T05:00:00.000Z'],
  ])('%s', (_name, offset, now, day, week) => {
    const ms = Date.parse(now);
    expect(iso(localDayStart(ms, offset))).toBe(day);
    expect(iso(localWeekStart(ms, offset))).toBe(week);
  });
});

describe('the allowance check', () => {
  const $ = (d: number) => d * 1_000_000;
  it.each([
    ['uncapped: always allowed', { perDayMicros: null, perWeekMicros: null }, { dayMicros: $(1000), weekMicros: $(5000) }, { ok: true }],
    ['under the day cap', { perDayMicros: $(40), perWeekMicros: null }, { dayMicros: $(39.99), weekMicros: $(39.99) }, { ok: true }],
    ['exactly at the day cap: refused', { perDayMicros: $(40), perWeekMicros: null }, { dayMicros: $(40), weekMicros: $(40) }, { ok: false, period: 'today', capMicros: $(40), spentMicros: $(40) }],
    ['over the day cap (a response that streamed past it)', { perDayMicros: $(40), perWeekMicros: $(150) }, { dayMicros: $(41.2), weekMicros: $(90) }, { ok: false, period: 'today', capMicros: $(40), spentMicros: $(41.2) }],
    ['the week spent: said as the week, whatever the day', { perDayMicros: $(40), perWeekMicros: $(150) }, { dayMicros: $(45), weekMicros: $(150) }, { ok: false, period: 'this week', capMicros: $(150), spentMicros: $(150) }],
    ['week-only cap', { perDayMicros: null, perWeekMicros: $(150) }, { dayMicros: $(10), weekMicros: $(149) }, { ok: true }],
  ] as const)('%s', (_name, allowance, spent, verdict) => {
    expect(checkAllowance(allowance, spent)).toEqual(verdict);
  });

  it('what is left, never below zero, null where uncapped', () => {
    expect(allowanceRemaining({ perDayMicros: $(40), perWeekMicros: null }, { dayMicros: $(2), weekMicros: $(80) })).toEqual({ dayMicros: $(38), weekMicros: null });
    expect(allowanceRemaining({ perDayMicros: $(40), perWeekMicros: $(100) }, { dayMicros: $(41), weekMicros: $(99) })).toEqual({ dayMicros: 0, weekMicros: $(1) });
  });

  it('the refusal names the seat, the cap and the period, and says what next', () => {
    expect(allowanceRefusalMessage('dana', { ok: false, period: 'today', capMicros: $(40), spentMicros: $(40.5) })).toBe(
      'allowance for dana spent: $40.00 today — it renews at midnight; type /sled exits for the other ways on',
    );
    expect(allowanceRefusalMessage('lee', { ok: false, period: 'this week', capMicros: $(150), spentMicros: $(150) })).toMatch(/^allowance for lee spent: \$150\.00 this week — it renews on Monday/);
  });
});
