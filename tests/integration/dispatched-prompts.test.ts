import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore, type Db } from '../../musher/store/db.js';
import { DispatchedPromptStore } from '../../musher/store/dispatched-prompts.js';
import { TaskStore } from '../../musher/store/tasks.js';
import { DISPATCH_CLAIM_MS } from '../../musher/picker/service.js';

const T0 = Date.UTC(2026, 4, 12, 9, 0);
const dirs: string[] = [];
const dbs: Db[] = [];
afterEach(() => {
  for (const db of dbs.splice(0)) if (db.open) db.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A store file, opened as musher opens it; `reopen` is a restart of musher on the same file. */
function storeFile(): { open(): { db: Db; claims: DispatchedPromptStore; tasks: TaskStore } } {
  const dir = mkdtempSync(join(tmpdir(), 'sleds-dispatch-'));
  dirs.push(dir);
  return {
    open: () => {
      const db = openStore(join(dir, 'sleds.db'));
      dbs.push(db);
      return { db, claims: new DispatchedPromptStore(db), tasks: new TaskStore(db) };
    },
  };
}

describe('dispatched prompts', () => {
  it('a claim outlives a restart, is taken once, and expires DISPATCH_CLAIM_MS after the Dispatch on musher\'s clock', () => {
    const file = storeFile();
    const first = file.open();
    for (const id of ['task00000001', 'task00000002']) first.tasks.create({ id, title: id, source: 'prompt', at: T0 });
    first.claims.put('Fix the flaky login test', 'task00000001', T0 + DISPATCH_CLAIM_MS);
    first.claims.put('Tidy the README', 'task00000002', T0 + DISPATCH_CLAIM_MS);
    first.db.close();

    const again = file.open();
    expect(again.claims.take('Some other prompt', T0 + 1000)).toBeNull();
    expect(again.claims.take('Fix the flaky login test', T0 + DISPATCH_CLAIM_MS)).toBe('task00000001');
    expect(again.claims.take('Fix the flaky login test', T0 + DISPATCH_CLAIM_MS)).toBeNull();
    expect(again.claims.take('Tidy the README', T0 + DISPATCH_CLAIM_MS + 1)).toBeNull();
  });

  it('dispatching the same prompt again moves it to the later task and deadline', () => {
    const { claims, tasks } = storeFile().open();
    for (const id of ['task00000001', 'task00000002']) tasks.create({ id, title: id, source: 'prompt', at: T0 });
    claims.put('Fix it', 'task00000001', T0 + DISPATCH_CLAIM_MS);
    claims.put('Fix it', 'task00000002', T0 + 2 * DISPATCH_CLAIM_MS);
    expect(claims.take('Fix it', T0 + DISPATCH_CLAIM_MS + 1)).toBe('task00000002');
  });
});
