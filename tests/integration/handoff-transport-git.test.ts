import { existsSync, mkdirSync, writeFileSync, chmodSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { checkoutWip, NO_REMOTE, openGitTransport, type GitTransport } from '../../musher/handoff/git-transport.js';
import { A_WORK_FILES, A_WORK_STATUS, checkoutState, DAY, disposeWorlds, fakeBundle, git, makeWorld, NOW, pickedUpState, readExpiry, type World } from './handoff-transport-world.js';

afterEach(disposeWorlds);

const clock = { now: () => NOW };
function transport(w: World, repoDir: string): Promise<GitTransport> {
  return openGitTransport({ repoDir, readExpiry, clock, scratchDir: w.root });
}

function remoteRefs(w: World): string[] {
  const out = git(w.shared, 'for-each-ref', '--format=%(refname)');
  return out === '' ? [] : out.split('\n').sort();
}

describe('git transport: the repository’s own remote', () => {
  it('A sends; B fetches the same bytes and picks the work up in a new worktree; A’s checkout is untouched', async () => {
    const w = await makeWorld();
    const before = checkoutState(w.a);
    const a = await transport(w, w.a);
    expect(a.describe()).toBe(`git remote origin (${w.shared})`);
    const bundle = fakeBundle(NOW + 7 * DAY);

    const sent = await a.send({ id: 'jd7k2m9qa41p', bundle, wip: w.wip });
    expect(sent).toEqual({ ref: 'refs/sleds/handoffs/jd7k2m9qa41p', branch: 'sleds/handoff/jd7k2m9qa41p' });
    expect(checkoutState(w.a)).toBe(before);
    expect(remoteRefs(w)).toEqual(['refs/heads/main', 'refs/heads/sleds/handoff/jd7k2m9qa41p', 'refs/sleds/handoffs/jd7k2m9qa41p']);

    const b = await transport(w, w.b);
    const objectsBefore = git(w.b, 'count-objects', '-v');
    const fetched = await b.fetch('jd7k2m9qa41p');
    expect(fetched.equals(bundle)).toBe(true);
    // Read before it is verified: nothing of it lands in B's repository, not a ref, not an object.
    expect(git(w.b, 'for-each-ref', 'refs/sleds/')).toBe('');
    expect(git(w.b, 'count-objects', '-v')).toBe(objectsBefore);
    await b.bringWip('jd7k2m9qa41p');
    const bBefore = checkoutState(w.b);

    const out = await checkoutWip(w.b, 'jd7k2m9qa41p', 'worktree');
    expect(out).toEqual({ dir: join(w.root, 'shop-dana-handoff-jd7k2m9qa41p'), branch: 'sleds/handoff/jd7k2m9qa41p' });
    const got = pickedUpState(out.dir);
    // HEAD is A's own commit, which the remote did not have before: the WIP branch carried it along.
    expect(got.head).toBe(w.aHead);
    expect(got.files).toEqual(A_WORK_FILES);
    expect(got.runShMode).toBe(0o755);
    // The changes are uncommitted on top of A's HEAD, as A had them.
    expect(got.status.split('\n').sort()).toEqual(A_WORK_STATUS);
    // B's own checkout stays where it was.
    expect(checkoutState(w.b).split('\n---\n').slice(0, 5)).toEqual(bBefore.split('\n---\n').slice(0, 5));
    expect(checkoutState(w.a)).toBe(before);
  });

  it('picks up into the current checkout only when it is clean', async () => {
    const w = await makeWorld();
    const a = await transport(w, w.a);
    await a.send({ id: 'cur2k2m9qa41', bundle: fakeBundle(NOW + DAY), wip: w.wip });
    const b = await transport(w, w.b);
    await b.fetch('cur2k2m9qa41');
    await b.bringWip('cur2k2m9qa41');

    writeFileSync(join(w.b, 'scratch.txt'), 'dana was here\n');
    const dirty = checkoutState(w.b);
    await expect(checkoutWip(w.b, 'cur2k2m9qa41', 'current')).rejects.toThrow(`${w.b} has uncommitted changes — commit or stash them, or pick up into a new worktree`);
    expect(checkoutState(w.b)).toBe(dirty);

    git(w.b, 'clean', '-q', '-f');
    const out = await checkoutWip(w.b, 'cur2k2m9qa41', 'current');
    expect(out).toEqual({ dir: w.b, branch: 'sleds/handoff/cur2k2m9qa41' });
    expect(git(w.b, 'symbolic-ref', '--short', 'HEAD')).toBe('sleds/handoff/cur2k2m9qa41');
    expect(pickedUpState(w.b).head).toBe(w.aHead);
    expect(pickedUpState(w.b).files['a.txt']).toBe('one\nTWO\nthree\nfour\n');
    // A second checkout of the same hand-off is refused rather than clobbering the first.
    await expect(checkoutWip(w.b, 'cur2k2m9qa41', 'worktree')).rejects.toThrow('branch sleds/handoff/cur2k2m9qa41 exists already');
  });

  it('lists hand-offs with their expiry and prunes only the expired ones, bundle, branch and pickup mark', async () => {
    const w = await makeWorld();
    const a = await transport(w, w.a);
    await a.send({ id: 'old2k2m9qa41', bundle: fakeBundle(NOW - 1), wip: w.wip });
    await a.send({ id: 'new2k2m9qa41', bundle: fakeBundle(NOW + DAY), wip: w.wip });
    await a.send({ id: 'odd2k2m9qa41', bundle: Buffer.from('no header we can read'), wip: null });
    const b = await transport(w, w.b);
    await b.markPickedUp('old2k2m9qa41', 'dana');

    expect(await b.list()).toEqual([
      { id: 'new2k2m9qa41', expiresAt: NOW + DAY },
      { id: 'odd2k2m9qa41', expiresAt: null },
      { id: 'old2k2m9qa41', expiresAt: NOW - 1 },
    ]);
    expect(await a.prune(NOW)).toEqual(['old2k2m9qa41']);
    expect(remoteRefs(w)).toEqual([
      'refs/heads/main',
      'refs/heads/sleds/handoff/new2k2m9qa41',
      'refs/sleds/handoffs/new2k2m9qa41',
      'refs/sleds/handoffs/odd2k2m9qa41',
    ]);
    await expect(b.fetch('old2k2m9qa41')).rejects.toThrow(`no hand-off old2k2m9qa41 on git remote origin (${w.shared})`);
    expect(await a.prune(NOW)).toEqual([]);
    expect((await b.list()).map((h) => h.id)).toEqual(['new2k2m9qa41', 'odd2k2m9qa41']);
  });

  it('allows one pickup per bundle', async () => {
    const w = await makeWorld();
    const a = await transport(w, w.a);
    await a.send({ id: 'one2k2m9qa41', bundle: fakeBundle(NOW + DAY), wip: w.wip });
    const b = await transport(w, w.b);
    expect(await b.isPickedUp('one2k2m9qa41')).toBeNull();
    await b.markPickedUp('one2k2m9qa41', 'dana');
    expect(await a.isPickedUp('one2k2m9qa41')).toEqual({ by: 'dana', atMs: NOW });
    // Another clone (a second machine) tries the same bundle.
    const c = join(w.root, 'shop-eve');
    git(w.root, 'clone', '-q', w.shared, c);
    const eve = await openGitTransport({ repoDir: c, readExpiry, clock: { now: () => NOW + 60_000 }, scratchDir: w.root });
    await expect(eve.markPickedUp('one2k2m9qa41', 'eve')).rejects.toThrow(
      'hand-off one2k2m9qa41 was already picked up by dana at 2026-11-30T15:00:00.000Z — one pickup per hand-off',
    );
    expect(await eve.isPickedUp('one2k2m9qa41')).toEqual({ by: 'dana', atMs: NOW });
  });

  it('says so in one line when the remote, the ref or the push is missing', async () => {
    const w = await makeWorld();
    const lonely = join(w.root, 'lonely');
    mkdirSync(lonely);
    git(lonely, 'init', '-q');
    await expect(transport(w, lonely)).rejects.toThrow(NO_REMOTE);
    expect(NO_REMOTE).toBe('this repository has no remote — set one, or a shared folder in the policy: handoff: {folder: …}');
    await expect(transport(w, w.root)).rejects.toThrow(`${w.root} is not in a git repository`);

    const b = await transport(w, w.b);
    await expect(b.fetch('zzz2k2m9qa41')).rejects.toThrow(`no hand-off zzz2k2m9qa41 on git remote origin (${w.shared}) — check the id; an expired one is pruned`);
    await expect(b.fetch('../../etc')).rejects.toThrow("'../../etc' is not a hand-off id");

    // The remote refuses every push.
    const hook = join(w.shared, 'hooks', 'pre-receive');
    writeFileSync(hook, '#!/bin/sh\necho "pushes are frozen" >&2\nexit 1\n');
    chmodSync(hook, 0o755);
    const a = await transport(w, w.a);
    const before = checkoutState(w.a);
    await expect(a.send({ id: 'rej2k2m9qa41', bundle: fakeBundle(NOW + DAY), wip: w.wip })).rejects.toThrow(
      /^push of hand-off rej2k2m9qa41 to git remote origin \(.*\) was rejected: .*pre-receive hook declined.* — check that you may push there/,
    );
    expect(checkoutState(w.a)).toBe(before);
    expect(existsSync(join(w.root, 'shop-handoff-rej2k2m9qa41'))).toBe(false);
  });
});
