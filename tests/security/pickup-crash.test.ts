/**
 * One pickup, atomic: a pickup killed with SIGKILL at each of its steps (in a process of its own, the real service
 * from dist/) is retried by the same recipient and completes whole — one worktree holding the work, one transcript,
 * no partial file, the mark on the remote — or is undone at musher's start; a pickup that fails midway undoes itself.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { A_WORK_FILES, disposeWorlds, git, pickedUpState } from '../integration/handoff-transport-world.js';
import { hostileWorld, installedTranscriptPath, SESSION, TRANSCRIPT, type HostileWorld } from './hostile-world.js';

const CHILD = join(import.meta.dirname, 'fixtures', 'pickup-child.mjs');
/** The child's own config file is the test's, not the pickup's. */
const childFiles = (p: string) => /\/child-[^/]*\.json$/.test(p);
const seat = process.env.SLEDS_SEAT;
afterEach(() => {
  disposeWorlds();
  if (seat === undefined) delete process.env.SLEDS_SEAT;
  else process.env.SLEDS_SEAT = seat;
});

/** Runs the pickup in a child killed at `killAt`; resolves with how it ended. */
function pickupInChild(h: HostileWorld, id: string, killAt: string | null): Promise<{ signal: NodeJS.Signals | null; code: number | null; stderr: string }> {
  const config = join(h.w.root, `child-${id}-${killAt}.json`);
  writeFileSync(config, JSON.stringify(h.childConfig(id, killAt)));
  return new Promise((resolve) => {
    const child = execFile(process.execPath, [CHILD, config], { env: { ...process.env, SLEDS_SEAT: 'dana' } }, (_e, _out, stderr) => resolve({ signal: child.signalCode, code: child.exitCode, stderr }));
  });
}

/** Everything a complete pickup of `id` holds, and nothing a half one leaves. */
function expectWhole(h: HostileWorld, id: string, dir: string): void {
  expect(pickedUpState(dir).files).toEqual(A_WORK_FILES);
  expect(pickedUpState(dir).head).toBe(h.w.aHead);
  const worktrees = git(h.w.b, 'worktree', 'list', '--porcelain').split('\n').filter((l) => l.startsWith('worktree '));
  expect(worktrees).toEqual([`worktree ${h.w.b}`, `worktree ${dir}`]);
  const slugDir = join(h.claudeDir, installedTranscriptPath(h.w.b, id), '..');
  expect(readdirSync(slugDir)).toEqual([`${SESSION}.jsonl`]);
  expect(readFileSync(join(slugDir, `${SESSION}.jsonl`))).toEqual(TRANSCRIPT);
  expect(h.handoffs.get(id)).toMatchObject({ direction: 'received', state: 'received', peer: 'sam' });
  expect(git(h.w.shared, 'for-each-ref', '--format=%(refname)', 'refs/sleds/picked/')).toBe(`refs/sleds/picked/${id}`);
  expect(existsSync(join(h.w.root, 'dana-state', 'handoffs', `${id}.md`))).toBe(true);
}

const STEPS = [
  ['opened', 'kpen2k2m9qa4'],
  ['base', 'kbas2k2m9qa4'],
  ['worktree', 'kwrk2k2m9qa4'],
  ['transcript', 'ktrn2k2m9qa4'],
  ['brief', 'kbrf2k2m9qa4'],
  ['marked', 'kmrk2k2m9qa4'],
] as const;

describe('a pickup killed at any step', { timeout: 60_000 }, () => {
  it.each(STEPS)('killed -9 after %s: the retry by the same recipient completes it whole', async (step, id) => {
    const h = await hostileWorld();
    await h.send(id, await h.honest());
    const killed = await pickupInChild(h, id, step);
    expect(killed.signal, killed.stderr).toBe('SIGKILL');

    const again = await h.dana().pickup(id, h.w.b);
    expect(again.again).toBe(false);
    expectWhole(h, id, again.dir);
    // And once complete, one more try says where the work is and installs nothing.
    const before = h.tree();
    expect(await h.dana().pickup(id, h.w.b)).toMatchObject({ again: true, dir: again.dir, sessionId: SESSION });
    expect(h.tree()).toBe(before);
  });

  it('killed after its worktree was made: musher\'s start undoes it, leaving no worktree, branch, transcript or record', async () => {
    const h = await hostileWorld();
    const id = 'rcv2k2m9qa4p';
    await h.send(id, await h.honest());
    const objects = (p: string) => childFiles(p) || p.startsWith(join(h.w.b, '.git', 'objects')) || p.startsWith(join(h.w.b, '.git', 'logs'));
    const before = h.tree(objects);
    expect((await pickupInChild(h, id, 'transcript')).signal).toBe('SIGKILL');
    expect(h.handoffs.get(id)?.state).toBe('picking');
    expect(h.tree(objects)).not.toBe(before);
    await h.dana().recover();
    expect(h.handoffs.get(id)).toBeNull();
    expect(git(h.w.b, 'branch', '--list', 'sleds/*')).toBe('');
    // Only the state folder the pickup made remains (empty of it); everything else is as it was.
    const left = (p: string) => objects(p) || p.startsWith(join(h.w.root, 'dana-state'));
    expect(h.tree(left)).toBe(before.split('\n').filter((l) => !l.startsWith('/dana-state')).join('\n'));
  });

  it('two pickups of one bundle at once (two prompts): one installs it, the other is told where it is', async () => {
    const h = await hostileWorld();
    const id = 'twc2k2m9qa4p';
    await h.send(id, await h.honest());
    const musher = h.dana();
    const both = await Promise.all([musher.pickup(id, h.w.b), musher.pickup(id, h.w.b)]);
    expect(both.map((p) => p.again).sort()).toEqual([false, true]);
    expect(both[0]!.dir).toBe(both[1]!.dir);
    expectWhole(h, id, both[0]!.dir);
  });

  it('a pickup that fails midway (a transcript of another content is in its place) undoes what it made', async () => {
    const h = await hostileWorld();
    const id = 'fai2k2m9qa4p';
    await h.send(id, await h.honest());
    const mine = join(h.claudeDir, installedTranscriptPath(h.w.b, id));
    mkdirSync(join(mine, '..'), { recursive: true });
    writeFileSync(mine, 'dana continued this session herself\n');
    const objects = (p: string) => p.startsWith(join(h.w.b, '.git', 'objects')) || p.startsWith(join(h.w.b, '.git', 'logs')) || p.startsWith(join(h.w.root, 'dana-state'));
    const before = h.tree(objects);
    await expect(h.dana().pickup(id, h.w.b)).rejects.toThrow(/^.*-handoff-fai2k2m9qa4p\/5e55a0de-.*\.jsonl is there already with other content — move it away, then pick up again$/);
    expect(h.tree(objects)).toBe(before);
    expect(readFileSync(mine, 'utf8')).toBe('dana continued this session herself\n');
    expect(h.handoffs.get(id)).toBeNull();
    expect(git(h.w.shared, 'for-each-ref', 'refs/sleds/picked/')).toBe('');
  });
});
