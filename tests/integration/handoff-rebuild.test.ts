/**
 * The worktree rebuilt from what the sealed bundle carries (work-in-progress.ts): the base commit fetched from the
 * ordinary remote or unbundled from the sealed history, the binary patch applied, the untracked files written — the
 * sender's work as they had it, with nothing of it having travelled as a branch.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { buildWipCommit, checkoutWip, ensureBase, historyFor, pickupWorktreeDir, removePickupWorktree } from '../../musher/handoff/work-in-progress.js';
import { A_WORK_FILES, A_WORK_STATUS, checkoutState, disposeWorlds, git, makeWorld, pickedUpState, type World } from './handoff-transport-world.js';

afterEach(disposeWorlds);

async function rebuild(w: World, id: string, history: Buffer | null): Promise<string> {
  await ensureBase(w.b, w.aHead, history, 'sam', { scratchDir: w.root });
  const commit = await buildWipCommit(w.b, id, w.wip, w.root);
  return (await checkoutWip(w.b, id, commit, pickupWorktreeDir(w.b, id))).dir;
}

describe('the worktree rebuilt from the sealed work in progress', () => {
  it("A's commit the remote lacks travels in the sealed history; B gets A's work uncommitted on A's HEAD, B's checkout untouched", async () => {
    const w = await makeWorld();
    const aBefore = checkoutState(w.a);
    const h = await historyFor(w.a, 'jd7k2m9qa41p', w.aHead, { scratchDir: w.root });
    expect(h.note).toBeNull();
    expect(h.history?.subarray(0, 15).toString('latin1')).toBe('# v2 git bundle');
    // Making it leaves the sender's repository as it was (the short-lived ref is gone).
    expect(checkoutState(w.a)).toBe(aBefore);
    expect(git(w.a, 'for-each-ref', 'refs/sleds/')).toBe('');

    const bBefore = checkoutState(w.b).split('\n---\n').slice(0, 5);
    const dir = await rebuild(w, 'jd7k2m9qa41p', h.history);
    expect(dir).toBe(join(w.root, 'shop-dana-handoff-jd7k2m9qa41p'));
    const got = pickedUpState(dir);
    expect(got.head).toBe(w.aHead);
    expect(got.files).toEqual(A_WORK_FILES);
    expect(got.runShMode).toBe(0o755);
    expect(got.status.split('\n').sort()).toEqual(A_WORK_STATUS);
    expect(git(dir, 'symbolic-ref', '--short', 'HEAD')).toBe('sleds/handoff/jd7k2m9qa41p');
    expect(checkoutState(w.b).split('\n---\n').slice(0, 5)).toEqual(bBefore);
    // Only the pickup's own local branch: nothing under refs/sleds/, no remote ref moved.
    expect(git(w.b, 'for-each-ref', '--format=%(refname)').split('\n').sort()).toEqual(['refs/heads/main', 'refs/heads/sleds/handoff/jd7k2m9qa41p', 'refs/remotes/origin/HEAD', 'refs/remotes/origin/main']);
  });

  it('history over the cap stays home with a note naming its size (the pickup then needs the base on the remote)', async () => {
    const w = await makeWorld();
    const h = await historyFor(w.a, 'cap2k2m9qa41', w.aHead, { maxBytes: 16 });
    expect(h.history).toBeNull();
    expect(h.note).toMatch(/^the commits up to [0-9a-f]{12} that origin lacks are \d+\.\d MB, over the 0\.0 MB a hand-off carries$/);
  });

  it('a base the remote has needs no history: it is fetched by id from the ordinary remote', async () => {
    const w = await makeWorld();
    git(w.a, 'push', '-q', 'origin', 'HEAD:refs/heads/sam-work');
    git(w.a, 'fetch', '-q', 'origin');
    expect(await historyFor(w.a, 'pus2k2m9qa41', w.aHead)).toEqual({ history: null, note: null });
    const dir = await rebuild(w, 'pus2k2m9qa41', null);
    expect(pickedUpState(dir).files).toEqual(A_WORK_FILES);
  });

  it('refuses in one line when the base is on neither the remote nor in the hand-off, or its history lacks what it needs', async () => {
    const w = await makeWorld();
    const before = checkoutState(w.b);
    await expect(ensureBase(w.b, w.aHead, null, 'sam')).rejects.toThrow(
      `the base commit ${w.aHead.slice(0, 12)} of this hand-off is not on origin and did not come with it — ask sam to push their branch, then pick up again`,
    );
    // The sender's side said why the commits did not come (too large for a hand-off): the refusal says so too.
    await expect(ensureBase(w.b, w.aHead, null, 'sam', { historyNote: 'the commits up to x are 90 MB, over the 64 MB a hand-off carries' })).rejects.toThrow(
      'did not come with it (the commits up to x are 90 MB, over the 64 MB a hand-off carries) — ask sam to push their branch',
    );
    // An unrelated repository without A's first commit: the history's prerequisite is missing.
    const lone = join(w.root, 'lone');
    mkdirSync(lone);
    git(lone, 'init', '-q');
    const h = await historyFor(w.a, 'lon2k2m9qa41', w.aHead);
    await expect(ensureBase(lone, w.aHead, h.history, 'sam')).rejects.toThrow(/^the base commit [0-9a-f]{12} of this hand-off needs commits this repository lacks \(.*\) — pull from the remote, or ask sam to push their branch$/);
    expect(checkoutState(w.b)).toBe(before);
  });

  it('refuses when the patch does not apply to the base, before any worktree is made', async () => {
    const w = await makeWorld();
    await ensureBase(w.b, w.aHead, (await historyFor(w.a, 'pat2k2m9qa41', w.aHead)).history, 'sam');
    const broken = { ...w.wip, patch: Buffer.from(w.wip.patch!.toString('utf8').replace('-two', '-not what the base has')) };
    await expect(buildWipCommit(w.b, 'pat2k2m9qa41', broken, w.root)).rejects.toThrow(/^the hand-off's changes do not apply to its base commit [0-9a-f]{12}: /);
    expect(existsSync(pickupWorktreeDir(w.b, 'pat2k2m9qa41'))).toBe(false);
  });

  it('undoing a pickup removes its worktree and branch, and never a folder git does not list as its worktree', async () => {
    const w = await makeWorld();
    const dir = await rebuild(w, 'und2k2m9qa41', (await historyFor(w.a, 'und2k2m9qa41', w.aHead)).history);
    await removePickupWorktree(w.b, 'und2k2m9qa41', dir);
    expect(existsSync(dir)).toBe(false);
    expect(git(w.b, 'branch', '--list', 'sleds/*')).toBe('');
    // A folder of the user's that happens to have the name is left alone.
    const theirs = pickupWorktreeDir(w.b, 'usr2k2m9qa41');
    mkdirSync(theirs);
    writeFileSync(join(theirs, 'mine.txt'), 'dana keeps this\n');
    await removePickupWorktree(w.b, 'usr2k2m9qa41', theirs);
    expect(existsSync(join(theirs, 'mine.txt'))).toBe(true);
  });
});
