import { describe, expect, it } from 'vitest';
import { stepWall, type WallLife } from '../../core/lifecycle/wall.js';
import { stepTask } from '../../core/lifecycle/task.js';
import { stepHandoff } from '../../core/lifecycle/handoff.js';
import { stepJob } from '../../core/lifecycle/job.js';
import { newRun, stepRun, type RunEvent, type RunState } from '../../core/lifecycle/run.js';

/** What each reducer does beyond the state it moves to (SPEC.md's matrices are checked in tests/conformance). */
const T0 = Date.UTC(2026, 11, 2, 9, 0);
const MIN = 60_000;

const openWall: WallLife = { state: 'open', choice: null, choiceArg: null, chosenBy: null, chosenAtMs: null, closedAtMs: null };

function ok<S, F>(r: { ok: true; state: S; effects: F[] } | { ok: false; error: string }): { state: S; effects: F[] } {
  if (!r.ok) throw new Error(`refused: ${r.error}`);
  return { state: r.state, effects: r.effects };
}

describe('wall reducer', () => {
  it.each([
    ['a first choice cancels nothing', openWall, 'hold' as const, []],
    ['the same exit again cancels nothing', { ...openWall, state: 'chosen' as const, choice: 'hold' as const }, 'hold' as const, []],
    ['another exit cancels the one taken', { ...openWall, state: 'chosen' as const, choice: 'defer' as const }, 'continue' as const, [{ type: 'cancel-exit', exit: 'defer' }]],
  ])('%s', (_, from, exit, effects) => {
    const r = ok(stepWall(from, { type: 'choose', exit, arg: null, by: 'user' }, T0));
    expect(r.state).toMatchObject({ state: 'chosen', choice: exit, chosenBy: 'user', chosenAtMs: T0 });
    expect(r.effects).toEqual(effects);
  });

  it('reopening forgets the choice; closing keeps it and dates the close', () => {
    const chosen = ok(stepWall(openWall, { type: 'choose', exit: 'defer', arg: '30m', by: 'policy' }, T0)).state;
    expect(ok(stepWall(chosen, { type: 'reopen', why: 'cancelled' }, T0 + MIN)).state).toEqual(openWall);
    expect(ok(stepWall(chosen, { type: 'close', why: 'its exit ran' }, T0 + MIN)).state).toMatchObject({ state: 'closed', choice: 'defer', closedAtMs: T0 + MIN });
  });

  it('a closed wall refuses another answer in one line that says why', () => {
    const closed = { ...openWall, state: 'closed' as const };
    expect(stepWall(closed, { type: 'choose', exit: 'hold', arg: null, by: 'user' }, T0)).toEqual({
      ok: false,
      error: "a wall that is closed cannot take 'choose' — the wall is over; a new limit opens a new wall",
    });
  });
});

describe('task reducer', () => {
  it.each([
    ['finishing dates the end', { state: 'open' as const, endedAt: null }, 'finish' as const, { state: 'done', endedAt: T0 }],
    ['finishing a parked task ends it too', { state: 'parked' as const, endedAt: null }, 'finish' as const, { state: 'done', endedAt: T0 }],
    ['parking keeps no end', { state: 'open' as const, endedAt: null }, 'park' as const, { state: 'parked', endedAt: null }],
  ])('%s', (_, from, type, to) => {
    expect(ok(stepTask(from, { type }, T0)).state).toEqual(to);
  });

  it('a done task is not opened again', () => {
    const r = stepTask({ state: 'done', endedAt: T0 }, { type: 'resume' }, T0 + MIN);
    expect(r).toEqual({ ok: false, error: "a task that is done cannot take 'resume' — its receipt is written; start another with /sled task <title>" });
  });
});

describe('hand-off reducer', () => {
  it('a pickup mark names who and when', () => {
    expect(ok(stepHandoff({ state: 'sent', pickedUpBy: null, pickedUpAt: null }, { type: 'picked-up', by: 'dana' }, T0)).state).toEqual({ state: 'picked_up', pickedUpBy: 'dana', pickedUpAt: T0 });
  });
  it('a pickup under way is not expired by a prune', () => {
    expect(stepHandoff({ state: 'picking', pickedUpBy: null, pickedUpAt: null }, { type: 'expire' }, T0)).toMatchObject({ ok: false, error: expect.stringContaining('a pickup is under way') });
  });
});

describe('job reducer', () => {
  it('"not yet" moves the run time, counts the attempt and asks to be woken then', () => {
    const r = ok(stepJob({ state: 'scheduled', runAt: T0, attempts: 1 }, { type: 'retry', runAt: T0 + 5 * MIN, why: 'bar still full' }, T0));
    expect(r).toEqual({ state: { state: 'scheduled', runAt: T0 + 5 * MIN, attempts: 2 }, effects: [{ type: 'wake-at', at: T0 + 5 * MIN }] });
  });
  it('a job is not claimed before its time, and a claimed one runs', () => {
    expect(stepJob({ state: 'scheduled', runAt: T0 + 1, attempts: 0 }, { type: 'claim' }, T0).ok).toBe(false);
    expect(ok(stepJob({ state: 'scheduled', runAt: T0, attempts: 0 }, { type: 'claim' }, T0)).effects).toEqual([{ type: 'run' }]);
  });
  it('a running job cannot be cancelled', () => {
    expect(stepJob({ state: 'running', runAt: T0, attempts: 0 }, { type: 'cancel' }, T0)).toEqual({ ok: false, error: "a job that is running cannot take 'cancel' — it is running; only a scheduled job can be cancelled or run" });
  });
});

describe('run reducer', () => {
  function drive(events: Array<[number, RunEvent]>): RunState {
    return events.reduce((s, [at, e]) => ok(stepRun(s, e, at)).state, newRun(T0));
  }

  it('keeps the time in waits apart from the runtime, by the state it was spent in', () => {
    const run = drive([
      [T0 + 2 * MIN, { type: 'claim' }], // 2 min queued
      [T0 + 3 * MIN, { type: 'claimed' }],
      [T0 + 5 * MIN, { type: 'prepared' }],
      [T0 + 15 * MIN, { type: 'rate-limited', resetsAtMs: T0 + 75 * MIN }], // 10 min running
      [T0 + 75 * MIN, { type: 'limit-reset' }], // 60 min waiting for the limit
      [T0 + 80 * MIN, { type: 'question', questionId: 'q1' }],
      [T0 + 100 * MIN, { type: 'answered' }], // 20 min waiting for an answer
      [T0 + 110 * MIN, { type: 'turn-completed', sessionId: 's1' }],
      [T0 + 112 * MIN, { type: 'verified' }],
      [T0 + 172 * MIN, { type: 'merged' }], // 60 min waiting for the merge
    ]);
    expect(run).toMatchObject({ state: 'COMPLETED', reason: 'merged', sessionId: 's1', claims: 1, runtimeMs: (1 + 2 + 10 + 5 + 10 + 2) * MIN });
    expect(run.waitMs).toEqual({ queue: 2 * MIN, limit: 60 * MIN, input: 20 * MIN, merge: 60 * MIN, recovery: 0, asleep: 0 });
  });

  it('time the machine slept (a closed lid) is not runtime, and the run stays where it was', () => {
    const run = drive([
      [T0, { type: 'claim' }],
      [T0, { type: 'claimed' }],
      [T0 + MIN, { type: 'prepared' }], // 1 min preparing
      // The engine's last round was at +11 min; it woke at +191 min: 3 hours asleep, 10 minutes at work before it.
      [T0 + 191 * MIN, { type: 'slept', sinceMs: T0 + 11 * MIN }],
      [T0 + 196 * MIN, { type: 'turn-completed', sessionId: 's1' }], // 5 more at work
    ]);
    expect(run).toMatchObject({ state: 'VERIFYING', runtimeMs: (1 + 10 + 5) * MIN });
    expect(run.waitMs.asleep).toBe(180 * MIN);
    // A nap named before the state began counts only from its start; a run stored before the account existed starts it at 0.
    const running = drive([[T0, { type: 'claim' }], [T0, { type: 'claimed' }], [T0 + 2 * MIN, { type: 'prepared' }]]);
    const old = { ...running, waitMs: { queue: 0, limit: 0, input: 0, merge: 0, recovery: 0 } as typeof running.waitMs };
    const napped = ok(stepRun(old, { type: 'slept', sinceMs: T0 }, T0 + 62 * MIN)).state;
    expect(napped).toMatchObject({ state: 'RUNNING', runtimeMs: 2 * MIN, waitMs: { asleep: 60 * MIN } });
    expect(stepRun(drive([[T0, { type: 'claim' }]]), { type: 'slept', sinceMs: T0 }, T0 + MIN).ok).toBe(true);
    expect(stepRun(drive([]), { type: 'slept', sinceMs: T0 }, T0 + MIN)).toMatchObject({ ok: false });
  });

  it('the terminal reason is kept apart from the state', () => {
    const failed = drive([[T0 + MIN, { type: 'claim' }], [T0 + 2 * MIN, { type: 'fail', reason: 'the worktree could not be made' }]]);
    expect(failed).toMatchObject({ state: 'FAILED', reason: 'the worktree could not be made' });
    expect(stepRun(failed, { type: 'cancel', reason: 'by the user' }, T0 + 3 * MIN)).toEqual({ ok: false, error: "a run that is FAILED cannot take 'cancel' — it is over (the worktree could not be made)" });
  });

  it('effects: a limit asks to be woken at its reset, a question to be asked, a verified run to open its pull request', () => {
    const running = drive([[T0, { type: 'claim' }], [T0, { type: 'claimed' }], [T0, { type: 'prepared' }]]);
    expect(ok(stepRun(running, { type: 'rate-limited', resetsAtMs: T0 + 60 * MIN }, T0)).effects).toEqual([{ type: 'wake-at', at: T0 + 60 * MIN }]);
    expect(ok(stepRun(running, { type: 'question', questionId: 'q9' }, T0)).effects).toEqual([{ type: 'ask', questionId: 'q9' }]);
    const verifying = ok(stepRun(running, { type: 'turn-completed', sessionId: 's' }, T0)).state;
    expect(ok(stepRun(verifying, { type: 'verified' }, T0)).effects).toEqual([{ type: 'open-pull-request' }]);
  });

  it('a lost run goes to recovery, then back to the queue and is claimed again', () => {
    const run = drive([[T0, { type: 'claim' }], [T0, { type: 'claimed' }], [T0 + MIN, { type: 'lost' }], [T0 + 11 * MIN, { type: 'recovered' }], [T0 + 12 * MIN, { type: 'claim' }]]);
    expect(run).toMatchObject({ state: 'CLAIMING', claims: 2, runtimeMs: MIN });
    expect(run.waitMs).toMatchObject({ recovery: 10 * MIN, queue: MIN });
  });

  it('a run that cannot be prepared keeps why it needs a person, and a pull request sends its run back with why', () => {
    const lost = drive([[T0, { type: 'claim' }], [T0, { type: 'claimed' }], [T0, { type: 'lost', reason: "git: fatal: invalid reference: nope" }]]);
    expect(lost).toMatchObject({ state: 'RECOVERY_REQUIRED', problem: 'git: fatal: invalid reference: nope' });
    expect(ok(stepRun(lost, { type: 'recovered' }, T0)).state.problem).toBeNull();
    const awaiting = drive([[T0, { type: 'claim' }], [T0, { type: 'claimed' }], [T0, { type: 'prepared' }], [T0, { type: 'turn-completed', sessionId: 's1' }], [T0, { type: 'verified' }]]);
    const back = ok(stepRun(awaiting, { type: 'sent-back', why: 'check test failed' }, T0 + MIN));
    expect(back.state).toMatchObject({ state: 'RUNNING', problem: 'check test failed', sessionId: 's1' });
    expect(back.state.waitMs.merge).toBe(MIN);
    expect(stepRun(back.state, { type: 'sent-back', why: 'again' }, T0 + MIN).ok).toBe(false);
  });

  it('an event dated before the run entered its state is refused', () => {
    const r = stepRun(newRun(T0), { type: 'claim' }, T0 - 1);
    expect(r.ok).toBe(false);
  });
});
