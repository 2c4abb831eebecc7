/**
 * Overnight jobs as one-node overnight routes (issue 15 § 1): made by musher/engine/night-jobs.ts when queued, run by
 * the engine in the window. Real git, SQLite and processes (the test-only "plain" agent); the real Claude Code adapter
 * for where a wall's transcript goes for the job's worktree.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { NightJobs, type NightJobRequest } from '../../musher/engine/night-jobs.js';
import { nightQueue } from '../../musher/engine/night-queue.js';
import { legacyNightJob } from '../../musher/engine/legacy-night-job.js';
import { loadRoutes } from '../../musher/engine/routes-api.js';
import { placeSessionFor } from '../../musher/engine/place-session.js';
import { WALL_CONTINUATION } from '../../musher/engine/engine.js';
import { LifecycleEvents } from '../../musher/store/lifecycle-events.js';
import { PlatformKeyStore } from '../../musher/store/platform-key.js';
import { claudeCode } from '../../harnesses/claude-code/index.js';
import { claudeProjectSlug } from '../../harnesses/claude-code/project-slug.js';
import type { Job } from '../../musher/scheduler/job.js';
import type { MintBatchToken } from '../../musher/engine/night-tier.js';
import { git } from '../support/route-repo.js';
import { useEngineWorlds, type World } from '../support/engine-world.js';

const { world, cleanups } = useEngineWorlds();

const HOUR = 3_600_000;
const at = (day: number, hour: number, minute = 0) => Date.UTC(2026, 11, day, hour, minute);
/** 22:00–06:00 UTC, the night in progress at `now`, else the next one. */
function nightAt(capMicros: number) {
  return (now: number) => {
    const day = Math.floor(now / (24 * HOUR)) * 24 * HOUR;
    for (const start of [day - 2 * HOUR, day + 22 * HOUR]) if (now < start + 8 * HOUR) return { startMs: start, endMs: start + 8 * HOUR, capMicros, concurrency: 1 };
    return null;
  };
}
const mint: MintBatchToken = async () => ({ ok: true, token: 'sleds_gw_night_token', baseUrl: 'http://127.0.0.1:4999', openaiBaseUrl: 'http://127.0.0.1:4999/v1' });
/** A route whose one overnight node never starts (its band is over its cap): the world's engine has only the jobs to run. */
const IDLE_ROUTE = `title: t\nnodes:\n  - id: idle\n    overnight: true\n    cap: $1\n    band: { low_usd: 50, high_usd: 90, low_min: 10, high_min: 30, confidence: 0.5 }\n    brief: "@write idle.txt never"\n`;

function jobsOf(w: World, night = nightAt(12_000_000)) {
  let n = 0;
  return new NightJobs({
    routes: w.store,
    nightOf: (_repo, now) => night(now),
    clock: w.clock,
    // Predictable keys: night-aaaaaa, night-bbbbbb, …
    randomBytes: (k) => new Uint8Array(k).fill(n++),
  });
}

function queueOf(w: World) {
  return nightQueue({
    routes: w.store,
    events: new LifecycleEvents(w.db),
    spend: new PlatformKeyStore(w.db),
    nightOf: (_repo, now) => nightAt(12_000_000)(now),
    wallJobs: () => [],
    cancelWallJob: (id) => ({ status: 404, body: { error: `no overnight job '${id}'` } }),
    clock: w.clock,
    formatTime: (ms) => new Date(ms).toISOString().slice(11, 16),
    seat: () => 'dana',
  });
}

type Listed = { jobs: Array<{ job: string; kind: string; state: string; title: string; band: { lowUsd: number; highUsd: number } | null; capMicros: number | null; note: string | null }> };

const request = (w: World, over: Partial<NightJobRequest> = {}): NightJobRequest => ({
  cwd: w.repo,
  title: 'Fix the flaky login test',
  brief: '@write fresh.txt from the request',
  harness: 'plain',
  model: null,
  band: { lowUsd: 4, highUsd: 10, lowMin: 20, highMin: 60, confidence: 0.5 },
  capMicros: null,
  resume: null,
  from: '/sled overnight in session s1',
  raise: '/sled overnight cap',
  wallId: null,
  ...over,
});

describe('overnight jobs: a one-node overnight route per job', { timeout: 120_000 }, () => {
  it('exit 3 at a wall: the job’s node resumes the wall’s session in its own worktree, inside the window only', async () => {
    const w = await world({ night: nightAt(12_000_000), mintBatchToken: mint, route: IDLE_ROUTE });
    // The wall's session: the plain agent's transcript of it, and what it was told before the wall.
    const wallSession = randomUUID();
    const transcript = join(w.plainHome, 'logs', `${wallSession}.jsonl`);
    mkdirSync(join(w.plainHome, 'logs'), { recursive: true });
    mkdirSync(join(w.plainHome, 'sessions'), { recursive: true });
    writeFileSync(transcript, `${JSON.stringify({ t: 'start', session: wallSession, cwd: w.repo })}\n`);
    writeFileSync(join(w.plainHome, 'sessions', `${wallSession}.log`), '--- prompt\nFix the flaky login test\n');
    // It stopped mid-edit: its uncommitted work is what the job's worktree starts from.
    writeFileSync(join(w.repo, 'README.md'), '# shop, mid-edit at the wall\n');

    const made = await jobsOf(w).queue(
      request(w, {
        brief: 'Fix the flaky login test\n@after continuation @write night.txt carried on where the wall stopped it',
        resume: { sessionId: wallSession, transcript, workDir: w.repo },
        from: 'exit 3 at wall w1',
        raise: '/sled 3 cap',
        wallId: 'w1',
      }),
    );
    if (!made.ok) throw new Error(made.line);
    expect(made.job).toBe('night-aaaaaa');
    expect(made.band).toMatchObject({ lowUsd: 2, highUsd: 5 });

    // Daytime: the job waits for the window, saying so; nothing started.
    await w.until(() => w.log.some((l) => l === 'night-aaaaaa/job: overnight — the window opens at 22:00 UTC'), 'the job waits for the window');
    expect(w.store.node('night-aaaaaa', 'job')!.run.state).toBe('QUEUED');
    expect(w.starts()).toEqual([]);
    // Its task's receipt waits while a job will resume its session.
    expect(w.store.nightJobResumes(wallSession)).toBe(true);
    expect(w.store.nightJobResumes(randomUUID())).toBe(false);

    w.clock.t = at(2, 22, 0);
    await w.until(() => w.store.node('night-aaaaaa', 'job')!.run.state === 'AWAITING_MERGE', 'the job resumed the session and awaits its merge');
    const node = w.store.node('night-aaaaaa', 'job')!;
    // Its first run resumed the wall's session, in the job's worktree (not the repository the session ran in).
    expect(w.starts()).toEqual([`${wallSession} resume ${node.worktree}`]);
    expect(node.worktree).not.toBe(w.repo);
    expect(node.sessionId).toBe(wallSession);
    expect(readFileSync(join(w.plainHome, 'sessions', `${wallSession}.log`), 'utf8')).toContain(WALL_CONTINUATION);
    expect(git(w.bare, 'show', 'sleds/night-aaaaaa/job:night.txt')).toBe('carried on where the wall stopped it');
    // The branch carries the session's work from the wall; the session's own checkout was left as it was.
    expect(git(w.bare, 'show', 'sleds/night-aaaaaa/job:README.md')).toBe('# shop, mid-edit at the wall');
    expect(git(w.repo, 'status', '--porcelain')).toBe('M README.md');
    expect(git(w.repo, 'stash', 'list')).toBe('');
    expect(git(w.repo, 'rev-parse', 'refs/sleds/night/night-aaaaaa')).toBe(node.baseSha);
  });

  it('a job queued is listed by sleds queue by its key, at ½ price with its cap; over its cap it is refused with the band and nothing is made', async () => {
    const w = await world({ night: nightAt(12_000_000), mintBatchToken: mint, route: IDLE_ROUTE });
    const jobs = jobsOf(w);
    const made = await jobs.queue(request(w, { capMicros: 20_000_000 }));
    if (!made.ok) throw new Error(made.line);
    expect(made).toMatchObject({ job: 'night-aaaaaa', capMicros: 20_000_000, band: { lowUsd: 2, highUsd: 5 } });

    const over = await jobs.queue(request(w, { band: { lowUsd: 28, highUsd: 60, lowMin: 20, highMin: 60, confidence: 0.5 } }));
    expect(over).toEqual({ ok: false, line: 'refused: its band at ½ price is $14–30, over its cap of $12 — raise it: /sled overnight cap $30' });
    const notRepo = mkdtempSync(join(tmpdir(), 'sl-night-norepo-'));
    cleanups.push(() => rmSync(notRepo, { recursive: true, force: true }));
    expect(await jobs.queue(request(w, { cwd: notRepo }))).toEqual({ ok: false, line: `refused: ${notRepo} is not in a git repository — an overnight job runs in a worktree of one` });
    expect(w.store.routes().map((r) => r.key)).toEqual(['eng-503', 'night-aaaaaa']);

    const q = queueOf(w);
    const listed = (q.list().body as Listed).jobs.filter((j) => j.kind === 'job');
    expect(listed).toEqual([
      expect.objectContaining({ job: 'night-aaaaaa', kind: 'job', state: 'QUEUED', title: 'Fix the flaky login test', band: expect.objectContaining({ lowUsd: 2, highUsd: 5 }), capMicros: 20_000_000, note: 'the window opens at 22:00' }),
    ]);

    // Loading the repository's route files leaves the job alone; a file that takes its key is refused.
    const deps = { store: w.store, harnesses: ['plain'], defaultMode: () => 'approve' as const };
    expect((await loadRoutes(deps, w.repo)).status).toBe(200);
    expect(w.store.route('night-aaaaaa')).toMatchObject({ filePath: '', mode: 'auto' });
    expect((await loadRoutes(deps, w.repo, 'night-aaaaaa')).status).toBe(200);
    mkdirSync(join(w.repo, '.sleds', 'routes'), { recursive: true });
    writeFileSync(join(w.repo, '.sleds', 'routes', 'night-aaaaaa.yml'), 'title: clash\nnodes:\n  - id: x\n    brief: x\n');
    const clash = await loadRoutes(deps, w.repo);
    expect(clash).toEqual({ status: 409, body: { error: ".sleds/routes/night-aaaaaa.yml: 'night-aaaaaa' is an overnight job's key (sleds queue shows it) — name the route file another key" } });
    expect(w.store.nodes('night-aaaaaa').map((n) => n.nodeId)).toEqual(['job']);

    // `sleds queue cancel <job>` takes its key.
    expect(q.cancel('night-aaaaaa')).toMatchObject({ status: 200, body: { job: 'night-aaaaaa', state: 'CANCELLED' } });
    expect(w.store.node('night-aaaaaa', 'job')!.run.state).toBe('CANCELLED');
  });

  it('a legacy scheduler job of the overnight kind, due, becomes a job route that resumes its wall’s session', async () => {
    const w = await world({ night: nightAt(12_000_000), mintBatchToken: mint, route: IDLE_ROUTE });
    const job: Job = {
      id: 'jb7k2m9q',
      kind: 'overnight',
      wallId: 'w9',
      sessionId: 'sess-wall',
      runAt: w.clock.now(),
      state: 'running',
      payload: { endMs: w.clock.now() + 8 * HOUR, harness: 'plain' },
      result: null,
      handle: null,
      attempts: 0,
      lastCheck: null,
      createdAt: w.clock.now(),
      updatedAt: w.clock.now(),
      startedAt: w.clock.now(),
      finishedAt: null,
      reportedAt: null,
    };
    const task = { id: 't1', title: 'Tidy the mailer', worth: null, type: null, repo: w.repo, source: 'prompt', sourceRef: null, state: 'open', promptChars: 40, turns: 3, createdAt: 0, updatedAt: 0, endedAt: null } as const;
    const read = legacyNightJob(job, {
      session: () => ({ sessionId: 'sess-wall', harness: 'plain', cwd: w.repo, transcriptPath: null, model: 'plain-1', firstSeenAt: 0, lastSeenAt: 0, endedAt: null, endReason: null }),
      task: () => null,
      taskOfSession: () => task,
      promptOf: () => 'Tidy the mailer: split send() in two',
      band: () => ({ lowUsd: 2, highUsd: 6, lowMin: 10, highMin: 30, confidence: 0.4 }),
      wall: () => null,
    });
    if (!read.ok) throw new Error(read.why);
    const made = await jobsOf(w).queue(read.request);
    if (!made.ok) throw new Error(made.line);
    const node = w.store.node(made.job, 'job')!;
    expect(node).toMatchObject({ title: 'Tidy the mailer', brief: 'Tidy the mailer: split send() in two', harness: 'plain', model: 'plain-1', overnight: true, armed: true, resumeFrom: 'sess-wall' });
    expect(w.store.route(made.job)).toMatchObject({ notes: 'overnight job, queued by scheduler job jb7k2m9q (exit 3 at a wall)', repoRoot: w.repo });
    expect(w.store.nightJobsOfWall('w9').map((r) => r.key)).toEqual([made.job]);

    // One that names nothing to run says so, and nothing is made.
    expect(legacyNightJob({ ...job, wallId: null, sessionId: null, payload: {} }, { session: () => null, task: () => null, taskOfSession: () => null, promptOf: () => null, band: () => null, wall: () => null })).toEqual({
      ok: false,
      why: 'it names no task or prompt: there is nothing to run — queue the task again (/sled overnight)',
    });
  });

  it('a Claude Code session is placed under the project folder of the job’s worktree, where claude --resume finds it', () => {
    const root = mkdtempSync(join(tmpdir(), 'sl-night-place-'));
    cleanups.push(() => rmSync(root, { recursive: true, force: true }));
    const home = join(root, 'claude');
    const id = randomUUID();
    const from = join(home, 'projects', claudeProjectSlug('/home/dana/shop'), `${id}.jsonl`);
    mkdirSync(join(from, '..'), { recursive: true });
    writeFileSync(from, '{"type":"user","sessionId":"x"}\n');
    const worktree = join(root, 'worktrees', 'night-aaaaaa', 'job');
    const placed = placeSessionFor(claudeCode, from, worktree, { CLAUDE_CONFIG_DIR: home }, root);
    expect(placed).toBe(join(home, 'projects', claudeProjectSlug(worktree), `${id}.jsonl`));
    expect(readFileSync(placed!, 'utf8')).toBe('{"type":"user","sessionId":"x"}\n');
    // A second start leaves what is there (the job's own turns since).
    writeFileSync(placed!, 'the job went on\n');
    placeSessionFor(claudeCode, from, worktree, { CLAUDE_CONFIG_DIR: home }, root);
    expect(readFileSync(placed!, 'utf8')).toBe('the job went on\n');
    expect(() => placeSessionFor(claudeCode, join(home, 'gone.jsonl'), worktree, { CLAUDE_CONFIG_DIR: home }, root)).toThrow(/is gone/);
    expect(existsSync(join(home, 'projects', claudeProjectSlug(worktree)))).toBe(true);
  });
});
