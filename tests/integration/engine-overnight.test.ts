/**
 * Overnight nodes in the engine (issue 15 § 1–4) on real parts: the night's window, the cap, and the half-price tier's
 * environment handed to the node's harness. Real git, SQLite and processes (the test-only "plain" agent); the
 * gateway's metering is the platform-key rail on the same store, as the gateway writes it.
 */
import { existsSync, rmSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseRouteFile } from '../../musher/engine/route-yaml.js';
import { PlatformKeyStore } from '../../musher/store/platform-key.js';
import type { MintBatchToken } from '../../musher/engine/night-tier.js';
import { git } from '../support/route-repo.js';
import { SLUG, useEngineWorlds, type World } from '../support/engine-world.js';
import { LifecycleEvents } from '../../musher/store/lifecycle-events.js';
import { waitFor } from '../support/sleds-env.js';

const { world, cleanups } = useEngineWorlds();

const HOUR = 3_600_000;
/** 22:00–06:00 UTC, the night in progress at `now`, else the next one. */
function nightAt(capMicros: number, concurrency = 1) {
  return (now: number) => {
    const day = Math.floor(now / (24 * HOUR)) * 24 * HOUR;
    for (const start of [day - 2 * HOUR, day + 22 * HOUR]) if (now < start + 8 * HOUR) return { startMs: start, endMs: start + 8 * HOUR, capMicros, concurrency };
    return null;
  };
}
const at = (day: number, hour: number, minute = 0) => Date.UTC(2026, 11, day, hour, minute);

function tokens() {
  const asked: Array<{ sessionId: string; project: string | null; ttlMs: number }> = [];
  const mint: MintBatchToken = async (req) => {
    asked.push(req);
    return { ok: true, token: 'sleds_gw_night_token', baseUrl: 'http://127.0.0.1:4999', openaiBaseUrl: 'http://127.0.0.1:4999/v1' };
  };
  return { asked, mint };
}

const envLines = (w: World) => readFileSync(join(w.plainHome, 'env.log'), 'utf8').trim().split('\n');

describe('overnight nodes: the window, the half-price tier, the cap', { timeout: 120_000 }, () => {
  it('an overnight node waits for the window (saying so) while a daytime one lands, then runs pointed at the batch tier', async () => {
    const t = tokens();
    const w = await world({
      night: nightAt(12_000_000),
      mintBatchToken: t.mint,
      route: `title: t
nodes:
  - id: job
    overnight: true
    band: { low_usd: 4, high_usd: 10, low_min: 20, high_min: 60, confidence: 0.5 }
    brief: "@write night.txt by night"
  - id: day
    brief: "@write day.txt by day"
`,
    });
    await w.until(() => w.state('day') === 'AWAITING_MERGE', 'the daytime node awaits its merge');
    expect(w.state('job')).toBe('QUEUED');
    expect(w.log).toContain('eng-503/job: overnight — the window opens at 22:00 UTC');
    // Said once, not every round.
    expect(w.log.filter((l) => l.startsWith('eng-503/job: overnight'))).toHaveLength(1);
    expect(t.asked).toEqual([]);

    w.clock.t = at(2, 22, 0);
    await w.until(() => w.state('job') === 'AWAITING_MERGE', 'the overnight node ran and awaits its merge');
    expect(git(w.bare, 'show', 'sleds/eng-503/job:night.txt')).toBe('by night');
    // Its harness went to the gateway with a batch-tier token for this node, told to wait for slow answers; the
    // daytime node's did not.
    expect(t.asked).toHaveLength(1);
    expect(t.asked[0]).toMatchObject({ sessionId: 'night:eng-503/job', project: 'eng-503' });
    expect(t.asked[0]!.ttlMs).toBeGreaterThanOrEqual(8 * HOUR);
    const job = w.store.node('eng-503', 'job')!;
    const day = w.store.node('eng-503', 'day')!;
    expect(envLines(w)).toEqual(expect.arrayContaining([`${job.sessionId} http://127.0.0.1:4999 token wait`, `${day.sessionId} - - -`]));
    // Its receipt is at batch prices against its band at batch prices ($4–10 → $2–5), and says so; the day's is not.
    const nightPr = w.gh.pull(SLUG, job.prNumber!)!.body;
    // (The plain agent reports no tokens: its model is named unpriced, never $0 judged against the band.)
    expect(nightPr).toMatch(/<!-- sleds:receipt -->\n\$0\.00 actual at ½ price \+ Plain's default model unpriced · est \$2\.00–\$5\.00 · \d+ min · band not judged · seat dana · plain · /);
    expect(nightPr).toContain('### Overnight\n\nRan in the overnight window on the half-price tier, under a cap of $12.00: $0.00 metered at batch prices.');
    expect(w.gh.pull(SLUG, day.prNumber!)!.body).not.toContain('½ price');
    expect(job.receipt).toMatchObject({ body: { tier: 'batch' } });
    // What the checks said is in the run's log.
    const verified = new LifecycleEvents(w.db).forEntity('run', 'eng-503/job').find((e) => e.eventType === 'verified')!;
    expect(verified.payload).toEqual({ checks: 'no checks' });
  });

  it('holds a job whose band starts above its cap (naming the band), and one whose low end does not fit before the window closes', async () => {
    const t = tokens();
    const w = await world({
      night: nightAt(12_000_000, 2),
      mintBatchToken: t.mint,
      route: `title: t
nodes:
  - id: dear
    overnight: true
    cap: $12
    band: { low_usd: 30, high_usd: 40, low_min: 20, high_min: 60, confidence: 0.5 }
    brief: "@write a.txt a"
  - id: long
    overnight: true
    band: { low_usd: 2, high_usd: 4, low_min: 600, high_min: 900, confidence: 0.5 }
    brief: "@write b.txt b"
  - id: fits
    overnight: true
    cap: $3
    band: { low_usd: 4, high_usd: 6, low_min: 10, high_min: 30, confidence: 0.5 }
    brief: "@write c.txt c"
`,
    });
    w.clock.t = at(2, 23, 0);
    await w.until(() => w.state('fits') === 'AWAITING_MERGE', 'the job that fits lands');
    // At batch prices (half) 'fits' is $2–3, under its own $3 cap; 'dear' is $15–20, over its $12.
    expect(w.log).toContain('eng-503/dear: overnight — held: its band $15.00–$20.00 starts above its cap $12.00 — raise the cap or split the job');
    expect(w.log).toContain("eng-503/long: overnight — waits for the next night: its band's low end (600 min) does not fit before 06:00 UTC");
    expect(w.state('dear')).toBe('QUEUED');
    expect(w.state('long')).toBe('QUEUED');
    expect(t.asked.map((a) => a.sessionId)).toEqual(['night:eng-503/fits']);
  });

  it('the cap stops a running job with its session and worktree kept; the next night it waits on, and a raised cap lets it go on in its own session', async () => {
    const hold = join(tmpdir(), `sl-night-${process.pid}-${Math.random().toString(36).slice(2)}`);
    cleanups.push(() => rmSync(hold, { force: true }));
    const route = (cap: string) => `title: t
nodes:
  - id: job
    overnight: true
    cap: ${cap}
    band: { low_usd: 1, high_usd: 3, low_min: 10, high_min: 30, confidence: 0.5 }
    brief: |
      @write part1.txt first half
      @hold ${hold}
      @after raised @write part2.txt second half
`;
    const t = tokens();
    const w = await world({ night: nightAt(10_000_000), mintBatchToken: t.mint, route: route('$2') });
    w.clock.t = at(2, 22, 5);
    await w.until(() => w.state('job') === 'RUNNING' && w.store.node('eng-503', 'job')!.sessionId !== null, 'the job at work');
    const sessionId = w.store.node('eng-503', 'job')!.sessionId!;

    // The gateway meters its batch-tier answers under the node's session: $2.50, past its $2 cap.
    new PlatformKeyStore(w.db).record({ requestId: 'req_night_1', seat: 'dana', project: 'eng-503', model: 'claude-sonnet-5-5', timestampMs: w.clock.now(), inputTokens: 1000, outputTokens: 100, cacheWriteTokens: 0, cacheReadTokens: 0, costMicros: 2_500_000, source: 'gateway', outputKnown: true, sessionId: 'night:eng-503/job' });
    await w.until(() => w.state('job') === 'WAITING_FOR_LIMIT', 'the cap stopped it');
    const stopped = w.store.node('eng-503', 'job')!;
    expect(stopped.lastError).toBe('the cap $2.00 stopped it at $2.50 — its work and session are kept; raise cap: in its route file to let it go on');
    // It waits for the next night as for a limit's reset: asleep, not at work.
    expect(stopped.run.resetsAtMs).toBe(at(3, 22, 0));
    expect(stopped.worktree).not.toBeNull();
    writeFileSync(hold, 'go');

    // The next night, its cap unchanged: it waits on, and says why.
    w.clock.t = at(3, 22, 30);
    await w.until(() => w.log.some((l) => l.startsWith('eng-503/job: overnight — still at its cap')), 'it says it is still at its cap');
    expect(w.state('job')).toBe('WAITING_FOR_LIMIT');

    // A person raises the cap in the route file: it goes on in the same session, told why, and lands.
    const raised = parseRouteFile(route('$5'), { path: '.sleds/routes/eng-503.yml', harnesses: ['plain'] });
    if (!raised.ok) throw new Error(raised.error);
    w.store.upsertRoute(raised.route, { repoRoot: w.repo, filePath: join(w.repo, '.sleds/routes/eng-503.yml') });
    await w.until(() => w.state('job') === 'AWAITING_MERGE', 'it went on and awaits its merge');
    expect(w.starts().filter((l) => l.startsWith(sessionId)).map((l) => l.split(' ')[1])).toEqual(['new', 'resume']);
    expect(readFileSync(join(w.plainHome, 'sessions', `${sessionId}.log`), 'utf8')).toContain('Your spending cap was raised. Carry on where you stopped.');
    expect(git(w.bare, 'show', 'sleds/eng-503/job:part1.txt')).toBe('first half');
    expect(git(w.bare, 'show', 'sleds/eng-503/job:part2.txt')).toBe('second half');
  });

  it('a cap reached before the engine read the stream that named the session keeps that session, so a raised cap resumes it', async () => {
    const hold = join(tmpdir(), `sl-night-s-${process.pid}-${Math.random().toString(36).slice(2)}`);
    cleanups.push(() => rmSync(hold, { force: true }));
    const route = (cap: string) => `title: t\nnodes:\n  - id: job\n    overnight: true\n    cap: ${cap}\n    band: { low_usd: 1, high_usd: 3, low_min: 10, high_min: 30, confidence: 0.5 }\n    brief: |\n      @hold ${hold}\n      @after raised @write a.txt a\n`;
    const w = await world({ night: nightAt(10_000_000), mintBatchToken: tokens().mint, route: route('$2') });
    w.clock.t = at(2, 22, 5);
    // Started, and no round has read its stream yet.
    await w.until(() => w.state('job') === 'RUNNING' && w.store.node('eng-503', 'job')!.pid !== null, 'the job started');
    const logPath = w.store.node('eng-503', 'job')!.logPath!;
    // Its harness names its session, and the gateway meters an answer past the cap, both before the engine's next round.
    const sessionId = await waitFor('the run named its session', () => (existsSync(logPath) && readFileSync(logPath, 'utf8').includes('"begin"') ? w.starts()[0]?.split(' ')[0] : null));
    expect(w.store.node('eng-503', 'job')!.sessionId).toBeNull();
    new PlatformKeyStore(w.db).record({ requestId: 'req_night_s', seat: 'dana', project: 'eng-503', model: 'claude-sonnet-5-5', timestampMs: w.clock.now(), inputTokens: 1000, outputTokens: 100, cacheWriteTokens: 0, cacheReadTokens: 0, costMicros: 2_500_000, source: 'gateway', outputKnown: true, sessionId: 'night:eng-503/job' });
    await w.until(() => w.state('job') === 'WAITING_FOR_LIMIT', 'the cap stopped it');
    expect(w.store.node('eng-503', 'job')!.lastError).toMatch(/^the cap \$2\.00 stopped it at \$2\.50/);
    expect(w.store.node('eng-503', 'job')!.sessionId).toBe(sessionId);

    // A person raises the cap: the job goes on in that same session and lands.
    writeFileSync(hold, 'go');
    const raised = parseRouteFile(route('$5'), { path: '.sleds/routes/eng-503.yml', harnesses: ['plain'] });
    if (!raised.ok) throw new Error(raised.error);
    w.store.upsertRoute(raised.route, { repoRoot: w.repo, filePath: join(w.repo, '.sleds/routes/eng-503.yml') });
    w.clock.t = at(3, 22, 5);
    await w.until(() => w.state('job') === 'AWAITING_MERGE', 'it went on and awaits its merge');
    expect(w.starts().map((l) => l.split(' ').slice(0, 2).join(' '))).toEqual([`${sessionId} new`, `${sessionId} resume`]);
    expect(git(w.bare, 'show', 'sleds/eng-503/job:a.txt')).toBe('a');
  });

  it('a job cancelled while it runs (sleds queue cancel) has its run stopped at the next round, and nothing of it goes on', async () => {
    const hold = join(tmpdir(), `sl-night-c-${process.pid}-${Math.random().toString(36).slice(2)}`);
    cleanups.push(() => rmSync(hold, { force: true }));
    const t = tokens();
    const w = await world({
      night: nightAt(10_000_000),
      mintBatchToken: t.mint,
      route: `title: t\nnodes:\n  - id: job\n    overnight: true\n    band: { low_usd: 1, high_usd: 3, low_min: 10, high_min: 30, confidence: 0.5 }\n    brief: |\n      @hold ${hold}\n      @write late.txt too late\n`,
    });
    w.clock.t = at(2, 22, 0);
    await w.until(() => w.state('job') === 'RUNNING' && w.store.node('eng-503', 'job')!.pid !== null, 'the job at work');
    const pid = w.store.node('eng-503', 'job')!.pid!;
    const n = w.store.node('eng-503', 'job')!;
    expect(w.store.step('eng-503', 'job', n.fencingToken, { type: 'cancel', reason: 'cancelled by dana (sleds queue cancel)' }, w.clock.now()).ok).toBe(true);
    await w.until(() => w.log.some((l) => l.startsWith('eng-503/job: its run was stopped — the node is CANCELLED')), 'the run stopped');
    const alive = () => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    await w.until(() => !alive(), 'its process gone');
    writeFileSync(hold, 'go');
    expect(w.state('job')).toBe('CANCELLED');
  });

  it('a job at work whose window is taken out of the policy goes on under the default cap, not stopped at $0', async () => {
    const hold = join(tmpdir(), `sl-night-w-${process.pid}-${Math.random().toString(36).slice(2)}`);
    cleanups.push(() => rmSync(hold, { force: true }));
    let windowed = true;
    const night = nightAt(10_000_000);
    const w = await world({
      night: (now) => (windowed ? night(now) : null),
      mintBatchToken: tokens().mint,
      route: `title: t\nnodes:\n  - id: job\n    overnight: true\n    band: { low_usd: 1, high_usd: 3, low_min: 10, high_min: 30, confidence: 0.5 }\n    brief: |\n      @hold ${hold}\n      @write done.txt done\n`,
    });
    w.clock.t = at(2, 22, 0);
    await w.until(() => w.state('job') === 'RUNNING', 'the job at work');
    windowed = false;
    writeFileSync(hold, 'go');
    await w.until(() => w.state('job') === 'AWAITING_MERGE', 'it lands');
    expect(git(w.bare, 'show', 'sleds/eng-503/job:done.txt')).toBe('done');
  });

  it('a job whose half-price tier cannot be set up needs a person, with why', async () => {
    const w = await world({
      night: nightAt(10_000_000),
      mintBatchToken: async () => ({ ok: false, why: "no platform key configured — run 'sleds key set anthropic' (or openai) first" }),
      route: `title: t\nnodes:\n  - id: job\n    overnight: true\n    band: { low_usd: 1, high_usd: 3, low_min: 10, high_min: 30, confidence: 0.5 }\n    brief: "@write a.txt a"\n`,
    });
    w.clock.t = at(2, 22, 0);
    await w.until(() => w.state('job') === 'RECOVERY_REQUIRED', 'it needs a person');
    expect(w.store.node('eng-503', 'job')!.run.problem).toBe("the half-price tier could not be set up: no platform key configured — run 'sleds key set anthropic' (or openai) first");
  });
});
