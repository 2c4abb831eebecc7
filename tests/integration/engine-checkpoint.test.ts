/**
 * Checkpoints (issue 15 § 4): a node's worktree is kept as a commit beside its branch, with its session, whenever it
 * stops (a limit, a question, the cap, the end of a turn) and every few minutes while its agent works, so a crash,
 * a restart or a lost worktree resumes the job where it was; and time the machine slept is not its runtime. On real
 * git, SQLite and processes (tests/support/engine-world.ts, the test-only "plain" agent).
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { describe, expect, it } from 'vitest';
import { git } from '../support/route-repo.js';
import { useEngineWorlds } from '../support/engine-world.js';
import { checkpointRef } from '../../musher/engine/worktree.js';

const { world, cleanups } = useEngineWorlds();
const T0 = Date.UTC(2026, 11, 2, 9);
const MIN = 60_000;
const RESET_S = T0 / 1000 + 3600;

describe('checkpoints', { timeout: 60_000 }, () => {
  it('a node stopped at its limit leaves a checkpoint of its uncommitted work; its worktree lost meanwhile, the reset makes it again from the branch and the checkpoint, and the same session carries on and lands', async () => {
    const w = await world({
      route: `title: t
nodes:
  - id: api
    brief: |
      @unless Carry @write part1.txt first half
      @limit ${RESET_S}
      @after Carry @write part2.txt second half
`,
    });
    await w.until(() => w.state('api') === 'WAITING_FOR_LIMIT' && w.store.node('eng-503', 'api')!.checkpoint !== null, 'api at its limit, checkpointed');
    const held = w.store.node('eng-503', 'api')!;
    const cp = held.checkpoint!;
    expect(cp).toMatchObject({ sessionId: held.sessionId, at: w.clock.now() });
    // The checkpoint holds the agent's uncommitted file; the branch, its index and its files are as the agent left them.
    expect(git(held.worktree!, 'show', `${cp.commit}:part1.txt`)).toBe('first half');
    expect(git(held.worktree!, 'rev-parse', checkpointRef(held.branch!))).toBe(cp.commit);
    expect(git(held.worktree!, 'rev-parse', 'HEAD')).not.toBe(cp.commit);
    expect(git(held.worktree!, 'status', '--porcelain')).toBe('?? part1.txt');
    expect(w.log).toContain(`eng-503/api: checkpoint ${cp.commit.slice(0, 12)} (at a usage limit)`);

    // The machine is rebuilt, the worktrees folder cleaned: the agent's work exists only in the checkpoint now.
    rmSync(held.worktree!, { recursive: true, force: true });
    w.clock.t = RESET_S * 1000 + 1;
    await w.until(() => w.state('api') === 'AWAITING_MERGE', 'api resumed after the reset and landed');
    expect(w.log).toContain(`eng-503/api: its worktree was gone — made again from sleds/eng-503/api and checkpoint ${cp.commit.slice(0, 12)}`);
    const starts = w.starts();
    expect(starts).toHaveLength(2);
    expect(starts[1]).toContain(`${held.sessionId} resume`);
    // Both halves landed: the first from the checkpoint (the resumed run did not write it again), the second by the resumed run.
    expect(git(w.bare, 'show', 'sleds/eng-503/api:part1.txt')).toBe('first half');
    expect(git(w.bare, 'show', 'sleds/eng-503/api:part2.txt')).toBe('second half');
  });

  it('while its agent works, a checkpoint every five minutes between its tool calls: a crash then loses minutes, not the run', async () => {
    const holds = join(w0(), 'holds');
    mkdirSync(holds, { recursive: true });
    const w = await world({
      route: `title: t
nodes:
  - id: api
    brief: |
      @write a.txt one
      @hold ${join(holds, 'one')}
      @write b.txt two
      @hold ${join(holds, 'two')}
`,
    });
    // Its stream shows the first tool call (the file alone may be on disk before the event is written)…
    const streamed = () => {
      const log = w.store.node('eng-503', 'api')!.logPath;
      return log !== null && existsSync(log) && readFileSync(log, 'utf8').includes('write_file');
    };
    await w.until(() => w.state('api') === 'RUNNING' && streamed(), 'the agent wrote a.txt');
    // …which the next round reads: the checkpoint clock starts there.
    await w.until(() => true, 'a round that reads its first tool call');
    expect(w.store.node('eng-503', 'api')!.checkpoint).toBeNull();
    w.clock.t += 6 * MIN;
    writeFileSync(join(holds, 'one'), '');
    await w.until(() => w.store.node('eng-503', 'api')!.checkpoint !== null, 'a checkpoint while it works');
    const n = w.store.node('eng-503', 'api')!;
    expect(n.run.state).toBe('RUNNING');
    expect(git(n.worktree!, 'show', `${n.checkpoint!.commit}:a.txt`)).toBe('one');
    expect(git(n.worktree!, 'show', `${n.checkpoint!.commit}:b.txt`)).toBe('two');
    expect(w.log).toContain(`eng-503/api: checkpoint ${n.checkpoint!.commit.slice(0, 12)} (while its agent works)`);
    writeFileSync(join(holds, 'two'), '');
    await w.until(() => w.state('api') === 'AWAITING_MERGE', 'it lands');
    // Its turn's end is a checkpoint too: the commit it landed with.
    const landed = w.store.node('eng-503', 'api')!;
    expect(landed.checkpoint!.commit).toBe(git(w.bare, 'rev-parse', 'sleds/eng-503/api'));
  });

  it('time the machine slept while a node worked (a closed lid) is not its runtime, and its receipt says minutes, not hours', async () => {
    const hold = join(w0(), 'lid');
    const w = await world({
      route: `title: t
nodes:
  - id: api
    band: { low_usd: 0, high_usd: 5, low_min: 0, high_min: 30, confidence: 0.5 }
    brief: |
      @write a.txt one
      @hold ${hold}
`,
    });
    await w.until(() => w.state('api') === 'RUNNING' && w.store.node('eng-503', 'api')!.sessionId !== null, 'the agent at work');
    w.clock.t += 2 * MIN;
    await w.until(() => true, 'a round at work');
    // The lid closes for three hours: the next round comes that much later.
    w.clock.t += 180 * MIN;
    await w.until(() => w.log.some((l) => l.startsWith('eng-503/api: the machine slept')), 'the engine notices it slept');
    expect(w.log).toContain('eng-503/api: the machine slept 180 min — not counted as its runtime');
    expect(w.state('api')).toBe('RUNNING');
    writeFileSync(hold, '');
    w.clock.t += MIN;
    await w.until(() => w.state('api') === 'AWAITING_MERGE', 'it lands');
    const run = w.store.node('eng-503', 'api')!.run;
    expect(run.waitMs.asleep).toBe(180 * MIN);
    expect(run.runtimeMs).toBeLessThan(10 * MIN);
    expect(w.gh.pull('acme/shop', w.store.node('eng-503', 'api')!.prNumber!)!.body).toMatch(/<!-- sleds:receipt -->\n3 min · /);
  });
});

/** A scratch folder for a test's hold files, removed with the test's world. */
let scratch = 0;
function w0(): string {
  const dir = join(tmpdir(), `sl-checkpoint-${process.pid}-${++scratch}`);
  mkdirSync(dir, { recursive: true });
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}
