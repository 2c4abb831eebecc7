import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore, type Db } from '../../musher/store/db.js';
import { PlatformKeyStore, type PlatformKeyUse } from '../../musher/store/platform-key.js';

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

function store(): PlatformKeyStore {
  const dir = mkdtempSync(join(tmpdir(), 'sl-key-'));
  const db: Db = openStore(join(dir, 'sleds.db'));
  cleanups.push(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return new PlatformKeyStore(db);
}

const DAY = Date.UTC(2026, 10, 29);
const use = (requestId: string, seat: string, model: string, costMicros: number | null, ts = DAY + 3_600_000): PlatformKeyUse => ({
  requestId,
  seat,
  project: 'acme/api',
  model,
  timestampMs: ts,
  inputTokens: 100,
  outputTokens: 10,
  cacheWriteTokens: 0,
  cacheReadTokens: 0,
  costMicros,
  source: 'gateway',
});

describe('the platform-key rail', () => {
  it('sums spend per seat and model for a day, each response once, unpriced kept apart', () => {
    const key = store();
    expect(key.record(use('req_1', 'dana', 'claude-opus-5-5', 600_000))).toBe(true);
    expect(key.record(use('req_1', 'dana', 'claude-opus-5-5', 600_000))).toBe(false); // the same response again
    key.record(use('req_2', 'dana', 'claude-opus-5-5', 400_000));
    key.record(use('req_3', 'dana', 'claude-sonnet-5', 50_000));
    key.record(use('req_4', 'lee', 'mystery-model', null));
    key.record(use('req_5', 'lee', 'claude-opus-5-5', 9_000_000, DAY - 1)); // yesterday
    expect(key.spend(DAY, DAY + 86_400_000)).toEqual([
      { seat: 'dana', model: 'claude-opus-5-5', costMicros: 1_000_000, unpricedRecords: 0, records: 2 },
      { seat: 'dana', model: 'claude-sonnet-5', costMicros: 50_000, unpricedRecords: 0, records: 1 },
      { seat: 'lee', model: 'mystery-model', costMicros: 0, unpricedRecords: 1, records: 1 },
    ]);
  });
});
