import { describe, expect, it } from 'vitest';
import { startOfZonedDay, zonedParts, zoneOffsetMinutes } from '../../core/zoned-time.js';
import { zoneUtcOffset } from '../../musher/gateway/allowance.js';
import { localDayStart } from '../../core/gateway/allowance.js';

const iso = (ms: number): string => new Date(ms).toISOString().replace('.000Z', 'Z');

describe('startOfZonedDay: "today" for spend is the day the user sees, in their zone, whatever the process zone', () => {
  it.each([
    // [instant (UTC), zone, local midnight that began its day (UTC)]
    // 23:30 UTC on the 10th is already the 11th in Tokyo, still the 10th in New York.
    ['2026-06-10T23:30:00Z', 'Asia/Tokyo', '2026-06-10T15:00:00Z'],
    ['2026-06-10T23:30:00Z', 'America/New_York', '2026-06-10T04:00:00Z'],
    // 02:00 UTC on the 11th: the 11th in Tokyo (same day as above), the 10th in New York (22:00 EDT).
    ['2026-06-11T02:00:00Z', 'Asia/Tokyo', '2026-06-10T15:00:00Z'],
    ['2026-06-11T02:00:00Z', 'America/New_York', '2026-06-10T04:00:00Z'],
    ['2026-06-11T02:00:00Z', 'UTC', '2026-06-11T00:00:00Z'],
    // Half-hour zone.
    ['2026-06-10T18:29:00Z', 'Asia/Kolkata', '2026-06-09T18:30:00Z'],
    ['2026-06-10T18:30:00Z', 'Asia/Kolkata', '2026-06-10T18:30:00Z'],
    // Spring forward in New York: that day began at EST midnight (05:00 UTC), the next at EDT midnight (04:00 UTC).
    ['2026-03-08T12:00:00Z', 'America/New_York', '2026-03-08T05:00:00Z'],
    ['2026-03-09T12:00:00Z', 'America/New_York', '2026-03-09T04:00:00Z'],
    // A zone whose clocks jump at midnight (Santiago, September): the day begins at 01:00, its first instant.
    ['2026-09-06T12:00:00Z', 'America/Santiago', '2026-09-06T04:00:00Z'],
  ])('%s in %s began at %s', (now, zone, start) => {
    expect(iso(startOfZonedDay(Date.parse(now), zone))).toBe(start);
  });
});

describe('zoneOffsetMinutes: the offset a zone has at an instant (what the forecaster and the allowance learn hours in)', () => {
  it.each([
    ['2026-06-10T12:00:00Z', 'Asia/Tokyo', 540],
    ['2026-06-10T12:00:00Z', 'America/New_York', -240],
    ['2026-01-10T12:00:00Z', 'America/New_York', -300],
    ['2026-06-10T12:00:00Z', 'Asia/Kolkata', 330],
    ['2026-06-10T12:00:00Z', 'UTC', 0],
  ])('%s in %s: %i min', (now, zone, minutes) => {
    expect(zoneOffsetMinutes(Date.parse(now), zone)).toBe(minutes);
  });

  it("the gateway allowance's day follows the zone it is given, not the process's", () => {
    const now = Date.parse('2026-06-10T23:30:00Z');
    expect(iso(localDayStart(now, zoneUtcOffset('Asia/Tokyo')))).toBe('2026-06-10T15:00:00Z');
    expect(iso(localDayStart(now, zoneUtcOffset('America/New_York')))).toBe('2026-06-10T04:00:00Z');
  });
});

describe('zonedParts: the one formatToParts helper', () => {
  it('names the parts of an instant in the zone asked for', () => {
    const ms = Date.parse('2026-06-10T23:30:00Z');
    expect(zonedParts(ms, 'Asia/Tokyo', { hour: 'numeric', minute: '2-digit', hour12: true, weekday: 'short' })).toMatchObject({ hour: '8', minute: '30', dayPeriod: 'AM', weekday: 'Thu' });
    expect(zonedParts(ms, 'America/New_York', { hour: 'numeric', minute: '2-digit', hour12: true, weekday: 'short' })).toMatchObject({ hour: '7', minute: '30', dayPeriod: 'PM', weekday: 'Wed' });
  });
});
