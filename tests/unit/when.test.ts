import { describe, expect, it } from 'vitest';
import { parseWhen } from '../../core/when.js';

const NY = 'America/New_York';
const at = (iso: string): number => Date.parse(iso);
const iso = (ms: number): string => new Date(ms).toISOString().replace('.000Z', 'Z');

function when(text: string, now: string, tz = NY): string {
  const r = parseWhen(text, at(now), tz);
  if (!r.ok) throw new Error(r.error);
  return iso(r.atMs);
}

describe('parseWhen: spans from now', () => {
  it.each([
    // [text, now (UTC), expected (UTC)]
    ['+2h', '2026-06-10T14:00:00Z', '2026-06-10T16:00:00Z'],
    ['+90m', '2026-06-10T14:00:00Z', '2026-06-10T15:30:00Z'],
    ['+1h30m', '2026-06-10T14:00:00Z', '2026-06-10T15:30:00Z'],
    ['+1.5h', '2026-06-10T14:00:00Z', '2026-06-10T15:30:00Z'],
    ['in 2 hours', '2026-06-10T14:00:00Z', '2026-06-10T16:00:00Z'],
    ['+ 45 min', '2026-06-10T14:00:00Z', '2026-06-10T14:45:00Z'],
    ['+1d', '2026-06-10T14:00:00Z', '2026-06-11T14:00:00Z'],
    ['+1d2h', '2026-06-10T14:00:00Z', '2026-06-11T16:00:00Z'],
    // Midnight wrap: 23:50 EDT + 30 min is 00:20 the next day.
    ['+30m', '2026-06-11T03:50:00Z', '2026-06-11T04:20:00Z'],
  ])('%s at %s → %s', (text, now, expected) => {
    expect(when(text, now)).toBe(expected);
  });
});

describe('parseWhen: DST days in America/New_York', () => {
  it.each([
    // Spring forward, Sun 2026-03-08 02:00 EST → 03:00 EDT.
    // 9pm EST Saturday + 1 calendar day = 9pm EDT Sunday: 23 hours later.
    ['+1d', '2026-03-08T02:00:00Z', '2026-03-09T01:00:00Z'],
    // …while +24h is 24 elapsed hours: 10pm EDT.
    ['+24h', '2026-03-08T02:00:00Z', '2026-03-09T02:00:00Z'],
    // 1:30am EST + 1h = 3:30am EDT (2:30 never happens).
    ['+1h', '2026-03-08T06:30:00Z', '2026-03-08T07:30:00Z'],
    // 2:30am does not exist that night: moved forward by the gap, to 3:30am EDT.
    ['2:30am', '2026-03-08T05:00:00Z', '2026-03-08T07:30:00Z'],
    // 9am on the short day is 9am EDT (UTC−4).
    ['9am', '2026-03-08T05:00:00Z', '2026-03-08T13:00:00Z'],
    ['tomorrow 9am', '2026-03-07T17:00:00Z', '2026-03-08T13:00:00Z'],
    // The day before, 9am was EST (UTC−5).
    ['9am', '2026-03-07T05:00:00Z', '2026-03-07T14:00:00Z'],
    // Fall back, Sun 2026-11-01 02:00 EDT → 01:00 EST: 1:30am comes twice.
    // From midnight EDT, the first 1:30 (EDT).
    ['1:30am', '2026-11-01T04:00:00Z', '2026-11-01T05:30:00Z'],
    // At 1:10am EST (the second pass), the second 1:30 (EST) is still ahead.
    ['1:30am', '2026-11-01T06:10:00Z', '2026-11-01T06:30:00Z'],
    // At 1:45am EST both have passed: tomorrow's.
    ['1:30am', '2026-11-01T06:45:00Z', '2026-11-02T06:30:00Z'],
    // Sat 9pm EDT + 1 calendar day = Sun 9pm EST: 25 hours later.
    ['+1d', '2026-11-01T01:00:00Z', '2026-11-02T02:00:00Z'],
    ['tomorrow 9am', '2026-10-31T16:00:00Z', '2026-11-01T14:00:00Z'],
    // An ISO time without offset is read in the zone, on either side of the change.
    ['2026-03-08T09:00', '2026-03-01T00:00:00Z', '2026-03-08T13:00:00Z'],
    ['2026-03-07T09:00', '2026-03-01T00:00:00Z', '2026-03-07T14:00:00Z'],
    ['2026-11-01 01:30', '2026-10-01T00:00:00Z', '2026-11-01T05:30:00Z'],
  ])('%s at %s → %s', (text, now, expected) => {
    expect(when(text, now)).toBe(expected);
  });
});

describe('parseWhen: clock times (next occurrence)', () => {
  it.each([
    // Now: 2026-06-10 10:00 EDT (14:00Z).
    ['15:40', '2026-06-10T14:00:00Z', '2026-06-10T19:40:00Z'],
    ['3:40pm', '2026-06-10T14:00:00Z', '2026-06-10T19:40:00Z'],
    ['3:40 PM', '2026-06-10T14:00:00Z', '2026-06-10T19:40:00Z'],
    ['3:40 p.m.', '2026-06-10T14:00:00Z', '2026-06-10T19:40:00Z'],
    ['9am', '2026-06-10T14:00:00Z', '2026-06-11T13:00:00Z'], // already past today → tomorrow
    ['10:00', '2026-06-10T14:00:00Z', '2026-06-11T14:00:00Z'], // exactly now → tomorrow
    ['noon', '2026-06-10T14:00:00Z', '2026-06-10T16:00:00Z'],
    ['12pm', '2026-06-10T14:00:00Z', '2026-06-10T16:00:00Z'],
    ['12am', '2026-06-10T14:00:00Z', '2026-06-11T04:00:00Z'],
    ['today 5pm', '2026-06-10T14:00:00Z', '2026-06-10T21:00:00Z'],
    // Midnight wrap: at 23:50 EDT, 0:10 is ten past midnight tomorrow and 11:55pm is five minutes away.
    ['0:10', '2026-06-11T03:50:00Z', '2026-06-11T04:10:00Z'],
    ['midnight', '2026-06-11T03:50:00Z', '2026-06-11T04:00:00Z'],
    ['11:55pm', '2026-06-11T03:50:00Z', '2026-06-11T03:55:00Z'],
    ['tomorrow 9am', '2026-06-11T03:50:00Z', '2026-06-11T13:00:00Z'], // 23:50 on the 10th: tomorrow is the 11th
  ])('%s at %s → %s', (text, now, expected) => {
    expect(when(text, now)).toBe(expected);
  });

  it('reads the clock in the zone it is given', () => {
    const now = '2026-06-10T06:00:00Z';
    expect(when('9am', now, 'Europe/London')).toBe('2026-06-10T08:00:00Z'); // BST
    expect(when('9am', now, 'Asia/Kolkata')).toBe('2026-06-11T03:30:00Z'); // 11:30 IST now → tomorrow
    expect(when('9am', now, 'UTC')).toBe('2026-06-10T09:00:00Z');
  });
});

describe('parseWhen: ISO 8601', () => {
  it.each([
    ['2026-06-10T18:00:00Z', '2026-06-10T18:00:00Z'],
    ['2026-06-10T18:00Z', '2026-06-10T18:00:00Z'],
    ['2026-06-10T20:00+02:00', '2026-06-10T18:00:00Z'],
    ['2026-06-10T13:00-0500', '2026-06-10T18:00:00Z'],
    ['2026-06-10T14:00', '2026-06-10T18:00:00Z'], // EDT
    ['2026-06-10t14:00:30.250', '2026-06-10T18:00:30.250Z'],
  ])('%s → %s', (text, expected) => {
    expect(when(text, '2026-06-10T14:00:00Z')).toBe(expected);
  });
});

describe('parseWhen: bad input is one line with an example', () => {
  const NOW = at('2026-06-10T14:00:00Z');
  it.each([
    ['', /no time given/],
    ['soon', /can't read 'soon' as a time/],
    ['+', /can't read '\+' as a span/],
    ['+2x', /can't read '\+2x' as a span/],
    ['+0m', /no time from now/],
    ['+400d', /over a year away/],
    ['25:00', /can't read '25:00'/],
    ['13pm', /can't read '13pm'/],
    ['9', /can't read '9'/],
    ['15:61', /can't read '15:61'/],
    ['tomorrow', /needs a time of day/],
    ['tomorrow lunch', /can't read 'lunch' as a time of day/],
    ['today 9am', /already passed/],
    ['2026-06-10', /has no time of day/],
    ['2026-02-30T09:00', /not a real date/],
    ['2026-06-10T09:00Z', /in the past/],
    ['2026-06-10T25:00', /not a real date/],
    ['2026-06-10T09:00+25:00', /not a UTC offset/],
    ['2026-06-10 at 9', /as an ISO time/],
  ])('%j', (text, pattern) => {
    const r = parseWhen(text, NOW, NY);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error).toMatch(pattern);
    expect(r.error).toMatch(/e\.g\./);
    expect(r.error).not.toContain('\n');
  });

  it('names an unknown time zone', () => {
    const r = parseWhen('9am', NOW, 'Mars/Olympus');
    expect(r).toEqual({ ok: false, error: expect.stringContaining("unknown time zone 'Mars/Olympus'") });
  });
});
