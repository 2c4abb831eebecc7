import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { activityProfile, presence, wallTimeForActive } from '../../core/forecast/activity.js';
import { activeHoursFor, bindingWall, crossingSigma, forecastBar, forecastDefaults, wallHint, type EtaForecast, type Forecast, type NoForecast } from '../../core/forecast/forecast.js';
import { replayForecasts, replayTrace, traceToBarSample, TraceSample } from '../../core/forecast/replay.js';
import { leastSquares, theilSen, thin, weightedQuantile, weightedSelect } from '../../core/forecast/slope.js';
import { splitTrails, type BarSample } from '../../core/forecast/trail.js';

const MIN = 60_000;
const HOUR = 3_600_000;
/** Monday 2 March 2026, 09:00 UTC. */
const T0 = Date.UTC(2026, 2, 2, 9, 0);
const RESET = T0 + 5 * HOUR;

function s(m: number, usedPct: number, resetsAtMs: number | null = RESET): BarSample {
  return { provider: 'claude', window: 'five_hour', usedPct, resetsAtMs, observedAtMs: T0 + m * MIN, source: 'statusline' };
}

/** Readings every `every` minutes over [from, to], the bar rising `perMin` points a minute from `startPct`. */
function run(from: number, to: number, perMin: number, startPct: number, every = 1): BarSample[] {
  const out: BarSample[] = [];
  for (let m = from; m <= to; m += every) out.push(s(m, startPct + (m - from) * perMin));
  return out;
}

const at = (m: number): number => T0 + m * MIN;
/** The model without its blend towards linear pace (blend.ts), for the tests of the model itself. */
const MODEL_ALONE = { paceSigma: Infinity };
const eta = (f: Forecast): EtaForecast => {
  expect(f.kind).toBe('eta');
  return f as EtaForecast;
};

describe('forecastBar: no forecast, and why', () => {
  it.each<[string, BarSample[], number, NoForecast['reason'], RegExp]>([
    ['no readings', [], 10, 'too-few-samples', /^No readings of this bar yet; a forecast needs 3\.$/],
    ['two readings', [s(0, 1), s(10, 5)], 10, 'too-few-samples', /^Only 2 readings of the 5-hour bar in this window; a forecast needs 3\.$/],
    ['three readings over 5 minutes', [s(0, 1), s(2, 2), s(5, 3)], 5, 'span-too-short', /^The 5-hour bar's readings span 5m; a forecast needs 8m\.$/],
    ['a bar that has not moved', run(0, 20, 0, 40), 20, 'flat-or-falling', /^The 5-hour bar has not risen over its last 20m of readings; no wall in sight\.$/],
    ['a bar at 100%', [...run(0, 20, 1, 80), s(21, 100)], 21, 'at-wall', /^The 5-hour bar is at 100%; it resets in 4h 39m\.$/],
    ['a window that has reset since', run(0, 20, 1, 10), 5 * 60 + 1, 'window-over', /^The 5-hour window reset 1m ago; waiting for a fresh reading\.$/],
  ])('%s', (_name, samples, nowMin, reason, message) => {
    const f = forecastBar(samples, at(nowMin));
    expect(f.kind).toBe('none');
    expect((f as NoForecast).reason).toBe(reason);
    expect((f as NoForecast).message).toMatch(message);
  });

  it('only readings up to now count', () => {
    expect(forecastBar(run(0, 30, 1, 0), at(5)).kind).toBe('none');
  });
});

describe('forecastBar: the ETA', () => {
  it.each<[string, number, number, number, boolean]>([
    // name, points per minute, now (min), the pace's crossing (min after T0), a wall claimed before the reset
    ['30%/h steady: 90 points left take 3 h', 0.5, 20, 20 + 180, true],
    ['60%/h steady: 80 points left take 80 min', 1, 20, 20 + 80, true],
    ['10%/h steady: the wall comes after the reset (capped at 5 h out)', 1 / 6, 20, 20 + 300, false],
  ])('%s', (_name, perMin, nowMin, paceMin, beforeReset) => {
    const f = eta(forecastBar(run(0, nowMin, perMin, 0), at(nowMin)));
    expect((f.paceEtaMs - T0) / MIN).toBeCloseTo(paceMin, 0);
    expect(f.beforeReset).toBe(beforeReset);
    expect(f.duty).toBeCloseTo(1, 6);
    expect(f.band[0]).toBeLessThanOrEqual(f.etaMs);
    expect(f.band[1]).toBeGreaterThanOrEqual(f.etaMs);
  });

  it.each<[string, number, number, [number, number], [number, number]]>([
    // name, points per minute, now (min), pBeforeReset within, shown ETA (min after now) within
    // 80 min to go, 4 h 40 min to the reset: surely before it, the ETA at the pace's crossing or a little sooner.
    ['a wall far before the reset', 1, 20, [0.95, 1], [70, 81]],
    // 3 h to go, 4 h 40 min to the reset: likely before it; given that, sooner than the pace says.
    ['a wall a while before the reset', 0.5, 20, [0.6, 0.9], [130, 180]],
    // 4 h to go at the pace, 4 h 20 min to the reset: about a coin toss, so "not before the reset" (shown at it).
    ['a wall just before the reset: not claimed', 0.36, 40, [0.45, 0.6], [259, 261]],
  ])('how sure: %s', (_name, perMin, nowMin, [pLo, pHi], [etaLo, etaHi]) => {
    const f = eta(forecastBar(run(0, nowMin, perMin, 0), at(nowMin)));
    expect(f.pBeforeReset).toBeGreaterThanOrEqual(pLo);
    expect(f.pBeforeReset).toBeLessThanOrEqual(pHi);
    expect(f.beforeReset).toBe(f.pBeforeReset >= 0.6);
    expect((f.etaMs - at(nowMin)) / MIN).toBeGreaterThanOrEqual(etaLo);
    expect((f.etaMs - at(nowMin)) / MIN).toBeLessThanOrEqual(etaHi);
    if (!f.beforeReset) expect(f.etaMs).toBeGreaterThanOrEqual(RESET);
  });

  it('an idle lunch does not flatten the rate; the ETA maps back to wall time through the duty cycle', () => {
    const samples = [...run(0, 30, 1, 0), ...run(75, 90, 1, 30)];
    const f = eta(forecastBar(samples, at(90), MODEL_ALONE));
    // Unsqueezed, 45 points over 90 minutes would be 30%/h.
    expect(f.activeRatePctPerHour).toBeGreaterThan(55);
    expect(f.activeRatePctPerHour).toBeLessThan(61);
    // 46 active minutes out of 90: 55 points at ~59%/h of activity ≈ 56 min of work ≈ 110 min of wall time.
    expect(f.duty).toBeCloseTo(46 / 90, 2);
    expect((f.paceEtaMs - at(90)) / MIN).toBeGreaterThan(100);
    expect((f.paceEtaMs - at(90)) / MIN).toBeLessThan(120);
  });

  it('stale lower readings from another session change nothing', () => {
    const clean = run(0, 30, 0.5, 0);
    const noisy = [...clean, s(7.5, 1), s(15.5, 2), s(29.5, 3)];
    expect(forecastBar(noisy, at(30))).toEqual(forecastBar(clean, at(30)));
  });

  it('a change of model shows within minutes: faster than the window average, sooner than linear pace', () => {
    // 40 minutes at 15%/h, then 20 at 60%/h.
    const samples = [...run(0, 40, 0.25, 0), ...run(41, 60, 1, 11)];
    const f = eta(forecastBar(samples, at(60)));
    const average = (30 / 60) * 60;
    expect(f.activeRatePctPerHour).toBeGreaterThan(average * 1.2);
    const linearEta = T0 + (100 * 60 * MIN) / 30;
    expect(f.etaMs).toBeLessThan(linearEta);
  });

  it.each<[string, Partial<Parameters<typeof crossingSigma>[1]>, number]>([
    // name, what differs from a steady hour to go in tenths of a point, σ
    ['a steady hour to go, read in tenths', {}, Math.sqrt(0.25 + 2 * 0 + (0.1 / Math.sqrt(12) / 30) ** 2 + 1 / 24)],
    ['read in whole points with 2 points left: the rounding counts', { step: 1, remaining: 2 }, Math.sqrt(0.25 + 1 / 12 / 4 + 1 / 24)],
    ['a day to go', { toEtaMs: 24 * HOUR }, Math.sqrt(0.25 + (0.1 / Math.sqrt(12) / 30) ** 2 + 1)],
    ['slopes spread ×2 (fast 40, slow 20 points an hour)', { slopeLo: 20, slopeHi: 40 }, Math.sqrt(0.25 + 2 * (Math.log(2) / (2 * 0.8416)) ** 2 + (0.1 / Math.sqrt(12) / 30) ** 2 + 1 / 24)],
    ['a slope spread reaching zero counts as 1', { slopeLo: 0, slopeHi: 40 }, Math.sqrt(0.25 + 2 + (0.1 / Math.sqrt(12) / 30) ** 2 + 1 / 24)],
  ])('crossingSigma: %s', (_name, x, sigma) => {
    const base = { slopeLo: 30, slopeHi: 30, activeRate: 30, remaining: 30, step: 0.1, toEtaMs: HOUR };
    expect(crossingSigma(forecastDefaults(5 * HOUR), { ...base, ...x })).toBeCloseTo(sigma, 9);
  });

  it('the band holds the ETA, within the horizon', () => {
    for (const [perMin, nowMin] of [[1, 20], [0.5, 20], [0.36, 40], [1, 95]] as const) {
      const f = eta(forecastBar(run(0, nowMin, perMin, 0), at(nowMin)));
      expect(f.band[0]).toBeLessThanOrEqual(f.etaMs);
      expect(f.band[1]).toBeGreaterThanOrEqual(Math.min(f.etaMs, f.paceEtaMs));
      expect(f.band[1]).toBeLessThanOrEqual(at(nowMin) + 5 * HOUR);
    }
  });

  it('the early end is never later than working flat out at the fast rate', () => {
    // A steady hour of 0.5 points a minute, then a lunch: the pace's crossing waits for the afternoon.
    const f = eta(forecastBar([...run(0, 60, 0.5, 0), ...run(120, 125, 0.5, 30)], at(125)));
    expect(f.band[0]).toBeLessThanOrEqual(at(125) + (67.5 / 0.5) * MIN + MIN);
  });
});

describe('the pace holds for a while, then reverts to the average', () => {
  it.each<[string, number, number, number, number, number]>([
    // name, points, recent pace, average, τ (h), active hours
    ['recent = average: points ÷ rate', 30, 20, 20, 1, 1.5],
    ['no points left', 0, 20, 10, 1, 0],
    // 5 points at a pace of 60 with τ = 1 h: used(N) = 10N + 50(1 − e^−N) = 5 → N ≈ 0.086 h (5/60 = 0.083).
    ['a short way at a fast pace: mostly the recent pace', 5, 60, 10, 1, 0.09],
    // 90 points: the fast pace adds ~50 points over the first hours, the rest comes at the average (90/10 = 9 h).
    ['a long way: mostly the average', 90, 60, 10, 1, 4.08],
  ])('activeHoursFor: %s', (_name, points, recent, average, tau, hours) => {
    const n = activeHoursFor(points, recent, average, tau);
    expect(n).toBeCloseTo(hours, 2);
    expect(average * n + (recent - average) * tau * (1 - Math.exp(-n / tau))).toBeCloseTo(points, 6);
  });
});

describe('activity: people keep hours', () => {
  // Three weekdays (Mon–Wed) of work 09:00–17:00, a reading every 2 minutes, the weekly bar rising.
  const history: BarSample[] = [];
  for (let d = 0; d < 3; d++) {
    for (let m = 0; m < 8 * 60; m += 2) {
      history.push({ provider: 'claude', window: 'seven_day', usedPct: d * 10 + m / 60, resetsAtMs: T0 + 7 * 24 * HOUR, observedAtMs: T0 + d * 24 * HOUR + m * MIN, source: 'statusline' });
    }
  }
  const thursday4pm = T0 + 3 * 24 * HOUR + 7 * HOUR;

  it('learns presence by hour from the days seen', () => {
    const profile = activityProfile(splitTrails(history), thursday4pm)!;
    expect(profile.days.map((d) => d.weekend)).toEqual([false, false, false]);
    const p = presence(profile, thursday4pm);
    expect(p.today.slice(16, 20)).toEqual([1, 0.25, 0.25, 0.25]);
    expect(p.later[10]).toBeCloseTo((3 + 1 / 3) / 4, 6);
  });

  it.each<[string, boolean, number]>([
    ['without a profile, two hours of work take two hours', false, 18],
    ['with one, the evening is mostly away: one hour at 16h, then a quarter speed', true, 21],
  ])('%s', (_name, withProfile, endHour) => {
    const profile = activityProfile(splitTrails(history), thursday4pm)!;
    const m = { share: 1, presence: withProfile ? presence(profile, thursday4pm) : null };
    const end = wallTimeForActive(m, thursday4pm, 2 * HOUR, 24 * HOUR)!;
    expect((end - (T0 - 9 * HOUR + 3 * 24 * HOUR)) / HOUR).toBeCloseTo(endHour, 6);
  });

  it('a late-afternoon forecast knows the day ends', () => {
    // Thursday: a window from 14:00 to 19:00, the bar at 40% at 16:30 rising 30%/h: two more hours of work
    // would fill it by 18:30, but on the three days before, work stopped at 17:00.
    const thu = T0 + 3 * 24 * HOUR;
    const bar = (atMs: number, usedPct: number, resetsAtMs: number): BarSample => ({ provider: 'claude', window: 'five_hour', usedPct, resetsAtMs, observedAtMs: atMs, source: 'statusline' });
    const today = Array.from({ length: 31 }, (_, i) => bar(thu + 7 * HOUR + i * MIN, 25 + i * 0.5, thu + 10 * HOUR));
    // The same three working days as 5-hour windows: 09:00–14:00 and 14:00–19:00.
    const past = history.map((h) => {
      const dayStart = h.observedAtMs - ((h.observedAtMs - T0) % (24 * HOUR));
      const second = h.observedAtMs >= dayStart + 5 * HOUR;
      return bar(h.observedAtMs, ((h.observedAtMs - dayStart) / HOUR - (second ? 5 : 0)) * 10, dayStart + (second ? 10 : 5) * HOUR);
    });
    const now = thu + 7.5 * HOUR;
    const plain = eta(forecastBar(today, now, MODEL_ALONE));
    const learned = eta(forecastBar([...past, ...today], now, MODEL_ALONE));
    expect((plain.paceEtaMs - now) / MIN).toBeCloseTo(120, 0);
    expect(plain.beforeReset).toBe(true);
    expect(learned.beforeReset).toBe(false);
  });
});

describe('bindingWall and the statusline hint', () => {
  const wall = (window: string, etaMin: number, resetMin: number): EtaForecast => ({
    kind: 'eta',
    provider: 'claude',
    window,
    etaMs: at(etaMin),
    band: [at(etaMin - 10), at(etaMin + 10)],
    paceEtaMs: at(etaMin),
    pBeforeReset: etaMin < resetMin ? 0.9 : 0.1,
    ratePctPerHour: 10,
    activeRatePctPerHour: 10,
    duty: 1,
    beforeReset: etaMin < resetMin,
    usedPct: 50,
    resetsAtMs: at(resetMin),
    observedAtMs: at(0),
    samples: 10,
  });
  const none = (window: string, reason: NoForecast['reason'], resetMin: number | null = null): NoForecast => ({
    kind: 'none',
    reason,
    message: '',
    provider: 'claude',
    window,
    usedPct: reason === 'at-wall' ? 100 : 20,
    resetsAtMs: resetMin === null ? null : at(resetMin),
  });

  it.each<[string, Forecast[], string | null]>([
    ['nothing forecast', [none('five_hour', 'flat-or-falling')], null],
    ['every bar resets before it fills', [wall('five_hour', 400, 300), wall('seven_day', 9000, 5000)], null],
    ['the 5-hour wall before its reset', [wall('five_hour', 200, 300), wall('seven_day', 9000, 5000)], 'wall five_hour'],
    ['the weekly wall comes first', [wall('five_hour', 200, 300), wall('seven_day', 150, 5000)], 'wall seven_day'],
    ['a wall after its reset does not count', [wall('five_hour', 100, 90), wall('seven_day', 150, 5000)], 'wall seven_day'],
    ['a bar at 100% binds now', [wall('five_hour', 20, 300), none('seven_day_opus', 'at-wall', 4000)], 'at-wall seven_day_opus'],
    ['of two at 100%, the later reset binds', [none('five_hour', 'at-wall', 100), none('seven_day', 'at-wall', 4000)], 'at-wall seven_day'],
  ])('%s', (_name, forecasts, expected) => {
    const b = bindingWall(forecasts);
    expect(b === null ? null : `${b.kind} ${b.window}`).toBe(expected);
  });

  it.each<[string, number, { wallAtMs: number; amber: boolean } | null]>([
    ['wall in 25 min: amber', 25, { wallAtMs: at(25), amber: true }],
    ['wall in 31 min: shown, not amber', 31, { wallAtMs: at(31), amber: false }],
  ])('%s', (_name, etaMin, expected) => {
    expect(wallHint(bindingWall([wall('five_hour', etaMin, 300)]), at(0))).toEqual(expected);
  });

  it('no hint without a wall, nor at 100% (the bar itself is red)', () => {
    expect(wallHint(null, at(0))).toBeNull();
    expect(wallHint(bindingWall([none('five_hour', 'at-wall', 100)]), at(0))).toBeNull();
  });
});

describe('slopes', () => {
  const line = Array.from({ length: 20 }, (_, i) => ({ x: i, y: 3 + 2 * i }));

  it.each<[string, Array<{ x: number; y: number }>, number]>([
    ['an exact line', line, 2],
    ['one wild reading does not move Theil–Sen', line.map((p, i) => (i === 10 ? { x: p.x, y: 500 } : p)), 2],
    ['steps (0.1% quantisation) still give the trend', Array.from({ length: 60 }, (_, i) => ({ x: i, y: Math.floor(i / 4) / 10 })), 0.025],
  ])('theilSen: %s', (_name, pts, slope) => {
    expect(theilSen(pts)!.slope).toBeCloseTo(slope, 2);
  });

  it('least squares is pulled by the wild reading, Theil–Sen is not', () => {
    const wild = line.map((p, i) => (i === 19 ? { x: p.x, y: 500 } : p));
    expect(leastSquares(line)!.slope).toBeCloseTo(2, 9);
    expect(leastSquares(wild)!.slope).toBeGreaterThan(5);
  });

  it.each([
    ['no points', []],
    ['one x', [{ x: 1, y: 1 }, { x: 1, y: 2 }]],
  ])('null with %s', (_name, pts) => {
    expect(theilSen(pts)).toBeNull();
    expect(leastSquares(pts)).toBeNull();
  });

  it('thins big inputs evenly, keeping both ends, deterministically', () => {
    const xs = Array.from({ length: 1000 }, (_, i) => i);
    const t = thin(xs, 800);
    expect(t.length).toBe(40);
    expect([t[0], t[t.length - 1]]).toEqual([0, 999]);
    expect(thin(xs, 800)).toEqual(t);
    expect(thin(xs.slice(0, 10), 800)).toHaveLength(10);
  });

  it('the quickselect gives the sorted weighted quantile', () => {
    let seed = 7;
    const r = (): number => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    for (let k = 0; k < 50; k++) {
      const n = 1 + Math.floor(r() * 40);
      const items = Array.from({ length: n }, () => ({ v: Math.round(r() * 20), w: 0.1 + r() }));
      for (const q of [0, 0.2, 0.5, 0.8, 1]) {
        const v = Float64Array.from(items.map((i) => i.v));
        const w = Float64Array.from(items.map((i) => i.w));
        expect(weightedSelect(v, w, n, q)).toBe(weightedQuantile([...items], q));
      }
    }
  });
});

describe('replay', () => {
  const FIXTURE = join(import.meta.dirname, '..', 'fixtures', 'traces', 'five-hour-crossing.jsonl');
  const lines = readFileSync(FIXTURE, 'utf8')
    .trim()
    .split('\n')
    .map((l) => TraceSample.parse(JSON.parse(l)));
  const CROSS = 1772543098269;
  const RESET_S = 1772549447;

  it('one line out per sample, in order, with only the samples up to it', () => {
    const out = replayTrace(lines);
    expect(out).toHaveLength(lines.length);
    expect(out.map((o) => o.t)).toEqual(lines.map((l) => l.t));
    for (const o of out) expect(Object.keys(o)).toEqual(['t', 'window', 'eta', 'band']);
    // Same answers as forecasting each line from scratch.
    for (const i of [0, 25, 60, 200, lines.length - 1]) {
      const f = forecastBar(lines.slice(0, i + 1).map(traceToBarSample), lines[i]!.t);
      expect(out[i]!.eta).toBe(f.kind === 'eta' ? f.etaMs : null);
      expect(out[i]!.band).toEqual(f.kind === 'eta' ? f.band : null);
    }
  });

  it('says why at the edges: the old window at 100%, the first minutes of the new one', () => {
    const reasons = replayForecasts(lines).map(({ forecast }) => (forecast.kind === 'none' ? forecast.reason : 'eta'));
    expect(reasons[0]).toBe('at-wall');
    const first = lines.findIndex((l) => l.resets_at === RESET_S);
    expect(first).toBe(20);
    expect(reasons[first]).toBe('too-few-samples');
    expect(reasons.slice(first, first + 10)).toContain('span-too-short');
    expect(reasons.slice(first).filter((r) => r === 'eta').length).toBeGreaterThan(250);
  });

  it('calls the wall of the recorded window before its reset, the band holding it, in its last half hour', () => {
    const out = replayTrace(lines).filter((o, i) => lines[i]!.resets_at === RESET_S && o.t >= CROSS - 30 * MIN && o.t < CROSS);
    expect(out.length).toBeGreaterThan(40);
    const good = out.filter((o) => o.eta! < RESET_S * 1000 && Math.abs(o.eta! - CROSS) < 20 * MIN && o.band![0] <= CROSS && CROSS <= o.band![1]);
    expect(good.length / out.length).toBeGreaterThan(0.75);
  });

  it.each([
    ['a line without t', { window: 'five_hour', used_percentage: 1 }],
    ['a percentage as text', { t: 1, window: 'five_hour', used_percentage: '1' }],
    ['an empty window', { t: 1, window: '', used_percentage: 1 }],
  ])('rejects %s', (_name, line) => {
    expect(TraceSample.safeParse(line).success).toBe(false);
  });

  it('tolerates unknown fields and a missing resets_at', () => {
    const parsed = TraceSample.parse({ t: 5, window: 'codex_primary', used_percentage: 7, extra: true, window_minutes: 300 });
    expect(traceToBarSample(parsed)).toEqual({ provider: 'codex', window: 'codex_primary', usedPct: 7, resetsAtMs: null, observedAtMs: 5, source: 'trace', windowMs: 5 * HOUR });
  });
});
