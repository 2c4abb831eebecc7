import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore, type Db } from '../../musher/store/db.js';
import { UsageStore } from '../../musher/store/usage.js';
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
