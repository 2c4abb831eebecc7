import { readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FolderTransport } from '../../musher/handoff/folder-transport.js';
import { checkoutWip } from '../../musher/handoff/wip-branch.js';
import { A_WORK_FILES, A_WORK_STATUS, checkoutState, DAY, disposeWorlds, fakeBundle, git, makeWorld, NOW, pickedUpState, readExpiry, type World } from './handoff-transport-world.js';

afterEach(disposeWorlds);

function folder(w: World, repoDir: string | null, now = NOW): FolderTransport {
  return new FolderTransport({ dir: join(w.root, 'Dropbox', 'handoffs'), repoDir, readExpiry, clock: { now: () => now }, scratchDir: w.root });
}

describe('folder transport: a shared folder, no common remote', () => {
  it('A sends; B (an unrelated repository) fetches the same bytes and picks the work up in a new worktree; A untouched', async () => {
    const w = await makeWorld({ bClonesShared: false });
    const before = checkoutState(w.a);
    const a = folder(w, w.a);
    const dir = join(w.root, 'Dropbox', 'handoffs');
    expect(a.describe()).toBe(`shared folder ${dir}`);
    const bundle = fakeBundle(NOW + 7 * DAY);

    const sent = await a.send({ id: 'jd7k2m9qa41p', bundle, wip: w.wip });
    expect(sent).toEqual({ ref: join(dir, 'jd7k2m9qa41p.sleds'), branch: join(dir, 'jd7k2m9qa41p.wip.bundle') });
    expect(checkoutState(w.a)).toBe(before);
    expect(readdirSync(dir).sort()).toEqual(['jd7k2m9qa41p.sleds', 'jd7k2m9qa41p.wip.bundle']);
    for (const f of readdirSync(dir)) expect(statSync(join(dir, f)).mode & 0o777).toBe(0o600);
    await expect(a.send({ id: 'jd7k2m9qa41p', bundle, wip: null })).rejects.toThrow(`a hand-off jd7k2m9qa41p is already in ${dir}`);

    // B shares no history with A: the WIP bundle carries all of it.
    git(w.b, 'commit', '-q', '--allow-empty', '-m', "dana's own start");
    const b = folder(w, w.b);
    expect((await b.fetch('jd7k2m9qa41p')).equals(bundle)).toBe(true);
    await b.bringWip('jd7k2m9qa41p');
    const out = await checkoutWip(w.b, 'jd7k2m9qa41p', 'worktree');
    expect(out.dir).toBe(join(w.root, 'shop-dana-handoff-jd7k2m9qa41p'));
    const got = pickedUpState(out.dir);
    expect(got.head).toBe(w.aHead);
    expect(got.files).toEqual(A_WORK_FILES);
    expect(got.status.split('\n').sort()).toEqual(A_WORK_STATUS);
    expect(checkoutState(w.a)).toBe(before);
    // The sender keeps no ref behind for the bundle it made.
    expect(git(w.a, 'for-each-ref', 'refs/sleds/')).toBe('');
  });

  it('refuses to pick up into a dirty current checkout, and does so into a clean one', async () => {
    const w = await makeWorld();
    await folder(w, w.a).send({ id: 'cur2k2m9qa41', bundle: fakeBundle(NOW + DAY), wip: w.wip });
    const b = folder(w, w.b);
    await b.fetch('cur2k2m9qa41');
    await b.bringWip('cur2k2m9qa41');
    writeFileSync(join(w.b, 'a.txt'), 'dana edits\n');
    const dirty = checkoutState(w.b);
    await expect(checkoutWip(w.b, 'cur2k2m9qa41', 'current')).rejects.toThrow(`${w.b} has uncommitted changes — commit or stash them, or pick up into a new worktree`);
    expect(checkoutState(w.b)).toBe(dirty);
    git(w.b, 'checkout', '-q', '--', 'a.txt');
    const out = await checkoutWip(w.b, 'cur2k2m9qa41', 'current');
    expect(out.dir).toBe(w.b);
    expect(pickedUpState(w.b).head).toBe(w.aHead);
    expect(pickedUpState(w.b).files['notes.md']).toBe('# notes\nuntracked\n');
  });

  it('lists with expiry and prunes only the expired hand-offs, with their WIP and pickup mark', async () => {
    const w = await makeWorld();
    const a = folder(w, w.a);
    const dir = join(w.root, 'Dropbox', 'handoffs');
    await a.send({ id: 'old2k2m9qa41', bundle: fakeBundle(NOW - 1), wip: w.wip });
    await a.send({ id: 'new2k2m9qa41', bundle: fakeBundle(NOW + DAY), wip: w.wip });
    await a.send({ id: 'odd2k2m9qa41', bundle: Buffer.from('no header we can read'), wip: null });
    await folder(w, w.b).markPickedUp('old2k2m9qa41', 'dana');
    expect(await a.list()).toEqual([
      { id: 'new2k2m9qa41', expiresAt: NOW + DAY },
      { id: 'odd2k2m9qa41', expiresAt: null },
      { id: 'old2k2m9qa41', expiresAt: NOW - 1 },
    ]);
    expect(await a.prune(NOW)).toEqual(['old2k2m9qa41']);
    expect(readdirSync(dir).sort()).toEqual(['new2k2m9qa41.sleds', 'new2k2m9qa41.wip.bundle', 'odd2k2m9qa41.sleds']);
    await expect(folder(w, w.b).fetch('old2k2m9qa41')).rejects.toThrow(`no hand-off old2k2m9qa41 in shared folder ${dir}`);
    expect(await a.prune(NOW)).toEqual([]);
  });

  it('allows one pickup per bundle, and says so in one line when the hand-off is missing', async () => {
    const w = await makeWorld();
    const dir = join(w.root, 'Dropbox', 'handoffs');
    expect(await folder(w, w.b).list()).toEqual([]);
    await folder(w, w.a).send({ id: 'one2k2m9qa41', bundle: fakeBundle(NOW + DAY), wip: null });
    const b = folder(w, w.b);
    expect(await b.isPickedUp('one2k2m9qa41')).toBeNull();
    await b.markPickedUp('one2k2m9qa41', 'dana');
    expect(statSync(join(dir, 'one2k2m9qa41.picked')).mode & 0o777).toBe(0o600);
    expect(await folder(w, w.a).isPickedUp('one2k2m9qa41')).toEqual({ by: 'dana', atMs: NOW });
    await expect(folder(w, null, NOW + 60_000).markPickedUp('one2k2m9qa41', 'eve')).rejects.toThrow(
      'hand-off one2k2m9qa41 was already picked up by dana at 2026-11-30T15:00:00.000Z — one pickup per hand-off',
    );
    await expect(b.fetch('zzz2k2m9qa41')).rejects.toThrow(`no hand-off zzz2k2m9qa41 in shared folder ${dir} — check the id; an expired one is pruned`);
    await expect(b.markPickedUp('zzz2k2m9qa41', 'dana')).rejects.toThrow(`no hand-off zzz2k2m9qa41 in shared folder ${dir}`);
    await expect(b.fetch('../x')).rejects.toThrow("'../x' is not a hand-off id");
    // A bundle sent without WIP: fetch brings no WIP, and checkout says so.
    await b.fetch('one2k2m9qa41');
    await b.bringWip('one2k2m9qa41');
    await expect(checkoutWip(w.b, 'one2k2m9qa41', 'worktree')).rejects.toThrow(`no work in progress for hand-off one2k2m9qa41 in ${w.b} — fetch the hand-off first`);
  });
});
