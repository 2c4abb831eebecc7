import { describe, expect, it } from 'vitest';
import { activeAt, assignActiveTime, barKey, groupByBar, splitTrails, TrailBuilder, trailDefaults, windowLengthMs, type BarSample, type TrailPoint } from '../../core/forecast/trail.js';

const MIN = 60_000;
const HOUR = 3_600_000;
const T0 = Date.UTC(2026, 2, 2, 9, 0);
const R1 = T0 + 5 * HOUR;
const R2 = R1 + 5 * HOUR + 20 * MIN;

/** A reading `m` minutes after T0. */
function s(m: number, usedPct: number, resetsAtMs: number | null = R1, source = 'statusline'): BarSample {
  return { provider: 'claude', window: 'five_hour', usedPct, resetsAtMs, observedAtMs: T0 + m * MIN, source };
}

/** Trails as [first minute, points, stale, reset] for compact tables. */
function shape(samples: BarSample[]): Array<[number, number, number, number | null]> {
  return splitTrails(samples).map((t) => [(t.points[0]!.atMs - T0) / MIN, t.points.length, t.stale, t.resetsAtMs]);
}

describe('splitTrails: rollovers and stale readings', () => {
  it.each<[string, BarSample[], Array<[number, number, number, number | null]>]>([
    ['resets_at jitter within 2 min stays one trail', [s(0, 1), s(1, 2, R1 + 40_000), s(2, 3, R1 - 30_000)], [[0, 3, 0, R1 - 30_000]]],
    ['resets_at moving later by hours is a rollover', [s(0, 90), s(1, 95), s(310, 2, R2), s(311, 3, R2)], [[0, 2, 0, R1], [310, 2, 0, R2]]],
    ['a reading of an older window after the rollover is stale', [s(0, 90), s(310, 2, R2), s(311, 96, R1), s(312, 3, R2)], [[0, 1, 0, R1], [310, 2, 1, R2]]],
    ['a reading taken after its own reset is stale', [s(0, 50), s(301 + 2, 50, R1)], [[0, 1, 1, R1]]],
    ['a reading after the reset without resets_at starts a new trail', [s(0, 50), s(305, 1, null), s(306, 2, null)], [[0, 1, 0, R1], [305, 2, 0, null]]],
    ['a sharp drop with a slightly later reset is a rollover', [s(0, 60), s(1, 61), s(2, 1, R1 + 30_000)], [[0, 2, 0, R1], [2, 1, 0, R1 + 30_000]]],
    ['a sharp drop with the same reset is a stale session', [s(0, 60), s(1, 5), s(2, 61)], [[0, 2, 1, R1]]],
    ['a small drop is stale: the high-water mark holds', [s(0, 60), s(1, 59.5), s(2, 59.9), s(3, 60.2)], [[0, 2, 2, R1]]],
    ['no resets: a lone low reading is stale', [s(0, 60, null), s(1, 3, null), s(2, 61, null)], [[0, 2, 1, null]]],
    ['no resets: two low readings in a row are a rollover', [s(0, 60, null), s(1, 3, null), s(2, 4, null)], [[0, 1, 0, null], [1, 2, 0, null]]],
    ['a known reset is adopted by a trail that had none', [s(0, 10, null), s(1, 11)], [[0, 2, 0, R1]]],
  ])('%s', (_name, samples, expected) => {
    expect(shape(samples)).toEqual(expected);
  });

  it('sorts readings by time and applies the high-water mark', () => {
    const [trail] = splitTrails([s(3, 12), s(0, 10), s(2, 9), s(1, 11)]);
    expect(trail!.points.map((p) => [p.atMs - T0, p.usedPct])).toEqual([
      [0, 10],
      [MIN, 11],
      [3 * MIN, 12],
    ]);
    expect(trail!.stale).toBe(1);
  });

  it('the builder gives the same trails as the batch split, and refuses readings out of order', () => {
    const samples = [s(0, 60, null), s(1, 3, null), s(2, 4, null), s(3, 5, null), s(4, 1, null), s(5, 6, null)];
    const b = new TrailBuilder();
    for (const x of samples) b.push(x);
    expect(b.trails).toEqual(splitTrails(samples));
    expect(() => b.push(s(1, 7, null))).toThrow(/time order/);
  });
});

describe('active time', () => {
  const o = trailDefaults(5 * HOUR);

  it.each<[string, Array<[number, number]>, number]>([
    ['steady work: active = wall', [[0, 1], [1, 2], [2, 3], [3, 4]], 3],
    ['a 45-min lunch with no movement keeps idleKeepMs', [[0, 1], [1, 2], [2, 3], [47, 3], [48, 4], [49, 5]], 2 + 1 + 2],
    ['a long gap across which the bar moved a lot is not idle', [[0, 1], [1, 2], [40, 12], [41, 13]], 41],
    ['a quiet run of readings (a poller at lunch) is squeezed as a whole', [[0, 1], [1, 2], ...[5, 10, 15, 20, 25, 30].map((m): [number, number] => [m, 2]), [31, 3]], 1 + 1 + 1],
    ['a short pause is work time', [[0, 1], [1, 2], [8, 2], [9, 3]], 9],
  ])('%s', (_name, pts, activeMinutes) => {
    const points: TrailPoint[] = pts.map(([m, p]) => ({ atMs: T0 + m * MIN, activeMs: 0, usedPct: p, source: 'x' }));
    assignActiveTime(points, o);
    expect(points[points.length - 1]!.activeMs / MIN).toBeCloseTo(activeMinutes, 6);
  });

  it('weekly bars call a stretch idle only after 30 minutes', () => {
    const weekly = trailDefaults(7 * 24 * HOUR);
    expect([weekly.idleGapMs, o.idleGapMs]).toEqual([30 * MIN, 10 * MIN]);
    const points: TrailPoint[] = [0, 20].map((m) => ({ atMs: T0 + m * MIN, activeMs: 0, usedPct: 40, source: 'x' }));
    assignActiveTime(points, weekly);
    expect(points[1]!.activeMs).toBe(20 * MIN);
  });

  it('activeAt squeezes the quiet time since the last reading', () => {
    const [trail] = splitTrails([s(0, 1), s(1, 2), s(2, 3)]);
    expect(activeAt(trail!, T0 + 5 * MIN, o) / MIN).toBe(5);
    expect(activeAt(trail!, T0 + 60 * MIN, o) / MIN).toBe(2 + 1);
  });
});

describe('bars', () => {
  it.each([
    ['five_hour', 5 * HOUR],
    ['seven_day', 7 * 24 * HOUR],
    ['seven_day_opus', 7 * 24 * HOUR],
    ['codex_primary', null],
  ])('windowLengthMs(%s) = %s', (w, ms) => {
    expect(windowLengthMs(w)).toBe(ms);
  });

  it('groups readings by provider and window', () => {
    const codex: BarSample = { ...s(0, 5), provider: 'codex', window: 'codex_primary' };
    const g = groupByBar([s(0, 1), codex, s(1, 2)]);
    expect([...g.keys()]).toEqual(['claude:five_hour', 'codex:codex_primary']);
    expect(g.get('claude:five_hour')!.length).toBe(2);
    expect(barKey(codex)).toBe('codex:codex_primary');
  });
});
