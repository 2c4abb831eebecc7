import { mkdtempSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { WallRecord } from '../../core/usage.js';
import { loadPriceTable } from '../../musher/prices.js';
import { REPO_ROOT } from '../support/sleds-env.js';
import { openStore, type Db } from '../../musher/store/db.js';
import { SessionStore } from '../../musher/store/sessions.js';
import { UsageStore } from '../../musher/store/usage.js';
import { WallBook } from '../../musher/store/wall-book.js';
import { PolicyLoader } from '../../musher/policy/loader.js';
import { policyPort } from '../../musher/policy/port.js';
import { WallKeeper } from '../../musher/walls/wall-keeper.js';
import type { ExitTakers } from '../../musher/walls/ports.js';

/**
 * Two signals of one limit in flight at once (the spool drain and the transcript follower) open one wall, with
 * one snapshot, in either order: the keeper on a real SQLite store, its awaits (the key, the roster) real promises.
 */
const dirs: string[] = [];
const dbs: Db[] = [];
afterEach(() => {
  for (const db of dbs.splice(0)) db.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const NOW = Date.UTC(2026, 11, 1, 21, 0, 0);
const EXACT = Date.UTC(2026, 11, 1, 21, 24, 37);
const SESSION = 'fold-session';

const hookSignal: WallRecord = {
  source: 'hook:StopFailure',
  dedupKey: 'hook:ev1',
  sessionId: SESSION,
  timestampMs: NOW,
  window: null,
  // "resets 9:24pm (UTC)": the minute, rounded down.
  resetsAtMs: Date.UTC(2026, 11, 1, 21, 24, 0),
  message: "You've hit your limit · resets 9:24pm (UTC)",
};
const transcriptSignal: WallRecord = {
  source: 'claude-transcript',
  dedupKey: 'msg:req',
  sessionId: SESSION,
  timestampMs: NOW - 2_000,
  window: 'five_hour',
  resetsAtMs: EXACT,
  message: "You've hit your 5-hour limit · resets 9:24pm (UTC)",
};

function keeper(taken: string[] = []): { keeper: WallKeeper; book: WallBook; snapshots: string[] } {
  const dir = mkdtempSync(join(tmpdir(), 'sl-fold-'));
  dirs.push(dir);
  const db = openStore(join(dir, 'sleds.db'));
  dbs.push(db);
  const book = new WallBook(db);
  const snapshots: string[] = [];
  const log = { info: () => undefined, warn: () => undefined, error: () => undefined };
  const refuse = {
    take: async (wall: { wallId: string }) => {
      taken.push(wall.wallId);
      return { ok: false, line: 'not here' };
    },
  };
  const keeper = new WallKeeper({
    clock: { now: () => NOW },
    log,
    timeZone: 'UTC',
    seat: 'dana',
    prices: loadPriceTable(REPO_ROOT),
    sessions: new SessionStore(db),
    usage: new UsageStore(db),
    book,
    policy: policyPort(new PolicyLoader({ configDir: join(dir, 'config') }), dir),
    key: { configured: async () => false, allowanceLeft: () => ({ dayMicros: null, weekMicros: null }) },
    snapshot: {
      take: async (wall) => {
        snapshots.push(wall.wallId);
        return { id: `snap-${snapshots.length}`, note: null };
      },
    },
    exits: { continue: refuse, hold: refuse, overnight: refuse, switch: refuse, handoff: refuse, defer: refuse } as ExitTakers,
    randomBytes: (n) => randomBytes(n),
  });
  return { keeper, book, snapshots };
}

describe('the wall keeper folds signals of one limit', () => {
  for (const [name, order] of [
    ['hook first', [hookSignal, transcriptSignal]],
    ['transcript first', [transcriptSignal, hookSignal]],
  ] as const) {
    it(`two signals in flight together, ${name}: one wall, one snapshot, the exact reset and the named window`, async () => {
      const { keeper: k, book, snapshots } = keeper();
      // A wall's snapshot is asked for as it opens (before onSignal resolves), so `snapshots` is complete here.
      const [a, b] = await Promise.all(order.map((s) => k.onSignal(s)));
      expect(a?.wallId).toBeDefined();
      expect(b?.wallId).toBe(a?.wallId);
      const walls = book.recent();
      expect(walls).toHaveLength(1);
      expect(walls[0]).toMatchObject({ window: 'five_hour', resetsAtMs: EXACT, state: 'open' });
      expect(snapshots).toEqual([walls[0]!.wallId]);
    });
  }

  it('a signal of another limit (a reset hours apart in another window) is not folded into the open wall', async () => {
    const { keeper: k, book } = keeper();
    await k.onSignal(transcriptSignal);
    await k.onSignal({ ...transcriptSignal, dedupKey: 'msg:weekly', window: 'seven_day', resetsAtMs: EXACT + 3 * 86_400_000 });
    expect(book.recent().map((w) => w.window).sort()).toEqual(['five_hour', 'seven_day']);
  });
});

describe('the wall book guards the insert', () => {
  it('two writers checking and inserting the same limit leave one wall: the second is told which one it folds into', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sl-fold-'));
    dirs.push(dir);
    const first = openStore(join(dir, 'sleds.db'));
    const second = openStore(join(dir, 'sleds.db'));
    dbs.push(first, second);
    const row = (wallId: string, window: string | null) => ({
      wallId,
      sessionId: SESSION,
      harness: 'claude-code' as const,
      window,
      resetsAtMs: EXACT,
      hitAtMs: NOW,
      signal: 'test',
      context: {} as never,
      offers: [],
      decision: null,
    });
    const same = (open: { window: string | null }) => open.window === null || open.window === 'five_hour';
    expect(new WallBook(first).open(row('aaaaaaaaaaaa', 'five_hour'), same)).toEqual({ opened: true });
    const again = new WallBook(second).open(row('bbbbbbbbbbbb', null), same);
    expect(again).toMatchObject({ opened: false, into: { wallId: 'aaaaaaaaaaaa' } });
    expect(new WallBook(first).recent()).toHaveLength(1);
  });
});

describe('a wall answered after it is over', () => {
  it('is refused in one line, and the exit is never taken: the wall stays closed with its story unchanged', async () => {
    const taken: string[] = [];
    const { keeper: k, book } = keeper(taken);
    const wall = (await k.onSignal(transcriptSignal))!;
    const byPolicy = [...taken]; // what the policy tried as the wall opened
    // The prompt read the wall open; before its /sled 2 is taken, the wall closes (its bar read back under 100%).
    expect(book.close(wall.wallId, NOW, 'its bar is back under 100%')).toEqual({ ok: true });
    const story = book.events(wall.wallId);
    const answer = await k.take(wall, 'hold', null, 'user', null);
    expect(answer).toEqual({ ok: false, line: `sled: wall ${wall.wallId}: a wall that is closed cannot take 'choose' — the wall is over; a new limit opens a new wall. /sled status shows the bars.` });
    expect(taken).toEqual(byPolicy);
    expect(book.get(wall.wallId)).toMatchObject({ state: 'closed', choice: null });
    expect(book.events(wall.wallId)).toEqual(story);
  });
});
