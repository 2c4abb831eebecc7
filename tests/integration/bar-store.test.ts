import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore, type Db } from '../../musher/store/db.js';
import { BarStore } from '../../musher/store/bars.js';
import { migrate } from '../../musher/store/migrations.js';
import Database from 'better-sqlite3';

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
const ACCOUNT = 'claude-dir:/home/a/.claude';
const at = (usedPct: number, observedAt: number, resetsAt: number | null = RESET, source = 'statusline', account = ACCOUNT) => ({
  provider: 'anthropic',
  account,
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
    expect(store.samples('anthropic', ACCOUNT, 'five_hour', 0).map((s) => [s.usedPct, s.source])).toEqual([
      [40, 'statusline'],
      [45, 'usage-endpoint'],
      [41, 'statusline'],
    ]);
  });

  it("two accounts' readings never mix: each keeps its own bar and its own samples", () => {
    const store = bars();
    const other = 'claude-dir:/home/a/.claude-work';
    store.record(at(100, T0));
    store.record(at(40, T0 + MIN, RESET, 'statusline', other));
    store.record(at(45, T0 + 2 * MIN, RESET, 'usage-endpoint', other));
    expect(store.forAccount('anthropic', ACCOUNT).map((b) => b.usedPct)).toEqual([100]);
    expect(store.forAccount('anthropic', other).map((b) => b.usedPct)).toEqual([45]);
    expect(store.samples('anthropic', ACCOUNT, 'five_hour', 0).map((s) => s.usedPct)).toEqual([100]);
    expect(store.samples('anthropic', other, 'five_hour', 0).map((s) => s.usedPct)).toEqual([40, 45]);
  });

  it('bars kept before accounts are adopted by the default account, unless it has a newer one', () => {
    const store = bars();
    store.record(at(70, T0, RESET, 'statusline', ''));
    store.record({ ...at(20, T0, RESET, 'statusline', ''), window: 'seven_day' });
    store.record({ ...at(25, T0 + MIN), window: 'seven_day' });
    store.adoptUnkeyed('anthropic', ACCOUNT, '~/.claude');
    expect(store.all().map((b) => [b.account, b.window, b.usedPct, b.accountLabel])).toEqual([
      [ACCOUNT, 'five_hour', 70, '~/.claude'],
      [ACCOUNT, 'seven_day', 25, null],
    ]);
    expect(store.samples('anthropic', ACCOUNT, 'seven_day', 0).map((s) => s.usedPct)).toEqual([20, 25]);
  });

  it("an upgraded store keeps its bars and samples, and they become musher's own account's", () => {
    const dir = mkdtempSync(join(tmpdir(), 'sl-bars-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, 'sleds.db');
    const old = new Database(file);
    migrate(old, 19);
    old.prepare(`INSERT INTO bars (provider, window, used_pct, resets_at, changed_at, observed_at, source, session_id) VALUES ('anthropic', 'five_hour', 93, ?, ?, ?, 'statusline', 's1')`).run(RESET, T0, T0);
    old.prepare(`INSERT INTO bar_samples (provider, window, used_pct, resets_at, observed_at, source, session_id) VALUES ('anthropic', 'five_hour', 93, ?, ?, 'statusline', 's1')`).run(RESET, T0);
    old.close();
    const db = openStore(file);
    cleanups.unshift(() => db.close());
    const store = new BarStore(db);
    store.adoptUnkeyed('anthropic', ACCOUNT, '~/.claude');
    expect(store.forAccount('anthropic', ACCOUNT)).toMatchObject([{ window: 'five_hour', usedPct: 93, resetsAt: RESET, sessionId: 's1', accountLabel: '~/.claude' }]);
    expect(store.samples('anthropic', ACCOUNT, 'five_hour', 0).map((s) => s.usedPct)).toEqual([93]);
  });
});
