import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore, type Db } from '../../musher/store/db.js';
import { LifecycleEvents, TransitionRefused } from '../../musher/store/lifecycle-events.js';
import { TaskStore } from '../../musher/store/tasks.js';
import { WallBook } from '../../musher/store/wall-book.js';
import { JobStore } from '../../musher/store/jobs.js';
import { HandoffStore } from '../../musher/store/handoffs.js';
import { stepTask, type TaskLife } from '../../core/lifecycle/task.js';

/** The stores move a life cycle only through its reducer: a conditional UPDATE plus one row in lifecycle_events. */
const T = Date.UTC(2026, 11, 2, 9);
const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

function store(): Db {
  const dir = mkdtempSync(join(tmpdir(), 'sl-life-'));
  const db = openStore(join(dir, 'sleds.db'));
  cleanups.push(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return db;
}

const wall = (wallId: string) => ({ wallId, sessionId: 's1', harness: 'claude-code' as const, window: 'five_hour', resetsAtMs: T + 3_600_000, hitAtMs: T, signal: 'test', context: {} as never, offers: [], decision: null });
const moves = (events: LifecycleEvents, kind: 'wall' | 'task' | 'job' | 'handoff', id: string) => events.forEntity(kind, id).map((e) => [e.eventType, e.fromState, e.toState]);

describe('life cycles in the store', () => {
  it('a wall: each move is one event with the wall as its correlation id; a closed wall refuses a second answer and writes nothing', () => {
    const db = store();
    const book = new WallBook(db);
    const events = new LifecycleEvents(db);
    book.open(wall('jd7k2m9qa45p'));
    expect(book.choose('jd7k2m9qa45p', { exit: 'defer', arg: null, by: 'user', rule: null, at: T + 1 })).toEqual({ ok: true });
    expect(book.choose('jd7k2m9qa45p', { exit: 'hold', arg: null, by: 'user', rule: null, at: T + 2 })).toEqual({ ok: true });
    expect(book.close('jd7k2m9qa45p', T + 3, 'its exit ran')).toEqual({ ok: true });
    const storyBefore = book.events('jd7k2m9qa45p');

    const again = book.choose('jd7k2m9qa45p', { exit: 'continue', arg: null, by: 'user', rule: null, at: T + 4 });
    expect(again).toEqual({ ok: false, error: "wall jd7k2m9qa45p: a wall that is closed cannot take 'choose' — the wall is over; a new limit opens a new wall" });
    expect(book.close('jd7k2m9qa45p', T + 5, 'the window reset').ok).toBe(false);
    expect(book.get('jd7k2m9qa45p')).toMatchObject({ state: 'closed', choice: 'hold', closedAtMs: T + 3 });
    expect(book.events('jd7k2m9qa45p')).toEqual(storyBefore);
    expect(moves(events, 'wall', 'jd7k2m9qa45p')).toEqual([
      ['created', null, 'open'],
      ['choose', 'open', 'chosen'],
      ['choose', 'chosen', 'chosen'],
      ['close', 'chosen', 'closed'],
    ]);
    expect(events.byCorrelation('jd7k2m9qa45p')).toHaveLength(4);
    expect(events.forEntity('wall', 'jd7k2m9qa45p')[1]).toMatchObject({ at: T + 1, payload: { exit: 'defer', arg: null, by: 'user' } });
  });

  it('a task: parked, resumed, done; asking for the state it has is no move; a done task is never opened again', () => {
    const db = store();
    const tasks = new TaskStore(db);
    const events = new LifecycleEvents(db);
    tasks.create({ id: 'k3m9x2qa45pz', title: 'Fix the login test', source: 'prompt', at: T });
    tasks.update('k3m9x2qa45pz', { state: 'parked' }, T + 1);
    tasks.update('k3m9x2qa45pz', { state: 'open', worth: 'high' }, T + 2);
    tasks.update('k3m9x2qa45pz', { state: 'open' }, T + 3);
    tasks.setState('k3m9x2qa45pz', 'done', T + 4);
    expect(tasks.get('k3m9x2qa45pz')).toMatchObject({ state: 'done', worth: 'high', endedAt: T + 4, updatedAt: T + 4 });

    expect(() => tasks.update('k3m9x2qa45pz', { state: 'open', title: 'Reopened' }, T + 5)).toThrow(TransitionRefused);
    expect(() => tasks.update('k3m9x2qa45pz', { state: 'open' }, T + 5)).toThrow(
      "task k3m9x2qa45pz: a task that is done cannot take 'resume' — its receipt is written; start another with /sled task <title>",
    );
    // Refused whole: neither the state nor the title nor the time changed.
    expect(tasks.get('k3m9x2qa45pz')).toMatchObject({ state: 'done', title: 'Fix the login test', endedAt: T + 4, updatedAt: T + 4 });
    expect(moves(events, 'task', 'k3m9x2qa45pz')).toEqual([
      ['created', null, 'open'],
      ['park', 'open', 'parked'],
      ['resume', 'parked', 'open'],
      ['finish', 'open', 'done'],
    ]);
  });

  it('a move from a state the row no longer has changes nothing: "moved meanwhile", and no event is appended', () => {
    const db = store();
    const tasks = new TaskStore(db);
    const events = new LifecycleEvents(db);
    tasks.create({ id: 'k3m9x2qa45pz', title: 'Fix it', source: 'prompt', at: T });
    const seen: TaskLife = { state: 'open', endedAt: null }; // read before another writer parked it
    tasks.update('k3m9x2qa45pz', { state: 'parked' }, T + 1);
    const late = events.apply({
      kind: 'task',
      id: 'k3m9x2qa45pz',
      correlationId: 'k3m9x2qa45pz',
      event: { type: 'finish' as const },
      at: T + 2,
      read: () => seen,
      step: stepTask,
      write: (from, to) => db.prepare(`UPDATE tasks SET state = ?, ended_at = ? WHERE id = ? AND state = ?`).run(to.state, to.endedAt, 'k3m9x2qa45pz', from.state).changes,
    });
    expect(late).toEqual({ ok: false, error: 'task k3m9x2qa45pz was moved from open meanwhile — nothing changed; look at it again' });
    expect(tasks.get('k3m9x2qa45pz')!.state).toBe('parked');
    expect(events.forEntity('task', 'k3m9x2qa45pz').map((e) => e.eventType)).toEqual(['created', 'park']);
  });

  it('the event table is append-only', () => {
    const db = store();
    new TaskStore(db).create({ id: 'k3m9x2qa45pz', title: 'Fix it', source: 'prompt', at: T });
    expect(() => db.prepare(`UPDATE lifecycle_events SET to_state = 'done'`).run()).toThrow(/append-only/);
    expect(() => db.prepare(`DELETE FROM lifecycle_events`).run()).toThrow(/append-only/);
    expect(new LifecycleEvents(db).forEntity('task', 'k3m9x2qa45pz')).toHaveLength(1);
  });

  it("a job and a hand-off of a wall: their moves carry the wall's id, so the wall's whole story reads in one query", () => {
    const db = store();
    const book = new WallBook(db);
    const jobs = new JobStore(db);
    const handoffs = new HandoffStore(db);
    const events = new LifecycleEvents(db);
    book.open(wall('jd7k2m9qa45p'));
    const job = jobs.insert({ kind: 'defer', wallId: 'jd7k2m9qa45p', sessionId: 's1', runAt: T + 60_000, payload: {} }, T);
    expect(jobs.claim(job.id, T + 59_999)).toBe(false); // not due yet
    expect(jobs.claim(job.id, T + 60_000)).toBe(true);
    expect(jobs.cancel(job.id, 'by the user', T + 60_001)).toBe(false); // running: only a scheduled job can be cancelled
    expect(jobs.finish(job.id, { ok: true, summary: 'resumed' }, T + 70_000)).toBe(true);
    expect(jobs.finish(job.id, { ok: false, summary: 'twice' }, T + 70_001)).toBe(false);
    expect(jobs.get(job.id)).toMatchObject({ state: 'done', result: { ok: true, summary: 'resumed' } });
    expect(moves(events, 'job', job.id)).toEqual([
      ['created', null, 'scheduled'],
      ['claim', 'scheduled', 'running'],
      ['finish', 'running', 'done'],
    ]);

    handoffs.record({ id: 'k7m2n9pq4rst', direction: 'sent', wallId: 'jd7k2m9qa45p', sessionId: 's1', harness: 'claude-code', peer: 'dana', createdAt: T, expiresAt: T + 86_400_000, transport: 'git', ref: null, branch: null, state: 'sending', note: null });
    expect(handoffs.pickedUp('k7m2n9pq4rst', 'dana', T + 1)).toBe(false); // not sent yet
    expect(handoffs.sent('k7m2n9pq4rst', 'refs/sleds/handoffs/k7m2n9pq4rst', null, null, T + 2)).toBe(true);
    expect(handoffs.pickedUp('k7m2n9pq4rst', 'dana', T + 3)).toBe(true);
    expect(handoffs.get('k7m2n9pq4rst')).toMatchObject({ state: 'picked_up', pickedUpBy: 'dana', pickedUpAt: T + 3 });
    expect(events.byCorrelation('jd7k2m9qa45p').map((e) => `${e.entityKind} ${e.eventType}`)).toEqual([
      'wall created',
      'job created',
      'job claim',
      'job finish',
      'handoff created',
      'handoff pushed',
      'handoff picked-up',
    ]);
  });

  it('a pickup under way is not expired by a prune; an undone pickup leaves no row but its event', () => {
    const db = store();
    const handoffs = new HandoffStore(db);
    const events = new LifecycleEvents(db);
    const pickup = { id: 'p1ck2m9qa45p', wallId: null, sessionId: 's9', harness: 'claude-code', peer: 'sam', createdAt: T, expiresAt: T + 1, transport: 'git', ref: null, branch: null, note: '{}' };
    handoffs.beginPickup(pickup, T + 10);
    expect(handoffs.setState('p1ck2m9qa45p', 'expired', T + 11)).toBe(false);
    expect(handoffs.get('p1ck2m9qa45p')?.state).toBe('picking');
    expect(handoffs.dropPickup('p1ck2m9qa45p', T + 12)).toBe(true);
    expect(handoffs.get('p1ck2m9qa45p')).toBeNull();
    handoffs.beginPickup(pickup, T + 13);
    expect(handoffs.finishPickup('p1ck2m9qa45p', '{"done":true}', T + 14)).toBe(true);
    expect(handoffs.finishPickup('p1ck2m9qa45p', '{"done":true}', T + 15)).toBe(false);
    expect(moves(events, 'handoff', 'p1ck2m9qa45p')).toEqual([
      ['created', null, 'picking'],
      ['pickup-undone', 'picking', 'undone'],
      ['created', null, 'picking'],
      ['pickup-finished', 'picking', 'received'],
    ]);
  });
});
