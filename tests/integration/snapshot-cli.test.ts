import Database from 'better-sqlite3';
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolvePaths } from '../../core/paths.js';
import { shortSnapshotId } from '../../core/snapshot.js';
import { openStore } from '../../musher/store/db.js';
import { SnapshotStore } from '../../musher/store/snapshots.js';
import { takeSnapshot, type SnapshotInput } from '../../musher/snapshot/take.js';
import { sleds, startMusher, type SledsWorld } from '../support/sleds-env.js';
import { useWorlds } from '../support/worlds.js';

const FIX = join(import.meta.dirname, '..', 'fixtures');
const SESSION = '7f3e9a21-4c8b-4d2e-9f10-2b3c4d5e6f70';

const newWorld = useWorlds();

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=Test', '-c', 'user.email=test@example.com', '-c', 'init.defaultBranch=main', ...args], { cwd, encoding: 'utf8' }).trim();
}

/**
 * Two snapshots taken the way musher takes them at a wall, into the world's own SLEDS_HOME (its database and data
 * dir), before musher starts: then the CLI reads them through musher's socket.
 */
async function seedSnapshots(w: SledsWorld): Promise<string[]> {
  const repo = join(w.root, 'shop');
  mkdirSync(repo);
  git(repo, 'init', '-q');
  writeFileSync(join(repo, 'a.txt'), 'one\ntwo\n');
  git(repo, 'add', '.');
  git(repo, 'commit', '-q', '-m', 'first');
  git(repo, 'remote', 'add', 'origin', 'https://dana:ghp_s3cretT0ken@github.com/acme/shop.git');
  writeFileSync(join(repo, 'a.txt'), 'one\nTWO\nthree\n');
  writeFileSync(join(repo, 'notes.md'), 'untracked\n');
  const projects = join(w.claudeDir, 'projects', '-home-u-shop');
  mkdirSync(projects, { recursive: true });
  const transcript = join(projects, `${SESSION}.jsonl`);
  cpSync(join(FIX, 'pack', 'claude', 'projects', '-home-u-shop', `${SESSION}.jsonl`), transcript);

  const paths = resolvePaths({ SLEDS_HOME: w.sledsHome }, w.home);
  const db = openStore(paths.dbFile);
  const store = new SnapshotStore(db);
  let now = Date.now() - 3_600_000;
  const deps = { paths, store, clock: { now: () => now }, log: { info: () => undefined, warn: () => undefined, error: () => undefined } };
  const input: SnapshotInput = {
    sessionId: SESSION,
    harness: 'claude-code',
    harnessVersion: '2.1.328',
    model: 'claude-opus-5-5',
    cwd: repo,
    transcriptPath: transcript,
    wallId: 'jd7k2m9qa4zp',
    bars: [{ provider: 'anthropic', window: 'five_hour', usedPct: 100, resetsAtMs: now + 7_200_000, observedAtMs: now, source: 'statusline' }],
    bindingWindow: 'five_hour',
  };
  const ids: string[] = [];
  try {
    ids.push((await takeSnapshot(input, deps)).id);
    now += 600_000;
    writeFileSync(join(repo, 'big.bin'), Buffer.alloc(200_000, 7));
    ids.push((await takeSnapshot({ ...input, wallId: 'wall2222zzzz' }, { ...deps, maxBytes: 64 * 1024 })).id);
  } finally {
    db.close();
  }
  return ids;
}

describe('sleds snapshots / sleds snapshot show', () => {
  it('lists the snapshots and shows one by a prefix of its id, through musher', async () => {
    const w = newWorld();
    const [first, second] = await seedSnapshots(w);
    await startMusher(w);

    const listJson = await sleds(w, ['snapshots', '--json']);
    expect(listJson.code, listJson.stderr).toBe(0);
    const list = JSON.parse(listJson.stdout) as { snapshots: Array<{ id: string; shortId: string; sessionId: string; harness: string; wallId: string; note: string | null; sizeBytes: number }> };
    expect(list.snapshots.map((s) => s.id)).toEqual([second, first]); // latest first
    expect(list.snapshots[0]).toMatchObject({ shortId: shortSnapshotId(second!), sessionId: SESSION, harness: 'claude-code', wallId: 'wall2222zzzz' });
    expect(list.snapshots[0]!.note).toContain('big.bin (0.2 MB, over the 0.1 MB cap)');
    expect(list.snapshots[1]!.note).toBeNull();
    expect(list.snapshots[1]!.sizeBytes).toBeGreaterThan(0);

    const human = await sleds(w, ['snapshots']);
    expect(human.code).toBe(0);
    const rows = human.stdout.split('\n');
    expect(rows[0]).toMatch(new RegExp(`^${shortSnapshotId(second!)}  7f3e9a21  claude-code  .* \\(50m ago\\) .*Left out: big\\.bin`));
    expect(rows[1]).toMatch(new RegExp(`^${shortSnapshotId(first!)}  7f3e9a21  claude-code  .* \\(1h ago\\) +[0-9.]+ KB$`));

    const show = await sleds(w, ['snapshot', 'show', first!.slice(0, 6)]);
    expect(show.code, show.stderr).toBe(0);
    expect(show.stdout).toContain(`Snapshot ${shortSnapshotId(first!)}  (${first})`);
    expect(show.stdout).toContain(`Session     ${SESSION} · claude-code 2.1.328 · claude-opus-5-5`);
    expect(show.stdout).toContain('at wall jd7k2m9qa4zp');
    expect(show.stdout).toMatch(/Git {9}https:\/\/github\.com\/acme\/shop\.git · branch main · HEAD [0-9a-f]{12}/);
    expect(show.stdout).toContain('1 tracked file(s) changed · 1 untracked file(s) kept');
    expect(show.stdout).toContain('Transcript  projects/-home-u-shop/7f3e9a21-4c8b-4d2e-9f10-2b3c4d5e6f70.jsonl');
    expect(show.stdout).toContain('Bars        five_hour 100%');
    expect(show.stdout).toContain('# Brief: claude-code session 7f3e9a21-4c8b-4d2e-9f10-2b3c4d5e6f70, claude-opus-5-5');
    expect(show.stdout).toContain('- `a.txt` +2 −1');
    expect(show.stdout).toContain('- Which store should back the cache? → **SQLite**');

    const showJson = await sleds(w, ['snapshot', 'show', first!, '--json']);
    expect(showJson.code).toBe(0);
    const answer = JSON.parse(showJson.stdout) as { snapshot: { id: string }; manifest: { git: { head: string; remote: string } }; brief: string };
    expect(answer.snapshot.id).toBe(first);
    expect(answer.manifest.git.head).toBe(git(join(w.root, 'shop'), 'rev-parse', 'HEAD'));
    expect(answer.brief).toContain('## What is left');
    for (const out of [listJson.stdout, human.stdout, show.stdout, showJson.stdout]) expect(out).not.toContain('ghp_s3cretT0ken');
  });

  it('an unknown, ambiguous or missing id: one line saying so and what to run', async () => {
    const w = newWorld();
    const [first] = await seedSnapshots(w);
    // A second row sharing the first 8 characters, so that prefix names two snapshots.
    const db = new Database(join(w.sledsHome, 'data', 'sleds.db'));
    db.prepare(`INSERT INTO snapshots (id, session_id, wall_id, harness, taken_at, size_bytes, note) VALUES (?, 's', NULL, 'codex', 1, 1, NULL)`).run(
      `${first!.slice(0, 8)}${first![8] === 'z' ? 'y' : 'z'}${'z'.repeat(43)}`,
    );
    db.close();
    await startMusher(w);

    const unknown = await sleds(w, ['snapshot', 'show', 'zzzzzzzz']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toBe("sleds: no snapshot zzzzzzzz — run 'sleds snapshots' for the list\n");

    const ambiguous = await sleds(w, ['snapshot', 'show', first!.slice(0, 8)]);
    expect(ambiguous.code).toBe(1);
    expect(ambiguous.stderr).toMatch(new RegExp(`^sleds: snapshot id ${first!.slice(0, 8)} is ambiguous \\(.*${shortSnapshotId(first!)}.*\\) — type more of it\\n$`));
    expect((await sleds(w, ['snapshot', 'show', first!.slice(0, 9)])).code).toBe(0);

    const malformed = await sleds(w, ['snapshot', 'show', 'l0l']);
    expect(malformed.code).toBe(1);
    expect(malformed.stderr).toMatch(/^sleds: 'l0l' is not a snapshot id .* — run 'sleds snapshots' for the list\n$/);

    const missing = await sleds(w, ['snapshot', 'show']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('sleds snapshot show');
  });

  it('no snapshots yet, and musher not running', async () => {
    const w = newWorld();
    const down = await sleds(w, ['snapshots'], undefined, { SLEDS_NO_AUTOSTART: '1' });
    expect(down.code).toBe(1);
    expect(down.stderr).toContain('musher is not running');
    await startMusher(w);
    const empty = await sleds(w, ['snapshots']);
    expect(empty.stdout).toBe('No snapshots yet: one is taken when a session hits the wall.\n');
    expect(JSON.parse((await sleds(w, ['snapshots', '--json'])).stdout)).toEqual({ snapshots: [] });
  });
});
