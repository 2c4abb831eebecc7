import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore, type Db } from '../../musher/store/db.js';
import { JobStore } from '../../musher/store/jobs.js';
import { Scheduler, type JobHandler, type Precheck } from '../../musher/scheduler/scheduler.js';
import type { Timers } from '../../musher/timers.js';
import type { Job, JobResult } from '../../musher/scheduler/job.js';
import type { Log } from '../../musher/log.js';
import { requestMusher } from '../../hooks/musher-client.js';
import { disposeWorld, makeWorld, sleds, startMusher, stopMusher, waitFor, type SledsWorld } from '../support/sleds-env.js';
import { writeSledsConfig } from '../support/sleds-config.js';

/** The scheduler over a real SQLite file, with a test clock and a timer the test fires by hand. */

const T0 = Date.UTC(2026, 5, 10, 14, 0);
const MIN = 60_000;

const cleanups: Array<() => void | Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function dbFile(): string {
  const dir = mkdtempSync(join(tmpdir(), 'sl-jobs-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return join(dir, 'sleds.db');
}

function open(file: string): Db {
  const db = openStore(file);
  cleanups.push(() => {
    if (db.open) db.close();
  });
  return db;
}

class TestClock {
  constructor(public ms: number) {}
  now(): number {
    return this.ms;
  }
}

/** Holds the one armed callback; `fire()` runs it as the real timer would. */
class ManualTimer implements Timers {
  pending: { fn: () => void; ms: number } | null = null;
  setTimeout(fn: () => void, ms: number): unknown {
    this.pending = { fn, ms };
    return this.pending;
  }
  clearTimeout(h: unknown): void {
    if (this.pending === h) this.pending = null;
  }
  fire(): void {
    const p = this.pending;
    this.pending = null;
    p?.fn();
  }
}

const lines: string[] = [];
const log: Log = { info: (m) => lines.push(m), warn: (m) => lines.push(m), error: (m) => lines.push(m) };

/** A handler that records every run; its result can be set per test. */
function recorder(result: JobResult = { ok: true, summary: 'resumed in its tmux pane' }) {
  const runs: Job[] = [];
  const handler: JobHandler = {
    async run(job) {
      runs.push(job);
      return result;
    },
  };
  return { runs, handler };
}

function makeScheduler(db: Db, clock: TestClock, handler: JobHandler, extra: { precheck?: Precheck; maxChecks?: number; timer?: ManualTimer } = {}) {
  const timer = extra.timer ?? new ManualTimer();
  const scheduler = new Scheduler({
    store: new JobStore(db),
    clock,
    log,
    timer,
    handlers: { hold: handler, defer: handler },
    precheck: extra.precheck,
    maxChecks: extra.maxChecks,
  });
  scheduler.start();
  cleanups.push(() => scheduler.stop());
  return { scheduler, timer };
}

const payload = { harness: 'claude-code', sessionId: 'sess-1', cwd: '/w', prompt: 'continue' };

describe('scheduler', () => {
  it('runs a due job once, not before', async () => {
    const clock = new TestClock(T0);
    const { runs, handler } = recorder();
    const { scheduler } = makeScheduler(open(dbFile()), clock, handler);
    const job = scheduler.schedule({ kind: 'hold', sessionId: 'sess-1', wallId: 'w7k2', runAt: T0 + 10 * MIN, payload });
    expect(job).toMatchObject({ state: 'scheduled', attempts: 0, runAt: T0 + 10 * MIN });
    expect(job.id).toMatch(/^[2-9a-km-np-z]{8}$/);

    await scheduler.tick(T0);
    clock.ms = T0 + 10 * MIN - 1;
    await scheduler.tick(clock.ms);
    expect(runs).toHaveLength(0);
    expect(scheduler.get(job.id)!.state).toBe('scheduled');

    clock.ms = T0 + 10 * MIN;
    await Promise.all([scheduler.tick(clock.ms), scheduler.tick(clock.ms)]);
    await scheduler.tick(clock.ms + MIN);
    expect(runs.map((j) => j.id)).toEqual([job.id]);
    expect(runs[0]!.state).toBe('running');
    expect(scheduler.get(job.id)).toMatchObject({
      state: 'done',
      startedAt: T0 + 10 * MIN,
      finishedAt: T0 + 10 * MIN,
      result: { ok: true, summary: 'resumed in its tmux pane' },
    });
  });

  it('sleeps until the next due job, at most a minute, and re-arms on schedule and cancel', async () => {
    const clock = new TestClock(T0);
    const { runs, handler } = recorder();
    const { scheduler, timer } = makeScheduler(open(dbFile()), clock, handler);
    expect(timer.pending).toBeNull();

    const far = scheduler.schedule({ kind: 'defer', runAt: T0 + 3 * 3_600_000, payload });
    expect(timer.pending?.ms).toBe(60_000);
    const near = scheduler.schedule({ kind: 'hold', runAt: T0 + 30_000, payload });
    expect(timer.pending?.ms).toBe(30_000);
    expect(scheduler.cancel(near.id).ok).toBe(true);
    expect(timer.pending?.ms).toBe(60_000);

    // The capped sleep ends early: nothing due, armed again for what is left.
    clock.ms = T0 + 60_000;
    timer.fire();
    await scheduler.idle();
    expect(runs).toHaveLength(0);
    expect(timer.pending?.ms).toBe(60_000);

    clock.ms = T0 + 3 * 3_600_000 - 10_000;
    timer.fire();
    await scheduler.idle();
    expect(timer.pending?.ms).toBe(10_000);
    clock.ms += 10_000;
    timer.fire();
    await waitUntil(() => scheduler.get(far.id)!.state === 'done');
    expect(runs.map((j) => j.id)).toEqual([far.id]);
    expect(timer.pending).toBeNull();
  });

  it('a job survives a musher restart: an overdue job runs once at start', async () => {
    const file = dbFile();
    const clock = new TestClock(T0);
    const first = recorder();
    const db1 = open(file);
    const a = makeScheduler(db1, clock, first.handler);
    const job = a.scheduler.schedule({ kind: 'hold', sessionId: 'sess-1', runAt: T0 + 3_600_000, payload });
    a.scheduler.stop();
    db1.close();

    // musher was away when it was due; the next one starts two hours later.
    clock.ms = T0 + 2 * 3_600_000;
    const second = recorder();
    const b = makeScheduler(open(file), clock, second.handler);
    expect(b.timer.pending?.ms).toBe(0);
    b.timer.fire();
    await waitUntil(() => b.scheduler.get(job.id)!.state === 'done');
    // A third musher (or a second one racing on the same file) finds nothing left to run.
    const third = recorder();
    const c = makeScheduler(open(file), clock, third.handler);
    await c.scheduler.tick(clock.ms);
    expect(first.runs).toHaveLength(0);
    expect(second.runs.map((j) => j.id)).toEqual([job.id]);
    expect(third.runs).toHaveLength(0);
  });

  it('two mushers ticking the same file at once run a job once', async () => {
    const file = dbFile();
    const clock = new TestClock(T0);
    const shared: Job[] = [];
    const handler: JobHandler = {
      async run(job) {
        shared.push(job);
        return { ok: true, summary: 'ran' };
      },
    };
    const a = makeScheduler(open(file), clock, handler);
    const b = makeScheduler(open(file), clock, handler);
    const jobs = [1, 2, 3, 4, 5].map((i) => a.scheduler.schedule({ kind: 'defer', runAt: T0 + i, payload }));
    clock.ms = T0 + 10;
    await Promise.all([a.scheduler.tick(clock.ms), b.scheduler.tick(clock.ms), a.scheduler.tick(clock.ms), b.scheduler.tick(clock.ms)]);
    expect(shared.map((j) => j.id).sort()).toEqual(jobs.map((j) => j.id).sort());
  });

  it('a job found running at start is followed, never run again; without a handle it is marked failed', async () => {
    const file = dbFile();
    const clock = new TestClock(T0);
    const db = open(file);
    const store = new JobStore(db);
    const withHandle = store.insert({ kind: 'defer', runAt: T0, payload }, T0);
    const bare = store.insert({ kind: 'defer', runAt: T0, payload }, T0);
    expect(store.claim(withHandle.id, T0) && store.claim(bare.id, T0)).toBe(true);
    store.setHandle(withHandle.id, { pid: 4242, logFile: '/x.out' }, T0);

    const ran: string[] = [];
    const followed: string[] = [];
    const handler: JobHandler = {
      async run(job) {
        ran.push(job.id);
        return { ok: true, summary: 'ran again?!' };
      },
      recover(job) {
        if (!job.handle) return null;
        followed.push(job.id);
        return Promise.resolve({ ok: true, summary: 'ran headless: Done.' });
      },
    };
    clock.ms = T0 + MIN;
    const { scheduler } = makeScheduler(db, clock, handler);
    await scheduler.idle();
    expect(ran).toEqual([]);
    expect(followed).toEqual([withHandle.id]);
    expect(scheduler.get(withHandle.id)).toMatchObject({ state: 'done', result: { summary: 'ran headless: Done.' } });
    expect(scheduler.get(bare.id)).toMatchObject({ state: 'failed', result: { ok: false, summary: expect.stringContaining('not started again so it cannot run twice') } });
  });

  it('cancel: a cancelled job does not run; a finished or unknown one cannot be cancelled; cancelForWall takes only that wall', async () => {
    const clock = new TestClock(T0);
    const { runs, handler } = recorder();
    const { scheduler } = makeScheduler(open(dbFile()), clock, handler);
    const a = scheduler.schedule({ kind: 'hold', wallId: 'wa', runAt: T0 + MIN, payload });
    const b = scheduler.schedule({ kind: 'defer', wallId: 'wa', runAt: T0 + 2 * MIN, payload });
    const c = scheduler.schedule({ kind: 'defer', wallId: 'wb', runAt: T0 + 2 * MIN, payload });
    const d = scheduler.schedule({ kind: 'hold', runAt: T0, payload });
    await scheduler.tick(T0);
    expect(scheduler.get(d.id)!.state).toBe('done');

    expect(scheduler.cancel(a.id)).toMatchObject({ ok: true, job: { state: 'cancelled', result: { ok: false, summary: 'cancelled' } } });
    expect(scheduler.cancel(a.id)).toEqual({ ok: false, error: `job ${a.id} is cancelled, so it cannot be cancelled — only a scheduled job can` });
    expect(scheduler.cancel(d.id)).toEqual({ ok: false, error: `job ${d.id} is done, so it cannot be cancelled — only a scheduled job can` });
    expect(scheduler.cancel('nosuch')).toEqual({ ok: false, error: "no job 'nosuch' — 'sleds jobs' lists them" });
    expect(scheduler.cancelForWall('wa').map((j) => j.id)).toEqual([b.id]);

    clock.ms = T0 + 5 * MIN;
    await scheduler.tick(clock.ms);
    expect(runs.map((j) => j.id)).toEqual([d.id, c.id]);
    expect(scheduler.list().map((j) => [j.id, j.state])).toEqual(
      expect.arrayContaining([
        [a.id, 'cancelled'],
        [b.id, 'cancelled'],
        [c.id, 'done'],
        [d.id, 'done'],
      ]),
    );
  });

  it('a cancel that lands while the precheck is out wins', async () => {
    const clock = new TestClock(T0);
    const { runs, handler } = recorder();
    let release: () => void = () => undefined;
    const gate = new Promise<void>((r) => (release = r));
    const { scheduler } = makeScheduler(open(dbFile()), clock, handler, {
      precheck: async () => {
        await gate;
        return { go: true };
      },
    });
    const job = scheduler.schedule({ kind: 'hold', runAt: T0, payload });
    const ticking = scheduler.tick(T0);
    expect(scheduler.cancel(job.id).ok).toBe(true);
    release();
    await ticking;
    expect(runs).toHaveLength(0);
    expect(scheduler.get(job.id)!.state).toBe('cancelled');
  });

  it('precheck: "not yet" moves the job to the time it names; it runs once the check passes', async () => {
    const clock = new TestClock(T0);
    const { runs, handler } = recorder();
    let barDropped = false;
    const { scheduler, timer } = makeScheduler(open(dbFile()), clock, handler, {
      precheck: (job) => (barDropped ? { go: true } : { go: false, retryAtMs: clock.now() + 5 * MIN, why: `5-hour bar still at 100% (job ${job.kind})` }),
    });
    const job = scheduler.schedule({ kind: 'hold', runAt: T0, payload });
    await scheduler.tick(T0);
    expect(scheduler.get(job.id)).toMatchObject({ state: 'scheduled', attempts: 1, runAt: T0 + 5 * MIN, lastCheck: '5-hour bar still at 100% (job hold)' });
    expect(timer.pending?.ms).toBe(60_000);

    clock.ms = T0 + 5 * MIN;
    barDropped = true;
    await scheduler.tick(clock.ms);
    expect(runs).toHaveLength(1);
    expect(scheduler.get(job.id)).toMatchObject({ state: 'done', attempts: 1 });
  });

  it('precheck: gives up after N refusals with the last reason; a precheck that throws counts as "not yet"', async () => {
    const clock = new TestClock(T0);
    const { runs, handler } = recorder();
    let calls = 0;
    const { scheduler } = makeScheduler(open(dbFile()), clock, handler, {
      maxChecks: 3,
      precheck: () => {
        calls++;
        if (calls === 2) throw new Error('usage endpoint unreachable');
        return { go: false, retryAtMs: clock.now() - 1, why: 'weekly bar still at 100%' };
      },
    });
    const job = scheduler.schedule({ kind: 'defer', runAt: T0, payload });
    for (let i = 0; i < 5; i++) {
      await scheduler.tick(clock.ms);
      clock.ms += 2 * MIN;
    }
    expect(runs).toHaveLength(0);
    expect(calls).toBe(3);
    const done = scheduler.get(job.id)!;
    expect(done).toMatchObject({ state: 'failed', attempts: 3, result: { ok: false, summary: 'gave up after 3 checks: weekly bar still at 100%' } });
    expect(lines).toContain(`job ${job.id}: gave up after 3 checks: weekly bar still at 100%`);
    expect(lines.some((l) => l.includes('not yet (precheck failed: usage endpoint unreachable)'))).toBe(true);
  });

  it('a handler that throws fails the job with its message', async () => {
    const clock = new TestClock(T0);
    const { scheduler } = makeScheduler(open(dbFile()), clock, {
      async run() {
        throw new Error('tmux exploded');
      },
    });
    const job = scheduler.schedule({ kind: 'hold', runAt: T0, payload });
    await scheduler.tick(T0);
    expect(scheduler.get(job.id)).toMatchObject({ state: 'failed', result: { ok: false, summary: 'failed: tmux exploded' } });
    expect(() => scheduler.schedule({ kind: 'overnight', runAt: T0, payload })).toThrow("no handler for jobs of kind 'overnight'");
  });

  it('results not yet shown are listed once per session until marked reported', async () => {
    const clock = new TestClock(T0);
    const { handler } = recorder({ ok: true, summary: 'ran headless: Done.' });
    const db = open(dbFile());
    const { scheduler } = makeScheduler(db, clock, handler);
    const mine = scheduler.schedule({ kind: 'defer', sessionId: 'sess-1', runAt: T0, payload });
    scheduler.schedule({ kind: 'defer', sessionId: 'sess-2', runAt: T0, payload });
    await scheduler.tick(T0);
    const store = new JobStore(db);
    expect(store.unreported('sess-1').map((j) => j.id)).toEqual([mine.id]);
    expect(store.unreported()).toHaveLength(2);
    expect(store.markReported(mine.id, T0)).toBe(true);
    expect(store.markReported(mine.id, T0)).toBe(false);
    expect(store.unreported('sess-1')).toEqual([]);
  });
});

function waitUntil(check: () => boolean): Promise<true> {
  return waitFor('the job to finish', () => check() || null, 5000);
}

describe('jobs through musher: the API and sleds jobs', () => {
  let world: SledsWorld;
  afterEach(async () => {
    if (world) await disposeWorld(world);
  });

  const post = (path: string, body: unknown) => requestMusher(world.socket, 'POST', path, body === null ? null : JSON.stringify(body), { 'content-type': 'application/json' }, 5000);

  it('schedules a resume for "+2h", lists it, cancels it, and keeps no env in the payload', async () => {
    world = makeWorld();
    writeSledsConfig(world, { binaries: { claude: '/nonexistent/claude' } });
    await startMusher(world);
    const res = await post('/v1/jobs', {
      kind: 'hold',
      when: '+2h',
      wallId: 'jd7k2m9qa41p',
      payload: { harness: 'claude-code', sessionId: '1098c2f4-aaaa-bbbb-cccc-000000000001', cwd: '/w/p', prompt: 'continue', env: { ANTHROPIC_API_KEY: 'sk-ant-SECRET' } },
    });
    expect(res.status).toBe(201);
    const job = (JSON.parse(res.body) as { job: Job }).job;
    expect(job.runAt - Date.now()).toBeGreaterThan(2 * 3_600_000 - 60_000);
    expect(job.runAt - Date.now()).toBeLessThanOrEqual(2 * 3_600_000);
    expect(job.sessionId).toBe('1098c2f4-aaaa-bbbb-cccc-000000000001');

    const listed = await sleds(world, ['jobs']);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(new RegExp(`^${job.id}  hold claude 1098c2f4 wall jd7k2m9qa41p\\s+at \\d{1,2}:\\d{2}[ap]m \\(in (2h|1\\d\\dm)\\)\\s+scheduled\\s*$`, 'm'));
    const asJson = await sleds(world, ['jobs', '--json']);
    expect(asJson.stdout).not.toContain('SECRET');
    expect(JSON.parse(asJson.stdout).jobs[0]).toMatchObject({ id: job.id, state: 'scheduled', kind: 'hold', payload: { where: 'pane-else-headless' } });

    const cancelled = await sleds(world, ['jobs', 'cancel', job.id]);
    expect(cancelled).toMatchObject({ code: 0, stdout: `Cancelled job ${job.id}: it will not run.\n` });
    const again = await sleds(world, ['jobs', 'cancel', job.id]);
    expect(again.code).toBe(1);
    expect(again.stderr).toBe(`sleds: job ${job.id} is cancelled, so it cannot be cancelled — only a scheduled job can\n`);
    expect((await sleds(world, ['jobs'])).stdout).toMatch(new RegExp(`^${job.id} .* cancelled\\s+cancelled by the user$`, 'm'));
  });

  it('refuses a bad time or payload with one line, and runs an overdue job at once with a clear failure when claude is missing', async () => {
    world = makeWorld();
    writeSledsConfig(world, { binaries: { claude: '/nonexistent/claude' } });
    await startMusher(world);
    const bad = await post('/v1/jobs', { kind: 'hold', when: 'soonish', payload: { harness: 'claude-code', sessionId: 's', cwd: '/w' } });
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.body).error).toBe("can't read 'soonish' as a time — e.g. +2h, +1h30m, 15:40, 3:40pm, tomorrow 9am or 2026-03-08T09:00");
    const noPayload = await post('/v1/jobs', { kind: 'defer', runAt: 0, payload: { harness: 'gemini', sessionId: 's', cwd: '/w' } });
    expect(noPayload.status).toBe(400);
    expect(JSON.parse(noPayload.body).error).toMatch(/^payload: harness/);

    const due = await post('/v1/jobs', { kind: 'defer', runAt: Date.now() - 1000, payload: { harness: 'claude-code', sessionId: 's', cwd: world.root, where: 'headless' } });
    const id = (JSON.parse(due.body) as { job: Job }).job.id;
    const listed = await waitForJob(world, id, (j) => j.state === 'failed');
    expect(listed.result?.summary).toBe('no claude binary found — install it or set binaries.claude in config.yml');
    expect((await sleds(world, ['jobs'])).stdout).toMatch(new RegExp(`^${id}  defer claude s .* failed\\s+no claude binary found`, 'm'));
  });

  it('sleds jobs says so when musher is away, and when there is nothing', async () => {
    world = makeWorld();
    const away = await sleds(world, ['jobs'], undefined, { SLEDS_NO_AUTOSTART: '1' });
    expect(away.code).toBe(1);
    expect(away.stderr).toContain("musher is not running — start it with 'sleds musher start'");
    await startMusher(world);
    expect((await sleds(world, ['jobs'])).stdout).toBe('No jobs: nothing is held, deferred or waiting to resume.\n');
    await stopMusher(world);
  });
});

function waitForJob(world: SledsWorld, id: string, done: (j: Job) => boolean): Promise<Job> {
  return waitFor(`job ${id}`, async () => {
    const r = await sleds(world, ['jobs', '--json']);
    const job = (JSON.parse(r.stdout) as { jobs: Job[] }).jobs.find((j) => j.id === id);
    return job && done(job) ? job : null;
  });
}
