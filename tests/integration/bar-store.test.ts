import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore, type Db } from '../../musher/store/db.js';
import { BarStore } from '../../musher/store/bars.js';

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

function bars(): BarStore {
  const dir = mkdtempSync(join(tmpdir(), 'sl-bars-'));
  const db: Db = openStore(join(dir, 'sleds.db'));
  cleanups.push(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return new BarStore(db);
}

const T0 = Date.UTC(2026, 10, 29, 12);
const RESET = T0 + 3 * 3_600_000;
const MIN = 60_000;
const at = (usedPct: number, observedAt: number, resetsAt: number | null = RESET, source = 'statusline') => ({
  provider: 'anthropic',
  window: 'five_hour',
  usedPct,
  resetsAt,
  observedAt,
  source,
});

describe('BarStore', () => {
  it.each([
    ['a higher reading moves the bar', [at(40, T0), at(45, T0 + MIN)], 45, RESET],
    ['a stale session reporting lower does not lower it', [at(40, T0), at(45, T0 + MIN), at(41, T0 + 2 * MIN)], 45, RESET],
    ['a rollover (the reset moved on) starts it afresh', [at(90, T0), at(3, T0 + MIN, RESET + 5 * 3_600_000)], 3, RESET + 5 * 3_600_000],
    ['a reading from before the rollover is ignored', [at(3, T0 + MIN, RESET + 5 * 3_600_000), at(95, T0 + 2 * MIN)], 3, RESET + 5 * 3_600_000],
    ['resets a few seconds apart are the same window', [at(40, T0), at(38, T0 + MIN, RESET + 20_000)], 40, RESET],
    ['an older reading arriving late changes nothing', [at(50, T0 + 5 * MIN), at(55, T0)], 50, RESET],
    ['a reading without a reset keeps the known one', [at(40, T0), at(42, T0 + MIN, null)], 42, RESET],
  ] as const)('%s', (_name, readings, usedPct, resetsAt) => {
    const store = bars();
    for (const r of readings) store.record(r);
    const [bar] = store.all();
    expect(bar).toMatchObject({ usedPct, resetsAt });
  });

  const of = (session: string | null, r: ReturnType<typeof at>) => ({ ...r, sessionId: session });
  it.each([
    ['a newer reading of the same session wins, lower or not', [of('a', at(100, T0)), of('a', at(40, T0 + MIN))], 40],
    ["another session's lower reading is stale: the bar holds", [of('a', at(100, T0)), of('b', at(40, T0 + MIN))], 100],
    ['the usage endpoint read again wins, lower or not', [at(100, T0, RESET, 'usage-endpoint'), at(40, T0 + MIN, RESET, 'usage-endpoint')], 40],
    ["a session's lower reading does not undo the usage endpoint's", [at(100, T0, RESET, 'usage-endpoint'), of('a', at(40, T0 + MIN))], 100],
  ] as const)('%s', (_name, readings, usedPct) => {
    const store = bars();
    for (const r of readings) store.record(r);
    expect(store.all()[0]).toMatchObject({ usedPct });
  });

  it('keeps every reading as a sample, with its source', () => {
    const store = bars();
    store.record(at(40, T0));
    store.record(at(45, T0 + MIN, RESET, 'usage-endpoint'));
    store.record(at(41, T0 + 2 * MIN));
    store.record(at(45, T0 + 3 * MIN, RESET, 'usage-endpoint')); // same as the bar: not a new sample yet
    expect(store.samples('anthropic', 'five_hour', 0).map((s) => [s.usedPct, s.source])).toEqual([
      [40, 'statusline'],
      [45, 'usage-endpoint'],
      [41, 'statusline'],
    ]);
  });
});
