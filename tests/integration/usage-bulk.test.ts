/**
 * A cold backfill's bulk write (UsageStore.beginBulk/flushBulk) on real SQLite: the same rows, quarter hours and
 * indexes as recording each entry as it is read, its offsets stored only with its rows, and a crash part way through
 * the write repaired at the next open.
 */
import { mkdtempSync, rmSync, writeFileSync, appendFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore, type Db } from '../../musher/store/db.js';
import { BULK_CHUNK_ROWS, QUARTER_HOURS_TRIGGER, USAGE_INDEXES, UsageStore, type UsageEntry } from '../../musher/store/usage.js';
import { SORT_RUN_ROWS } from '../../musher/store/usage-bulk.js';
import { FileFollower } from '../../musher/ingest/file-follower.js';
import { OffsetStore } from '../../musher/store/offsets.js';
import { systemClock } from '../../musher/clock.js';
import type { Log } from '../../musher/log.js';
import type { UsageRecord } from '../../core/usage.js';

const dirs: string[] = [];
const dbs: Db[] = [];
afterEach(() => {
  for (const db of dbs.splice(0)) if (db.open) db.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'sl-bulk-'));
  dirs.push(dir);
  return dir;
}

function open(file = join(tempDir(), 'sleds.db')): { db: Db; usage: UsageStore; file: string } {
  const db = openStore(file);
  dbs.push(db);
  return { db, usage: new UsageStore(db), file };
}

const T0 = Date.UTC(2026, 10, 1);
const MODELS = ['claude-opus-5-5', 'claude-sonnet-4-6', 'mystery-model'];

/** A history's entries in read order: replies of several blocks (a later one with the final output), unpriced models, another seat's. */
function entries(replies: number): UsageEntry[] {
  const out: UsageEntry[] = [];
  for (let i = 0; i < replies; i++) {
    // Keys in no order at all: a message id is random.
    const key = `msg_${((i * 2654435761) % 4294967296).toString(16).padStart(8, '0')}:req_${i}`;
    const model = MODELS[i % 3]!;
    const rec: UsageRecord = { source: 'claude-transcript', dedupKey: key, sessionId: `s${Math.floor(i / 50)}`, model, timestampMs: T0 + i * 37_000, cwd: null, inputTokens: 100 + (i % 7), outputTokens: 5, cacheWrite5mTokens: i % 3, cacheWrite1hTokens: i % 2, cacheReadTokens: 1000 + i, webSearchRequests: i % 11 === 0 ? 1 : 0, serviceTier: 'standard', inferenceGeo: null };
    const price = (output: number): UsageEntry['cost'] => (model === 'mystery-model' ? { priced: false, reason: `no price for ${model}` } : { priced: true, costMicros: 10 * output + i });
    const seat = i % 17 === 0 ? 'sam' : null;
    out.push({ usage: rec, cost: price(5), seat });
    if (i % 4 === 0) out.push({ usage: { ...rec, outputTokens: 40 + (i % 5) }, cost: price(40 + (i % 5)), seat });
    // A smaller, late block changes nothing.
    if (i % 8 === 0) out.push({ usage: { ...rec, outputTokens: 2, inputTokens: 1 }, cost: price(2), seat });
  }
  return out;
}

const rowsOf = (db: Db) => db.prepare(`SELECT * FROM usage_records ORDER BY dedup_key`).all();
const quarterHoursOf = (db: Db) => db.prepare(`SELECT * FROM usage_quarter_hours ORDER BY bucket, model`).all();
const schemaOf = (db: Db, name: string) => (db.prepare(`SELECT sql FROM sqlite_master WHERE name = ?`).get(name) as { sql: string } | undefined)?.sql ?? null;
const squash = (sql: string) => sql.replace(/\s+/g, ' ').replace(/ IF NOT EXISTS/, '').trim();

/** The reference: every chunk recorded as it is read, a few hundred entries at a time. */
function recordedOneByOne(all: UsageEntry[]): Db {
  const { db, usage } = open();
  for (let i = 0; i < all.length; i += 300) db.transaction(() => usage.recordMany(all.slice(i, i + 300)))();
  return db;
}

describe('a cold backfill written in bulk', () => {
  it('drops and builds again exactly the indexes and trigger the migrations made', () => {
    const { db } = open();
    expect(squash(schemaOf(db, 'usage_session_cost')!)).toBe(squash(USAGE_INDEXES[0]!));
    expect(squash(schemaOf(db, 'usage_ts_cost')!)).toBe(squash(USAGE_INDEXES[1]!));
    expect(squash(schemaOf(db, 'usage_quarter_hours_insert')!)).toBe(squash(QUARTER_HOURS_TRIGGER));
  });

  it('leaves the same rows, quarter hours and totals as recording each chunk as it is read, with the offsets stored in its last transaction', async () => {
    // More replies than one sorted run: the runs are merged.
    const all = entries(Math.ceil(SORT_RUN_ROWS * 1.5));
    const reference = recordedOneByOne(all);
    const { db, usage } = open();
    expect(usage.beginBulk()).toBe(true);
    for (let i = 0; i < all.length; i += 300) usage.recordMany(all.slice(i, i + 300), true);
    // Held, not written: nothing counts yet.
    expect(usage.totals().records).toBe(0);
    expect(usage.bulkRows()).toBe(Math.ceil(SORT_RUN_ROWS * 1.5));
    let committedWith = -1;
    await usage.flushBulk(() => {
      committedWith = (db.prepare(`SELECT COUNT(*) AS n FROM usage_records`).get() as { n: number }).n;
      db.prepare(`INSERT INTO file_offsets (path, offset, inode, updated_at) VALUES ('a.jsonl', 1, 1, 1)`).run();
    });
    // Every row was in before the offsets went in.
    expect(committedWith).toBe(rowsOf(reference).length);
    expect(rowsOf(db)).toEqual(rowsOf(reference));
    expect(quarterHoursOf(db)).toEqual(quarterHoursOf(reference));
    expect(usage.totals()).toEqual(new UsageStore(reference).totals());
    expect(usage.bulkRows()).toBe(0);
    // Built again: the statusline's sums are index lookups, and a record after it counts in its quarter hour.
    expect(schemaOf(db, 'usage_session_cost')).not.toBeNull();
    expect(schemaOf(db, 'usage_ts_cost')).not.toBeNull();
    const before = usage.totals().records;
    usage.record({ ...all[1]!.usage, dedupKey: 'msg_after:req_after' }, { priced: true, costMicros: 5 });
    expect(usage.totals().records).toBe(before + 1);
  });

  it('is only for an empty store: one with a record or a staged row stages instead', () => {
    const a = open();
    a.usage.record(entries(1)[0]!.usage, { priced: true, costMicros: 1 });
    expect(a.usage.beginBulk()).toBe(false);
    const b = open();
    b.usage.beginStaging();
    b.usage.recordMany(entries(2));
    expect(b.usage.beginBulk()).toBe(false);
    expect(open().usage.beginBulk()).toBe(true);
  });

  it('a crash part way through the write: the next open builds the indexes and quarter hours again, and reading it all again gives the clean totals', async () => {
    // More than one chunk of rows, so the crash comes with some written and some not.
    const all = entries(BULK_CHUNK_ROWS + 5_000);
    const reference = recordedOneByOne(all);
    const { db, usage, file } = open();
    usage.beginBulk();
    usage.recordMany(all, true);
    let yields = 0;
    let committed = false;
    const crash = usage.flushBulk(
      () => void (committed = true),
      async () => {
        // The sort's one run, then one chunk of rows written: the process dies there.
        if (++yields === 2) throw new Error('killed');
      },
    );
    await expect(crash).rejects.toThrow('killed');
    expect(committed).toBe(false);
    expect(schemaOf(db, 'usage_quarter_hours_insert')).toBeNull();
    db.close();

    const again = open(file);
    expect(schemaOf(again.db, 'usage_session_cost')).not.toBeNull();
    expect(schemaOf(again.db, 'usage_ts_cost')).not.toBeNull();
    expect(schemaOf(again.db, 'usage_quarter_hours_insert')).not.toBeNull();
    // The quarter hours hold what was written before the crash.
    const written = (again.db.prepare(`SELECT COUNT(*) AS n FROM usage_records WHERE seat IS NULL`).get() as { n: number }).n;
    expect(written).toBeGreaterThan(0);
    expect(written).toBeLessThan(rowsOf(reference).filter((r) => (r as { seat: string | null }).seat === null).length);
    expect(again.usage.totals().records).toBe(written);
    // Its offsets were never stored: the files are read again, this time as a store that is not empty reads them.
    expect(again.usage.beginBulk()).toBe(false);
    for (let i = 0; i < all.length; i += 300) again.db.transaction(() => again.usage.recordMany(all.slice(i, i + 300)))();
    expect(rowsOf(again.db)).toEqual(rowsOf(reference));
    expect(quarterHoursOf(again.db)).toEqual(quarterHoursOf(reference));
  });
});

describe('a follower holding its offsets back', () => {
  const quiet = { info() {}, warn() {}, error() {} } as unknown as Log;

  it('reads on from where it held, says what it read, and stores the offsets only when told (or forgets them)', async () => {
    const dir = tempDir();
    const { db } = open();
    const offsets = new OffsetStore(db);
    const follower = new FileFollower(db, offsets, systemClock, quiet);
    const path = join(dir, 'a.jsonl');
    writeFileSync(path, '{"n":1}\n{"n":2}\n');
    const seen: string[] = [];
    const read = async () => void (await follower.follow(path, (lines) => seen.push(...lines.map((l) => l.text))));

    follower.holdOffsets();
    await read();
    expect(offsets.get(path)).toBeNull();
    expect(follower.unstored()).toEqual({ files: 1, bytes: 16 });
    expect(follower.unreadBytesNow(path)).toBe(0);
    appendFileSync(path, '{"n":3}\n');
    await read();
    // Each line once: the second read went on from the held offset.
    expect(seen).toEqual(['{"n":1}', '{"n":2}', '{"n":3}']);
    db.transaction(() => follower.writeHeldOffsets())();
    expect(offsets.get(path)?.offset).toBe(24);
    expect(follower.unstored()).toBeUndefined();

    // Held again and dropped (the write failed): the file is read again from what is stored.
    follower.holdOffsets();
    appendFileSync(path, '{"n":4}\n');
    await read();
    expect(follower.unstored()).toEqual({ files: 0, bytes: 8 });
    follower.dropHeldOffsets();
    expect(follower.unreadBytesNow(path)).toBe(8);
    await read();
    expect(seen).toEqual(['{"n":1}', '{"n":2}', '{"n":3}', '{"n":4}', '{"n":4}']);
    expect(offsets.get(path)?.offset).toBe(32);
  });
});
