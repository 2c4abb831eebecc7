/**
 * A picked-up Codex rollout is history too (issue 12, point 1): the bytes a pickup installed are the sender's. The
 * real stores and the real rollout reader on a real file: the installed lines' usage keeps the sender's seat and
 * stays out of this seat's totals, and their plan bars, seat state and limit are the sender's plan — not recorded
 * here; what Codex appends after them on this machine is this seat's own, limits and all.
 */
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CodexRolloutSource, type CodexSeatReading } from '../../musher/ingest/codex-rollouts.js';
import { FileFollower } from '../../musher/ingest/file-follower.js';
import { systemClock } from '../../musher/clock.js';
import type { Log } from '../../musher/log.js';
import { loadPriceTable } from '../../musher/prices.js';
import { BarStore } from '../../musher/store/bars.js';
import { openStore } from '../../musher/store/db.js';
import { HistoryStore } from '../../musher/store/histories.js';
import { OffsetStore } from '../../musher/store/offsets.js';
import { SessionStore } from '../../musher/store/sessions.js';
import { UsageStore } from '../../musher/store/usage.js';
import { WallStore } from '../../musher/store/walls.js';

const REPO = join(import.meta.dirname, '..', '..');
/** Thread P: two turns with usage and rate limits, then a third that hits the usage limit (lines 25–31). */
const REL = join('2026', '11', '29', 'rollout-2026-11-29T19-40-00-019ad0f1-5f7f-7c3e-9a1b-4c5d6e7f8091.jsonl');
const LINES = readFileSync(join(REPO, 'tests', 'fixtures', 'codex', 'sessions', REL), 'utf8').split('\n').slice(0, -1);
const text = (lines: string[]) => lines.map((l) => `${l}\n`).join('');

const stops: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const s of stops.splice(0).reverse()) await s();
});

/** `viaSymlink`: musher knows CODEX_HOME by a symlink to it (the pickup writes through the real folder). */
function world(opts: { viaSymlink?: boolean } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'sl-phc-'));
  const db = openStore(join(dir, 'data', 'sleds.db'));
  stops.push(() => rmSync(dir, { recursive: true, force: true }), () => void db.close());
  mkdirSync(join(dir, 'codex-home', 'sessions'), { recursive: true });
  if (opts.viaSymlink) symlinkSync(join(dir, 'codex-home'), join(dir, 'codex-link'));
  const sessionsDir = join(dir, opts.viaSymlink ? 'codex-link' : 'codex-home', 'sessions');
  const stores = { db, usage: new UsageStore(db), bars: new BarStore(db), walls: new WallStore(db), histories: new HistoryStore(db), sessions: new SessionStore(db), offsets: new OffsetStore(db) };
  const errors: string[] = [];
  const log: Log = { info: () => undefined, warn: () => undefined, error: (m) => errors.push(m) };
  const seats: CodexSeatReading[] = [];
  const src = new CodexRolloutSource({ sessionsDir, follower: new FileFollower(db, stores.offsets, systemClock, log), ...stores, prices: loadPriceTable(REPO), clock: systemClock, log, onSeat: (r) => seats.push(r) });
  stops.push(() => src.stop());
  const file = join(sessionsDir, REL);
  /** What a pickup does: records the history at the file's real path, then writes the file. */
  const install = (bytes: string) => {
    mkdirSync(dirname(file), { recursive: true });
    stores.histories.installed({ path: join(realpathSync(sessionsDir), REL), bytes: Buffer.byteLength(bytes), seat: 'sam', handoffId: 'h1', at: Date.now() });
    writeFileSync(file, bytes);
  };
  const seatOf = () => db.prepare(`SELECT seat, COUNT(*) AS n FROM usage_records GROUP BY seat ORDER BY seat`).all();
  return { ...stores, src, file, install, seats, errors, seatOf };
}

describe('a picked-up Codex rollout is history', () => {
  it("the installed turns are sam's: his usage off this seat's totals, no bars, no seat state; the limit dana hits after is hers", async () => {
    const w = world();
    w.install(text(LINES.slice(0, 24)));
    await w.src.start();
    await w.src.idle();
    expect(w.seatOf()).toEqual([{ seat: 'sam', n: 2 }]);
    expect(w.usage.totals().records).toBe(0);
    expect(w.bars.all()).toEqual([]);
    expect(w.seats).toEqual([]);

    appendFileSync(w.file, text(LINES.slice(24)));
    w.src.kick(w.file);
    await w.src.idle();
    expect(w.walls.recent()).toHaveLength(1);
    expect(w.walls.recent()[0]).toMatchObject({ source: 'codex-rollout', sessionId: '019ad0f1-5f7f-7c3e-9a1b-4c5d6e7f8091' });
    expect(w.bars.all().length).toBeGreaterThan(0);
    expect(w.errors).toEqual([]);
  });

  it('a limit inside the installed bytes is no wall here', async () => {
    const w = world();
    w.install(text(LINES));
    await w.src.start();
    await w.src.idle();
    expect(w.walls.recent()).toEqual([]);
    expect(w.bars.all()).toEqual([]);
    expect(w.usage.totals().records).toBe(0);
  });

  it('the same when musher reads the rollouts through a symlinked CODEX_HOME', async () => {
    const w = world({ viaSymlink: true });
    w.install(text(LINES));
    await w.src.start();
    await w.src.idle();
    expect(w.seatOf()).toEqual([{ seat: 'sam', n: 2 }]);
    expect(w.walls.recent()).toEqual([]);
    expect(w.usage.totals().records).toBe(0);
  });
});
