import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { nightQueue } from '../../musher/engine/night-queue.js';
import { parseRouteFile } from '../../musher/engine/route-yaml.js';
import { RouteStore } from '../../musher/engine/route-store.js';
import { LifecycleEvents } from '../../musher/store/lifecycle-events.js';
import { PlatformKeyStore } from '../../musher/store/platform-key.js';
import { openStore } from '../../musher/store/db.js';
import { describe, expect, it } from 'vitest';
import { sleds, startMusher, type SledsWorld } from '../support/sleds-env.js';
import { useWorlds } from '../support/worlds.js';

/** `sleds queue` through the real CLI and a real musher (issue 15 § 1): the overnight jobs, and cancelling one. */
const newWorld = useWorlds({ SLEDS_NO_AUTOSTART: '1', SLEDS_SEAT: 'dana' });

const ROUTE = `title: Nightly chores
nodes:
  - id: deps
    overnight: true
    cap: $4
    brief: Bump the dependencies.
    band: { low_usd: 2, high_usd: 6, low_min: 10, high_min: 30, confidence: 0.8 }
  - id: docs
    overnight: true
    brief: Refresh the docs.
    band: { low_usd: 1, high_usd: 3, low_min: 5, high_min: 15, confidence: 0.6 }
  - id: day
    brief: A daytime node.
`;

function repoWith(w: SledsWorld): string {
  const repo = join(w.home, 'repo');
  mkdirSync(join(repo, '.sleds', 'routes'), { recursive: true });
  execFileSync('git', ['init', '-q', repo]);
  writeFileSync(join(repo, '.sleds', 'routes', 'chores.yml'), ROUTE);
  writeFileSync(join(repo, '.sleds', 'policy.yml'), 'overnight: { from: "22:00", to: "06:00", cap: $8 }\n');
  return repo;
}

type Queue = { jobs: Array<{ job: string; kind: string; state: string; band: { lowUsd: number; highUsd: number } | null; capMicros: number | null; spentMicros: number; note: string | null; log: string[] }> };

describe('sleds queue', { timeout: 60_000 }, () => {
  it('lists the overnight jobs with their band at half price, their cap (their own, else the policy’s), spend and log; cancel ends one', async () => {
    const w = newWorld();
    const repo = repoWith(w);
    await startMusher(w);
    expect((await sleds(w, ['route', 'load', '--json'], undefined, {}, repo)).code).toBe(0);

    const listed = await sleds(w, ['queue', '--json']);
    expect(listed.code, listed.stderr + listed.stdout).toBe(0);
    const q = JSON.parse(listed.stdout) as Queue;
    expect(q.jobs.map((j) => [j.job, j.kind, j.state, j.band && [j.band.lowUsd, j.band.highUsd], j.capMicros, j.spentMicros])).toEqual([
      ['chores/deps', 'route-node', 'QUEUED', [1, 3], 4_000_000, 0],
      ['chores/docs', 'route-node', 'QUEUED', [0.5, 1.5], 8_000_000, 0],
    ]);
    expect(q.jobs[0]!.note).toBe('not armed — sleds route arm chores');
    expect(q.jobs[0]!.log).toHaveLength(1);
    // Its night in words, on the 24-hour clock of its window's zone (core/overnight/timeline.ts).
    expect(q.jobs[0]!.log[0]).toMatch(/^\d\d:\d\d queued · job chores\/deps$/);

    const text = await sleds(w, ['queue']);
    expect(text.stdout).toContain('chores/deps  QUEUED  $1.00–$3.00 at ½ price · cap $4.00 · spent $0.00');

    const cancelled = await sleds(w, ['queue', 'cancel', 'chores/docs', '--json']);
    expect(cancelled.code, cancelled.stderr).toBe(0);
    expect(JSON.parse(cancelled.stdout)).toMatchObject({ job: 'chores/docs', state: 'CANCELLED', reason: 'cancelled by dana (sleds queue cancel)' });
    const after = JSON.parse((await sleds(w, ['queue', '--json'])).stdout) as Queue;
    // Open jobs first; the cancelled one last, saying who ended it.
    expect(after.jobs.map((j) => [j.job, j.state])).toEqual([['chores/deps', 'QUEUED'], ['chores/docs', 'CANCELLED']]);
    expect(after.jobs[1]!.note).toBe('cancelled by dana (sleds queue cancel)');
    expect(after.jobs[1]!.log.at(-1)).toMatch(/^\d\d:\d\d cancelled · cancelled by dana \(sleds queue cancel\)$/);

    const again = await sleds(w, ['queue', 'cancel', 'chores/docs', '--json']);
    expect(again.code).toBe(1);
    expect(JSON.parse(again.stdout).error).toBe('chores/docs is CANCELLED already; nothing to cancel');
    const daytime = await sleds(w, ['queue', 'cancel', 'chores/day']);
    expect(daytime.code).toBe(1);
    expect(daytime.stderr).toBe("sleds: no overnight job 'chores/day' — sleds queue lists them\n");
    const wrong = await sleds(w, ['queue', 'frob']);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain('queue takes no word, or cancel <job>');
  });

  it('says why a queued job has not started, as the engine’s gate says it: not armed, a dependency, the window, the cap', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sl-queue-'));
    const db = openStore(join(dir, 'sleds.db'));
    try {
      const H = 3_600_000;
      const clock = { t: Date.UTC(2026, 11, 2, 15), now: () => clock.t };
      const routes = new RouteStore(db, clock);
      const parsed = parseRouteFile(
        `title: t\nnodes:\n  - id: a\n    overnight: true\n    band: { low_usd: 2, high_usd: 4, low_min: 10, high_min: 30, confidence: 0.5 }\n    brief: a\n  - id: b\n    overnight: true\n    depends_on: [a]\n    brief: b\n  - id: dear\n    overnight: true\n    cap: $1\n    band: { low_usd: 4, high_usd: 8, low_min: 10, high_min: 30, confidence: 0.5 }\n    brief: c\n`,
        { path: '.sleds/routes/eng-503.yml', harnesses: ['claude-code'] },
      );
      if (!parsed.ok) throw new Error(parsed.error);
      routes.upsertRoute(parsed.route, { repoRoot: dir, filePath: join(dir, 'r.yml') }, 'auto');
      const day = Math.floor(clock.t / (24 * H)) * 24 * H;
      const q = nightQueue({
        routes,
        events: new LifecycleEvents(db),
        spend: new PlatformKeyStore(db),
        nightOf: () => ({ startMs: day + 22 * H, endMs: day + 30 * H, capMicros: 10_000_000, concurrency: 1 }),
        wallJobs: () => [],
        cancelWallJob: () => ({ status: 404, body: {} }),
        clock,
        formatTime: (ms) => new Date(ms).toISOString().slice(11, 16),
        seat: () => 'dana',
      });
      const notes = () => Object.fromEntries((q.list().body as Queue).jobs.map((j) => [j.job, j.note]));
      expect(notes()).toEqual({ 'eng-503/a': 'not armed — sleds route arm eng-503', 'eng-503/b': 'not armed — sleds route arm eng-503', 'eng-503/dear': 'not armed — sleds route arm eng-503' });
      routes.arm('eng-503', null);
      expect(notes()).toEqual({
        'eng-503/a': 'the window opens at 22:00',
        'eng-503/b': 'waits for a to be merged',
        'eng-503/dear': 'held: its band $2.00–$4.00 starts above its cap $1.00 — raise the cap or split the job',
      });
      clock.t = day + 23 * H;
      expect(notes()['eng-503/a']).toBe('starts at sleds engine’s next round');
    } finally {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
