import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FolderTransport } from '../../musher/handoff/folder-transport.js';
import { DAY, disposeWorlds, fakeBundle, makeWorld, NOW, readExpiry, type World } from './handoff-transport-world.js';

afterEach(disposeWorlds);

function folder(w: World, now = NOW, maxBundleBytes?: number): FolderTransport {
  return new FolderTransport({ dir: join(w.root, 'Dropbox', 'handoffs'), readExpiry, clock: { now: () => now }, ...(maxBundleBytes ? { maxBundleBytes } : {}) });
}

describe('folder transport: a shared folder, no common remote', () => {
  it('A writes the sealed bundle alone (0600); B reads the same bytes', async () => {
    const w = await makeWorld({ bClonesShared: false });
    const a = folder(w);
    const dir = join(w.root, 'Dropbox', 'handoffs');
    expect(a.describe()).toBe(`shared folder ${dir}`);
    const bundle = fakeBundle(NOW + 7 * DAY);

    expect(await a.send({ id: 'jd7k2m9qa41p', bundle })).toEqual({ ref: join(dir, 'jd7k2m9qa41p.sleds') });
    // No work in progress beside it: it is inside the seal.
    expect(readdirSync(dir)).toEqual(['jd7k2m9qa41p.sleds']);
    expect(statSync(join(dir, 'jd7k2m9qa41p.sleds')).mode & 0o777).toBe(0o600);
    // The same bundle again is a retried send; another under the same id is refused.
    expect(await a.send({ id: 'jd7k2m9qa41p', bundle })).toEqual({ ref: join(dir, 'jd7k2m9qa41p.sleds') });
    await expect(a.send({ id: 'jd7k2m9qa41p', bundle: fakeBundle(NOW) })).rejects.toThrow(`a hand-off jd7k2m9qa41p is already in ${dir}`);
    expect((await folder(w).fetch('jd7k2m9qa41p')).equals(bundle)).toBe(true);
  });

  it('refuses a bundle that is a symlink, a FIFO or over the size cap, before reading it', async () => {
    const w = await makeWorld();
    const dir = join(w.root, 'Dropbox', 'handoffs');
    mkdirSync(dir, { recursive: true });
    const secret = join(w.root, 'secret.txt');
    writeFileSync(secret, 'not for the shared folder\n');
    symlinkSync(secret, join(dir, 'lnk2k2m9qa41.sleds'));
    execFileSync('mkfifo', [join(dir, 'ffo2k2m9qa41.sleds')]);
    writeFileSync(join(dir, 'big2k2m9qa41.sleds'), Buffer.concat([fakeBundle(NOW + DAY), Buffer.alloc(4096)]));
    const b = folder(w, NOW, 1024);
    await expect(b.fetch('lnk2k2m9qa41')).rejects.toThrow(`hand-off lnk2k2m9qa41 in shared folder ${dir} is a symlink — it was not made by sleds; nothing was read`);
    await expect(b.fetch('ffo2k2m9qa41')).rejects.toThrow(`hand-off ffo2k2m9qa41 in shared folder ${dir} is not a file — it was not made by sleds; nothing was read`);
    await expect(b.fetch('big2k2m9qa41')).rejects.toThrow(/^hand-off big2k2m9qa41 in shared folder .* is 4\d{3} bytes, over the 1024-byte limit of a bundle/);
    // Listed without an expiry (never pruned on a guess), the listing neither blocks on the FIFO nor follows the link.
    expect(await b.list()).toEqual([
      { id: 'big2k2m9qa41', expiresAt: null },
      { id: 'ffo2k2m9qa41', expiresAt: null },
      { id: 'lnk2k2m9qa41', expiresAt: null },
    ]);
  });

  it('lists with expiry and prunes only the expired hand-offs, with their pickup mark and an old clear WIP file', async () => {
    const w = await makeWorld();
    const a = folder(w);
    const dir = join(w.root, 'Dropbox', 'handoffs');
    await a.send({ id: 'old2k2m9qa41', bundle: fakeBundle(NOW - 1) });
    await a.send({ id: 'new2k2m9qa41', bundle: fakeBundle(NOW + DAY) });
    await a.send({ id: 'odd2k2m9qa41', bundle: Buffer.from('no header we can read') });
    writeFileSync(join(dir, 'old2k2m9qa41.wip.bundle'), 'what sleds before the seal left beside it');
    await folder(w).markPickedUp('old2k2m9qa41', 'dana');
    expect(await a.list()).toEqual([
      { id: 'new2k2m9qa41', expiresAt: NOW + DAY },
      { id: 'odd2k2m9qa41', expiresAt: null },
      { id: 'old2k2m9qa41', expiresAt: NOW - 1 },
    ]);
    expect(await a.prune(NOW)).toEqual(['old2k2m9qa41']);
    expect(readdirSync(dir).sort()).toEqual(['new2k2m9qa41.sleds', 'odd2k2m9qa41.sleds']);
    await expect(folder(w).fetch('old2k2m9qa41')).rejects.toThrow(`no hand-off old2k2m9qa41 in shared folder ${dir}`);
    expect(await a.prune(NOW)).toEqual([]);
  });

  it('allows one pickup per bundle, and says so in one line when the hand-off is missing', async () => {
    const w = await makeWorld();
    const dir = join(w.root, 'Dropbox', 'handoffs');
    expect(await folder(w).list()).toEqual([]);
    await folder(w).send({ id: 'one2k2m9qa41', bundle: fakeBundle(NOW + DAY) });
    const b = folder(w);
    expect(await b.isPickedUp('one2k2m9qa41')).toBeNull();
    await b.markPickedUp('one2k2m9qa41', 'dana');
    expect(statSync(join(dir, 'one2k2m9qa41.picked')).mode & 0o777).toBe(0o600);
    expect(await folder(w).isPickedUp('one2k2m9qa41')).toEqual({ by: 'dana', atMs: NOW });
    await b.markPickedUp('one2k2m9qa41', 'dana');
    await expect(folder(w, NOW + 60_000).markPickedUp('one2k2m9qa41', 'eve')).rejects.toThrow(
      'hand-off one2k2m9qa41 was already picked up by dana at 2026-11-30T15:00:00.000Z — one pickup per hand-off',
    );
    await expect(b.fetch('zzz2k2m9qa41')).rejects.toThrow(`no hand-off zzz2k2m9qa41 in shared folder ${dir} — check the id; an expired one is pruned`);
    await expect(b.markPickedUp('zzz2k2m9qa41', 'dana')).rejects.toThrow(`no hand-off zzz2k2m9qa41 in shared folder ${dir}`);
    await expect(b.fetch('../x')).rejects.toThrow('"../x" is not a hand-off id');
  });
});
