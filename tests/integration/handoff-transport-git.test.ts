import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { NO_REMOTE, openGitTransport, type GitTransport } from '../../musher/handoff/git-transport.js';
import { checkoutState, DAY, disposeWorlds, fakeBundle, git, makeWorld, NOW, readExpiry, type World } from './handoff-transport-world.js';

afterEach(disposeWorlds);

const clock = { now: () => NOW };
function transport(repoDir: string, opts: { maxBundleBytes?: number } = {}): Promise<GitTransport> {
  return openGitTransport({ repoDir, readExpiry, clock, ...opts });
}

function remoteRefs(w: World): string[] {
  const out = git(w.shared, 'for-each-ref', '--format=%(refname)');
  return out === '' ? [] : out.split('\n').sort();
}

/** What reading from the remote could leave in a clone: its refs and its objects. */
function repoFootprint(repo: string): string {
  return [git(repo, 'for-each-ref'), git(repo, 'count-objects', '-v'), git(repo, 'worktree', 'list', '--porcelain')].join('\n---\n');
}

describe('git transport: the repository’s own remote', () => {
  it('A sends the sealed bundle and nothing else; B reads the same bytes, and nothing of them lands in B', async () => {
    const w = await makeWorld();
    const before = checkoutState(w.a);
    const a = await transport(w.a);
    expect(a.describe()).toBe(`git remote origin (${w.shared})`);
    const bundle = fakeBundle(NOW + 7 * DAY);

    expect(await a.send({ id: 'jd7k2m9qa41p', bundle })).toEqual({ ref: 'refs/sleds/handoffs/jd7k2m9qa41p' });
    expect(checkoutState(w.a)).toBe(before);
    // No branch of work in progress travels in the clear: the remote holds the bundle's ref alone.
    expect(remoteRefs(w)).toEqual(['refs/heads/main', 'refs/sleds/handoffs/jd7k2m9qa41p']);

    const b = await transport(w.b);
    const bBefore = repoFootprint(w.b);
    const fetched = await b.fetch('jd7k2m9qa41p');
    expect(fetched.equals(bundle)).toBe(true);
    // Read before it is verified: nothing of it lands in B's repository, not a ref, not an object.
    expect(repoFootprint(w.b)).toBe(bBefore);
    // Sending the same bundle again (a musher that stopped before it recorded the push) is not an error.
    expect(await a.send({ id: 'jd7k2m9qa41p', bundle })).toEqual({ ref: 'refs/sleds/handoffs/jd7k2m9qa41p' });
  });

  it('refuses a bundle over the size cap before reading it', async () => {
    const w = await makeWorld();
    await (await transport(w.a)).send({ id: 'big2k2m9qa41', bundle: Buffer.concat([fakeBundle(NOW + DAY), Buffer.alloc(4096, 7)]) });
    const b = await transport(w.b, { maxBundleBytes: 1024 });
    const before = repoFootprint(w.b);
    await expect(b.fetch('big2k2m9qa41')).rejects.toThrow(
      /^hand-off big2k2m9qa41 on git remote origin \(.*\) is 4\d{3} bytes, over the 1024-byte limit of a bundle — it was not made by sleds; nothing was read$/,
    );
    expect(repoFootprint(w.b)).toBe(before);
    // The listing still names it (its header is read from the first bytes), and prune may remove it.
    expect(await b.list()).toEqual([{ id: 'big2k2m9qa41', expiresAt: null }]);
  });

  it('lists and prunes through a scratch repository: only the expired go (bundle, pickup mark, an old clear WIP branch), nothing lands in the clone', async () => {
    const w = await makeWorld();
    const a = await transport(w.a);
    await a.send({ id: 'old2k2m9qa41', bundle: fakeBundle(NOW - 1) });
    await a.send({ id: 'new2k2m9qa41', bundle: fakeBundle(NOW + DAY) });
    await a.send({ id: 'odd2k2m9qa41', bundle: Buffer.from('no header we can read') });
    // What sleds before the sealed work in progress pushed beside an old bundle.
    git(w.a, 'push', '-q', 'origin', 'HEAD:refs/heads/sleds/handoff/old2k2m9qa41');
    const b = await transport(w.b);
    await b.markPickedUp('old2k2m9qa41', 'dana');

    const bBefore = repoFootprint(w.b);
    expect(await b.list()).toEqual([
      { id: 'new2k2m9qa41', expiresAt: NOW + DAY },
      { id: 'odd2k2m9qa41', expiresAt: null },
      { id: 'old2k2m9qa41', expiresAt: NOW - 1 },
    ]);
    expect(repoFootprint(w.b)).toBe(bBefore);
    expect(await a.prune(NOW)).toEqual(['old2k2m9qa41']);
    expect(remoteRefs(w)).toEqual(['refs/heads/main', 'refs/sleds/handoffs/new2k2m9qa41', 'refs/sleds/handoffs/odd2k2m9qa41']);
    await expect(b.fetch('old2k2m9qa41')).rejects.toThrow(`no hand-off old2k2m9qa41 on git remote origin (${w.shared})`);
    expect(await a.prune(NOW)).toEqual([]);
    expect((await b.list()).map((h) => h.id)).toEqual(['new2k2m9qa41', 'odd2k2m9qa41']);
  });

  it('allows one pickup per bundle: a second mark by the same seat is no error, by another it is', async () => {
    const w = await makeWorld();
    const a = await transport(w.a);
    await a.send({ id: 'one2k2m9qa41', bundle: fakeBundle(NOW + DAY) });
    const b = await transport(w.b);
    expect(await b.isPickedUp('one2k2m9qa41')).toBeNull();
    await b.markPickedUp('one2k2m9qa41', 'dana');
    expect(await a.isPickedUp('one2k2m9qa41')).toEqual({ by: 'dana', atMs: NOW });
    await b.markPickedUp('one2k2m9qa41', 'dana');
    // Another clone (a second machine) tries the same bundle.
    const c = join(w.root, 'shop-eve');
    git(w.root, 'clone', '-q', w.shared, c);
    const eve = await openGitTransport({ repoDir: c, readExpiry, clock: { now: () => NOW + 60_000 } });
    await expect(eve.markPickedUp('one2k2m9qa41', 'eve')).rejects.toThrow(
      'hand-off one2k2m9qa41 was already picked up by dana at 2026-11-30T15:00:00.000Z — one pickup per hand-off',
    );
    expect(await eve.isPickedUp('one2k2m9qa41')).toEqual({ by: 'dana', atMs: NOW });
  });

  it('a pickup mark that is not a handle reads as "someone", never as a name to show', async () => {
    const w = await makeWorld();
    const a = await transport(w.a);
    await a.send({ id: 'mrk2k2m9qa41', bundle: fakeBundle(NOW + DAY) });
    // Anyone who can push writes a mark of their own making.
    const evil = join(w.root, 'evil');
    git(w.root, 'clone', '-q', w.shared, evil);
    writeFileSync(join(evil, 'picked-up.json'), JSON.stringify({ by: '\u001b]0;pwned\u0007 dana', atMs: 'soon' }));
    git(evil, 'checkout', '-q', '--orphan', 'mark');
    git(evil, 'add', 'picked-up.json');
    git(evil, 'commit', '-q', '-m', 'mark');
    git(evil, 'push', '-q', 'origin', 'HEAD:refs/sleds/picked/mrk2k2m9qa41');
    expect(await a.isPickedUp('mrk2k2m9qa41')).toEqual({ by: 'someone', atMs: null });
  });

  it('says so in one line when the remote, the ref or the push is missing', async () => {
    const w = await makeWorld();
    const lonely = join(w.root, 'lonely');
    mkdirSync(lonely);
    git(lonely, 'init', '-q');
    await expect(transport(lonely)).rejects.toThrow(NO_REMOTE);
    expect(NO_REMOTE).toBe('this repository has no remote — set one, or a shared folder in the policy: handoff: {folder: …}');
    await expect(transport(w.root)).rejects.toThrow(`${w.root} is not in a git repository`);

    const b = await transport(w.b);
    await expect(b.fetch('zzz2k2m9qa41')).rejects.toThrow(`no hand-off zzz2k2m9qa41 on git remote origin (${w.shared}) — check the id; an expired one is pruned`);
    await expect(b.fetch('../../etc')).rejects.toThrow('"../../etc" is not a hand-off id');

    // The remote refuses every push.
    const hook = join(w.shared, 'hooks', 'pre-receive');
    writeFileSync(hook, '#!/bin/sh\necho "pushes are frozen" >&2\nexit 1\n');
    chmodSync(hook, 0o755);
    const a = await transport(w.a);
    const before = checkoutState(w.a);
    await expect(a.send({ id: 'rej2k2m9qa41', bundle: fakeBundle(NOW + DAY) })).rejects.toThrow(
      /^push of hand-off rej2k2m9qa41 to git remote origin \(.*\) was rejected: .*pre-receive hook declined.* — check that you may push there/,
    );
    expect(checkoutState(w.a)).toBe(before);
    expect(existsSync(join(w.root, 'shop-handoff-rej2k2m9qa41'))).toBe(false);
  });
});
