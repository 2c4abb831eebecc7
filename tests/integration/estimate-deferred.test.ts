import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { EstimateQuery, ReceiptFeatures } from '../../core/estimate/estimator.js';
import { canonicalReceipt } from '../../core/receipt/canonical.js';
import type { ReceiptBody } from '../../core/receipt/receipt.js';
import type { Task } from '../../core/task/task.js';
import { ReceiptHistory } from '../../musher/estimate/history.js';
import { EstimateService } from '../../musher/estimate/service.js';
import { loadPriceTable } from '../../musher/prices.js';
import { openStore, type Db } from '../../musher/store/db.js';
import { ReceiptStore } from '../../musher/store/receipts.js';
import { SessionStore } from '../../musher/store/sessions.js';
import { TaskStore } from '../../musher/store/tasks.js';
import { UsageStore } from '../../musher/store/usage.js';
import { REPO_ROOT } from '../support/sleds-env.js';

const T0 = Date.UTC(2026, 4, 12, 9, 0);
const REPO = '/work/shop';
const dirs: string[] = [];
const dbs: Db[] = [];
afterEach(() => {
  for (const db of dbs.splice(0)) db.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function store(): Db {
  const dir = mkdtempSync(join(tmpdir(), 'sleds-est-'));
  dirs.push(dir);
  const db = openStore(join(dir, 'sleds.db'));
  dbs.push(db);
  return db;
}

let n = 0;
function body(over: Partial<ReceiptBody> = {}): ReceiptBody {
  const id = `rcpt${String(++n).padStart(8, '0')}`;
  return {
    v: 1, id, taskId: `task-${id}`, title: 'a past fix', type: 'bugfix', repo: REPO, seat: 'dana', harness: 'claude-code',
    models: ['claude-opus-5-5'], costMicros: 5_000_000, keyMicros: 0, activeMinutes: 20, promptChars: 300, filesTouched: 2,
    turns: 3, band: null, inBand: null, startedAt: T0 - 3_600_000, endedAt: T0 - n * 60_000, ...over,
  };
}

/** A receipt written into the table by other hands than ReceiptStore (an older musher, a restore). */
function writeRaw(db: Db, b: ReceiptBody | string, id = typeof b === 'string' ? `raw${++n}` : b.id): void {
  db.prepare(`INSERT INTO receipts (id, task_id, body, signature, signer, created_at) VALUES (?, ?, ?, NULL, NULL, ?)`).run(
    id, `task-${id}`, typeof b === 'string' ? b : canonicalReceipt(b), T0,
  );
}

describe('the estimator\'s history', () => {
  it('holds each repository\'s receipts newest first, and picks up receipts written since, however they were written', () => {
    const db = store();
    const receipts = new ReceiptStore(db);
    const warnings: string[] = [];
    const history = new ReceiptHistory(receipts, { info() {}, warn: (m) => warnings.push(m), error() {} });
    const a = body({ costMicros: 1_000_000 });
    receipts.insert({ body: a, signature: null, signer: null }, T0);
    writeRaw(db, body({ repo: '/work/other' }));
    expect(history.of({ repo: REPO }).map((r) => r.costMicros)).toEqual([1_000_000]);

    const b = body({ costMicros: 2_000_000 });
    writeRaw(db, b);
    writeRaw(db, '{"v":1,"id":"edited by hand"}');
    receipts.insert({ body: body({ costMicros: 3_000_000 }), signature: null, signer: null }, T0);
    expect(history.of({ repo: REPO }).map((r) => r.costMicros)).toEqual([3_000_000, 2_000_000, 1_000_000]);
    expect(history.of({ repo: '/work/other' })).toHaveLength(1);
    expect(history.of({ repo: null })).toEqual([]);
    expect(warnings).toEqual([expect.stringMatching(/^receipt row 4 is not a receipt body — left out of estimates$/)]);
  });

  it('keeps the newest receipts of a repository, up to its bound', () => {
    const db = store();
    const receipts = new ReceiptStore(db);
    const history = new ReceiptHistory(receipts, undefined, 3);
    for (const usd of [1, 2, 3, 4, 5]) receipts.insert({ body: body({ costMicros: usd * 1_000_000 }), signature: null, signer: null }, T0);
    expect(history.of({ repo: REPO }).map((r) => r.costMicros / 1_000_000)).toEqual([5, 4, 3]);
  });
});

describe('a new task is priced after the request that created it', () => {
  /** An estimator on a real store, whose "after the answer" runs when the test says so. */
  function estimator(receiptCount: number) {
    const db = store();
    const receipts = new ReceiptStore(db);
    for (let i = 0; i < receiptCount; i++) receipts.insert({ body: body({ costMicros: (4 + i) * 1_000_000, activeMinutes: 10 + 5 * i }), signature: null, signer: null }, T0);
    const history = new ReceiptHistory(receipts);
    const reads: EstimateQuery[] = [];
    const afterAnswer: Array<() => void> = [];
    const tasks = new TaskStore(db);
    const sessions = new SessionStore(db);
    const estimates = new EstimateService({
      history: (q): ReceiptFeatures[] => {
        reads.push(q);
        return history.of(q);
      },
      tasks,
      sessions,
      usage: new UsageStore(db),
      prices: loadPriceTable(REPO_ROOT),
      clock: { now: () => T0 },
      seat: 'dana',
      later: (fn) => afterAnswer.push(fn),
    });
    const newTask = (id: string): Task => {
      tasks.create({ id, title: `Fix ${id}`, type: 'bugfix', repo: REPO, source: 'prompt', promptChars: 300, at: T0 });
      return tasks.get(id)!;
    };
    return { estimates, tasks, sessions, reads, newTask, answered: () => afterAnswer.splice(0).forEach((fn) => fn()) };
  }

  it('creating a task reads no receipt; once the answer has gone, the task keeps its band', () => {
    const e = estimator(6);
    e.estimates.priceLater(e.newTask('task00000001'));
    e.estimates.priceLater(e.newTask('task00000002'));
    expect(e.reads).toEqual([]);
    expect(e.tasks.band('task00000001')).toBeNull();

    e.answered();
    expect(e.reads).toHaveLength(2);
    for (const id of ['task00000001', 'task00000002']) expect(e.tasks.band(id)).toMatchObject({ basis: 'receipts', n: 6, lowMicros: 5_000_000, highMicros: 8_000_000 });
  });

  it('a reader of the band before then prices the task itself, once', () => {
    const e = estimator(6);
    e.estimates.priceLater(e.newTask('task00000001'));
    // The wall card's remaining work, GET /v1/tasks/<id> and a receipt read the kept band: it is there for them.
    expect(e.estimates.keptBand('task00000001')).toMatchObject({ basis: 'receipts', n: 6 });
    expect(e.estimates.bandOf('task00000001')).toMatchObject({ basis: 'receipts', n: 6 });
    expect(e.reads).toHaveLength(1);
    e.answered();
    expect(e.reads).toHaveLength(1);
  });

  it('with too few receipts the task keeps a labelled prior from its session\'s model, priced the same way', () => {
    const e = estimator(2);
    const task = e.newTask('task00000001');
    e.sessions.touch({ sessionId: 's1', harness: 'claude-code', at: T0, cwd: REPO, transcriptPath: null, model: 'claude-opus-5-5' });
    e.tasks.attach('s1', task.id, T0);
    e.estimates.priceLater(task);
    expect(e.tasks.band(task.id)).toBeNull();
    e.answered();
    expect(e.tasks.band(task.id)).toMatchObject({ basis: 'prior', n: 0, fit: null });
  });
});
