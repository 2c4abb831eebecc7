import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { forecastBar } from '../../core/forecast/forecast.js';
import { Forecaster } from '../../musher/forecast/forecaster.js';
import { BarStore } from '../../musher/store/bars.js';
import { openStore } from '../../musher/store/db.js';
import { UsageStore } from '../../musher/store/usage.js';

const HOUR = 3_600_000;
const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

/** A weekly bar that rose from 00:00 to 08:00 UTC each day for four days: 09–17 in Tokyo, 20:00–04:00 in New York. */
function world(): { bars: BarStore; usage: UsageStore; now: number } {
  const dir = mkdtempSync(join(tmpdir(), 'sl-fz-'));
  const db = openStore(join(dir, 'sleds.db'));
  cleanups.push(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const bars = new BarStore(db);
  const start = Date.UTC(2026, 5, 1); // a Monday
  const resetsAt = start + 7 * 24 * HOUR;
  let tenths = 0;
  let now = start;
  for (let t = start; t < start + 4 * 24 * HOUR + 4 * HOUR; t += 10 * 60_000) {
    if (new Date(t).getUTCHours() < 8) tenths += 3;
    bars.record({ provider: 'anthropic', account: 'claude-dir:/home/a/.claude', window: 'seven_day', usedPct: tenths / 10, resetsAt, observedAt: t, source: 'statusline' });
    now = t;
  }
  return { bars, usage: new UsageStore(db), now };
}

describe("the forecaster learns a seat's working hours in musher's zone, not the process's", () => {
  it('the same readings forecast as the pure forecaster does at each zone\'s offset, and differ between zones', () => {
    const w = world();
    const clock = { now: () => w.now };
    const inZone = (timeZone: string) => new Forecaster(w.bars, w.usage, clock, timeZone).refresh().walls.find((x) => x.window === 'seven_day')!.forecast;
    const samples = w.bars.samples('anthropic', 'claude-dir:/home/a/.claude', 'seven_day', 0).map((s) => ({ provider: 'anthropic', window: 'seven_day', usedPct: s.usedPct, resetsAtMs: s.resetsAt, observedAtMs: s.observedAt, source: s.source }));
    const newYork = inZone('America/New_York');
    const tokyo = inZone('Asia/Tokyo');
    expect(newYork).toEqual(forecastBar(samples, w.now, { tzOffsetMinutes: -240 }));
    expect(tokyo).toEqual(forecastBar(samples, w.now, { tzOffsetMinutes: 540 }));
    expect(newYork.kind === 'eta' && tokyo.kind === 'eta' && newYork.etaMs !== tokyo.etaMs).toBe(true);
  });
});
