import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { openStore, type Db } from '../../musher/store/db.js';
import { migrate } from '../../musher/store/migrations.js';
import { backlogStaging, mergeRepeatedReplies, SESSION_SPEND_SQL, UsageStore } from '../../musher/store/usage.js';
import { FileFollower } from '../../musher/ingest/file-follower.js';
import { JsonlSource } from '../../musher/ingest/jsonl-source.js';
import { OffsetStore } from '../../musher/store/offsets.js';
import { systemClock } from '../../musher/clock.js';
import type { Log } from '../../musher/log.js';
import type { UsageRecord } from '../../core/usage.js';

const dirs: string[] = [];
const dbs: Db[] = [];
afterEach(() => {
  for (const db of dbs.splice(0)) db.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function store(): { db: Db; usage: UsageStore } {
  const dir = mkdtempSync(join(tmpdir(), 'sl-store-'));
  dirs.push(dir);
  const db = openStore(join(dir, 'sleds.db'));
  dbs.push(db);
  return { db, usage: new UsageStore(db) };
}

const DAY = Date.UTC(2026, 10, 29);
function rec(key: string, model: string, ts: number, output = 10): UsageRecord {
  return { source: 't', dedupKey: key, sessionId: 's', model, timestampMs: ts, cwd: null, inputTokens: 1, outputTokens: output, cacheWrite5mTokens: 0, cacheWrite1hTokens: 0, cacheReadTokens: 0, webSearchRequests: 0, serviceTier: null, inferenceGeo: null };
}

describe('UsageStore', () => {
  it("a day's spend by model equals the sum of its records, through re-reads and late, larger blocks", () => {
    const { db, usage } = store();
    usage.record(rec('a', 'opus', DAY + 60_000), { priced: true, costMicros: 100 });
    usage.record(rec('a', 'opus', DAY + 60_000), { priced: true, costMicros: 100 }); // the same block read again
    usage.record(rec('a', 'opus', DAY + 60_000, 50), { priced: true, costMicros: 300 }); // a later block, final output
    usage.record(rec('a', 'opus', DAY + 60_000, 20), { priced: true, costMicros: 150 }); // an earlier block arriving late
    usage.record(rec('b', 'opus', DAY + 23 * 3_600_000), { priced: true, costMicros: 7 });
    usage.record(rec('c', 'mystery', DAY + 3_600_000), { priced: false, reason: 'no price' });
    usage.record(rec('d', 'opus', DAY - 1), { priced: true, costMicros: 1_000 }); // yesterday
    usage.record(rec('e', 'opus', DAY + 86_400_000), { priced: true, costMicros: 1_000 }); // tomorrow

    const day = usage.spendByModel(DAY, DAY + 86_400_000);
    expect(day).toEqual([
      { model: 'opus', costMicros: 307, unpricedRecords: 0, records: 2 },
      { model: 'mystery', costMicros: 0, unpricedRecords: 1, records: 1 },
    ]);
    const direct = db
      .prepare(`SELECT model, SUM(COALESCE(cost_micros,0)) AS c, COUNT(*) AS n FROM usage_records WHERE ts >= ? AND ts < ? GROUP BY model ORDER BY c DESC`)
      .all(DAY, DAY + 86_400_000);
    expect(direct).toEqual([
      { model: 'opus', c: 307, n: 2 },
      { model: 'mystery', c: 0, n: 1 },
    ]);
    expect(usage.sessionSpend('s')).toMatchObject({ costMicros: 2_307, unpricedRecords: 1, records: 5 });
    const all = db
      .prepare(`SELECT SUM(COALESCE(cost_micros,0)) AS cost, COUNT(*) AS records, SUM(cost_micros IS NULL) AS unpriced, SUM(output_tokens) AS output FROM usage_records`)
      .get() as { cost: number; records: number; unpriced: number; output: number };
    expect(usage.totals()).toMatchObject({ costMicros: all.cost, records: all.records, unpricedRecords: all.unpriced, outputTokens: all.output });
    expect(all.output).toBe(90); // 50 for "a" (its final block) and 10 for each of the other four
  });
});

describe("a session's spend", () => {
  it('is summed from the index alone, not a row lookup per reply (the statusline asks for it on every refresh)', () => {
    const { db, usage } = store();
    for (let i = 0; i < 50; i++) usage.record(rec(`k${i}`, i % 2 ? 'opus' : 'sonnet', DAY + i), { priced: true, costMicros: 10 }, i === 7 ? 'other-seat' : null);
    expect(usage.sessionSpend('s')).toMatchObject({ costMicros: 490, records: 49, models: expect.arrayContaining(['opus', 'sonnet']) });
    const plan = (db.prepare(`EXPLAIN QUERY PLAN ${SESSION_SPEND_SQL}`).all('s') as Array<{ detail: string }>).map((r) => r.detail);
    expect(plan.filter((d) => d.includes('usage_records'))).toEqual(['SEARCH usage_records USING COVERING INDEX usage_session_cost (session_id=? AND seat=?)']);
  });
});

describe('the usage table keyed by an index (migration 35)', () => {
  it('keeps every row, total and quarter hour of a store made before it, and dedups the same replies after', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sl-store-'));
    dirs.push(dir);
    const file = join(dir, 'sleds.db');
    const old = new Database(file);
    migrate(old, 34);
    const insert = old.prepare(`INSERT INTO usage_records (dedup_key, source, session_id, model, ts, input_tokens, output_tokens, cache_write_5m, cache_write_1h, cache_read, web_searches, service_tier, inference_geo, cost_micros, unpriced_reason, seat) VALUES (?, 't', ?, ?, ?, 1, ?, 0, 0, 0, 0, NULL, NULL, ?, ?, ?)`);
    insert.run('a', 's', 'opus', DAY + 1, 10, 100, null, null);
    insert.run('b', 's', 'mystery', DAY + 2, 20, null, 'no price', null);
    insert.run('c', 'p', 'opus', DAY + 3, 30, 300, null, 'other-seat');
    const before = {
      rows: old.prepare(`SELECT * FROM usage_records ORDER BY rowid`).all(),
      quarterHours: old.prepare(`SELECT * FROM usage_quarter_hours ORDER BY bucket, model`).all(),
    };
    old.close();

    const db = openStore(file);
    dbs.push(db);
    expect(db.prepare(`SELECT * FROM usage_records ORDER BY rowid`).all()).toEqual(before.rows);
    expect(db.prepare(`SELECT * FROM usage_quarter_hours ORDER BY bucket, model`).all()).toEqual(before.quarterHours);
    const usage = new UsageStore(db);
    usage.record(rec('a', 'opus', DAY + 1, 15), { priced: true, costMicros: 150 }); // a later, larger block of a
    usage.record(rec('d', 'opus', DAY + 4), { priced: true, costMicros: 1 });
    expect(usage.spendByModel(DAY, DAY + 86_400_000)).toEqual([
      { model: 'opus', costMicros: 151, unpricedRecords: 0, records: 2 },
      { model: 'mystery', costMicros: 0, unpricedRecords: 1, records: 1 },
    ]);
    expect(db.prepare(`SELECT COUNT(*) AS n FROM usage_records`).get()).toEqual({ n: 4 });
    const indexes = (db.prepare(`SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'usage_records' ORDER BY name`).all() as Array<{ name: string }>).map((r) => r.name);
    expect(indexes).toEqual(['usage_dedup', 'usage_session_cost', 'usage_ts_cost']);
  });
});

describe('a reply written block by block', () => {
  const entry = (key: string, output: number, cost: number, ts = DAY, seat: string | null = null) => ({ usage: rec(key, 'opus', ts, output), cost: { priced: true as const, costMicros: cost }, seat });
  it.each([
    ['a single block', [entry('a', 10, 1)], [{ key: 'a', output: 10, cost: 1, ts: DAY }]],
    ['repeats with the same count: the first kept', [entry('a', 10, 1, DAY), entry('a', 10, 9, DAY + 5)], [{ key: 'a', output: 10, cost: 1, ts: DAY }]],
    ['a later block counting more: its count and cost, the first time', [entry('a', 10, 1, DAY), entry('a', 50, 5, DAY + 5)], [{ key: 'a', output: 50, cost: 5, ts: DAY }]],
    ['a later block counting less: ignored', [entry('a', 50, 5, DAY), entry('a', 10, 1, DAY + 5)], [{ key: 'a', output: 50, cost: 5, ts: DAY }]],
    ['two replies stay two', [entry('a', 10, 1), entry('b', 20, 2)], [{ key: 'a', output: 10, cost: 1, ts: DAY }, { key: 'b', output: 20, cost: 2, ts: DAY }]],
  ])('%s', (_what, entries, expected) => {
    const merged = mergeRepeatedReplies(entries);
    expect(merged.map((e) => ({ key: e.usage.dedupKey, output: e.usage.outputTokens, cost: e.cost.priced ? e.cost.costMicros : -1, ts: e.usage.timestampMs }))).toEqual(expected);
  });
});

describe('staging a large backfill', () => {
  // Blocks of replies in the order a history has them, some repeated across chunks, one arriving with a larger count later.
  const chunks = [
    [['a', 10, 100, 'opus'], ['a', 10, 100, 'opus'], ['b', 5, 50, 'sonnet']],
    [['a', 40, 400, 'opus'], ['c', 7, 70, 'mystery']],
    [['b', 5, 50, 'sonnet'], ['d', 1, 10, 'opus'], ['a', 20, 200, 'opus']],
  ] as const;
  const write = (usage: UsageStore) => {
    let t = DAY;
    for (const chunk of chunks) {
      usage.recordMany(
        chunk.map(([key, output, cost, model]) => ({
          usage: { ...rec(key, model, (t += 60_000), output) },
          cost: model === 'mystery' ? { priced: false as const, reason: 'no price' } : { priced: true as const, costMicros: cost },
          seat: null,
        })),
      );
    }
  };
  const rows = (db: Db) => db.prepare(`SELECT dedup_key, model, ts, output_tokens, cost_micros FROM usage_records ORDER BY dedup_key`).all();

  it('counts nothing until merged, then exactly what writing straight in counts, merged in chunks as in one', async () => {
    const direct = store();
    write(direct.usage);
    for (const chunkRows of [2, 1000]) {
      const staged = store();
      staged.usage.beginStaging();
      write(staged.usage);
      expect(staged.usage.totals().records).toBe(0); // staged rows count nowhere yet
      expect(staged.usage.stagedRows()).toBeGreaterThan(0);
      await staged.usage.mergeStaged(chunkRows);
      staged.usage.endStaging();
      expect(staged.usage.stagedRows()).toBe(0);
      expect(rows(staged.db)).toEqual(rows(direct.db));
      expect(staged.usage.totals()).toEqual(direct.usage.totals());
      expect(staged.usage.spendByModel(DAY, DAY + 86_400_000)).toEqual(direct.usage.spendByModel(DAY, DAY + 86_400_000));
    }
    // Once staging ends, records go straight in again.
    const after = store();
    after.usage.beginStaging();
    after.usage.endStaging();
    after.usage.record(rec('z', 'opus', DAY), { priced: true, costMicros: 1 });
    expect(after.usage.totals().records).toBe(1);
  });

  it('reports itself backfilling from the first byte until the staged usage is merged, never "done" with nothing counted', async () => {
    const { db, usage } = store();
    const dir = mkdtempSync(join(tmpdir(), 'sl-stage-'));
    dirs.push(dir);
    const projects = join(dir, 'projects');
    mkdirSync(projects);
    // Three files, each a few chunks: the last byte of the last file is read well before its close and the merge.
    for (const name of ['a', 'b', 'c']) writeFileSync(join(projects, `${name}.jsonl`), `${JSON.stringify({ key: name, pad: 'x'.repeat(200_000) })}\n`.repeat(8));
    const follower = new FileFollower(db, new OffsetStore(db), systemClock, { info() {}, warn() {}, error() {} } as unknown as Log);
    const seen: Array<{ done: number; total: number; backfilling: boolean; counted: number }> = [];
    let t = DAY;
    const source: JsonlSource = new JsonlSource({
      dir: projects,
      follower,
      log: { info() {}, warn() {}, error() {} } as unknown as Log,
      what: 'transcript',
      accepts: (path) => path.endsWith('.jsonl'),
      record: (_path, lines) => usage.recordMany(lines.map((l) => ({ usage: rec(`${l.offset}-${(JSON.parse(l.text) as { key: string }).key}`, 'opus', (t += 1000)), cost: { priced: true, costMicros: 1 }, seat: null }))),
      onProgress: (done, total) => seen.push({ done, total, backfilling: source.progress().backfilling, counted: usage.totals().records }),
      staging: { ...backlogStaging(usage), fromBytes: 1 },
    });
    await source.start();
    await source.idle();
    expect(usage.totals().records).toBe(24);
    expect(source.progress()).toEqual({ backfilling: false, pendingBytes: 0 });
    const last = seen.at(-1)!;
    expect(last.done).toBe(last.total);
    expect(last.counted).toBe(0); // read, still staged
    expect(seen.filter((s) => !s.backfilling)).toEqual([]);
  });

  it('what a crash left staged is merged when the source starts, before anything is read', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sl-stage-'));
    dirs.push(dir);
    const file = join(dir, 'sleds.db');
    const first = openStore(file);
    const killed = new UsageStore(first);
    killed.beginStaging();
    write(killed);
    first.close(); // as a kill would leave it: staged, committed, never merged

    const db = openStore(file);
    dbs.push(db);
    const usage = new UsageStore(db);
    expect(usage.stagedRows()).toBeGreaterThan(0);
    const follower = new FileFollower(db, new OffsetStore(db), systemClock, { info() {}, warn() {}, error() {} } as unknown as Log);
    const source = new JsonlSource({ dir: join(dir, 'none'), follower, log: { info() {}, warn() {}, error() {} } as unknown as Log, what: 'transcript', accepts: () => true, record: () => undefined, staging: backlogStaging(usage) });
    await source.start();
    await source.idle();
    expect(usage.stagedRows()).toBe(0);
    const direct = store();
    write(direct.usage);
    expect(usage.totals()).toEqual(direct.usage.totals());
  });
});
