import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { resolvePaths, type SledsPaths } from '../../core/paths.js';
import { RosterFile } from '../../core/roster.js';
import { manifestBlobs, renderSnapshotBrief } from '../../core/snapshot.js';
import { packSnapshotContent, unpackSnapshotContent } from '../../musher/handoff/bundle-content.js';
import { generateSeatKeys } from '../../musher/handoff/keys.js';
import { open, seal } from '../../musher/handoff/seal.js';
import type { Log } from '../../musher/log.js';
import { readSnapshot } from '../../musher/snapshot/files.js';
import { takeSnapshot } from '../../musher/snapshot/take.js';
import { openStore, type Db } from '../../musher/store/db.js';
import { SnapshotStore } from '../../musher/store/snapshots.js';

const CLAUDE_FIXTURE = join(import.meta.dirname, '..', 'fixtures', 'pack', 'claude', 'projects', '-home-u-shop', '7f3e9a21-4c8b-4d2e-9f10-2b3c4d5e6f70.jsonl');
const NOW = Date.parse('2026-11-30T15:00:00Z');

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=Test', '-c', 'user.email=test@example.com', '-c', 'init.defaultBranch=main', ...args], { cwd, encoding: 'utf8' }).trim();
}

/** A real snapshot: a repository with a tracked change and an untracked file, and a Claude transcript. */
async function snapshotted(): Promise<{ root: string; paths: SledsPaths; id: string }> {
  const root = mkdtempSync(join(tmpdir(), 'sl-seal-'));
  const paths = resolvePaths({ SLEDS_HOME: join(root, 'sleds') }, root);
  const db: Db = openStore(paths.dbFile);
  cleanups.push(() => {
    db.close();
    rmSync(root, { recursive: true, force: true });
  });
  const repo = join(root, 'shop');
  mkdirSync(repo);
  git(repo, 'init', '-q');
  writeFileSync(join(repo, 'cart.ts'), 'export const total = 1;\n');
  git(repo, 'add', '.');
  git(repo, 'commit', '-q', '-m', 'first');
  writeFileSync(join(repo, 'cart.ts'), 'export const total = 2; // discount applied\n');
  writeFileSync(join(repo, 'notes.md'), '# what is left\nthe refund path\n');
  const tdir = join(root, 'claude', 'projects', '-home-u-shop');
  mkdirSync(tdir, { recursive: true });
  const transcript = join(tdir, '7f3e9a21-4c8b-4d2e-9f10-2b3c4d5e6f70.jsonl');
  cpSync(CLAUDE_FIXTURE, transcript);
  const log: Log = { info: () => undefined, warn: () => undefined, error: () => undefined };
  const taken = await takeSnapshot(
    {
      sessionId: '7f3e9a21-4c8b-4d2e-9f10-2b3c4d5e6f70',
      harness: 'claude-code',
      harnessVersion: '2.1.328',
      model: 'claude-opus-5-5',
      cwd: repo,
      transcriptPath: transcript,
      wallId: 'jd7k2m9qa4zp',
      bars: [],
      bindingWindow: 'five_hour',
    },
    { paths, store: new SnapshotStore(db), clock: { now: () => NOW }, log },
  );
  return { root, paths, id: taken.id };
}

describe('the bundle content: a real snapshot packed and unpacked', () => {
  it('carries the manifest, every blob it names (byte for byte) and the brief', async () => {
    const s = await snapshotted();
    const stored = await readSnapshot(s.paths, s.id);
    const packed = await packSnapshotContent(s.paths, s.id.slice(0, 8));
    const back = unpackSnapshotContent(packed);

    expect(back.snapshotId).toBe(s.id);
    expect(back.manifest).toEqual(stored.manifest);
    expect(back.brief).toBe(renderSnapshotBrief(stored.manifest));
    expect(back.brief).toContain('cart.ts');
    const named = [...new Set(manifestBlobs(stored.manifest).map((b) => b.hash))].sort();
    expect([...back.blobs.keys()].sort()).toEqual(named);
    expect(named.length).toBe(3); // transcript, patch, notes.md
    for (const hash of named) expect(back.blobs.get(hash)!.equals(await stored.readBlob(hash))).toBe(true);
    expect(back.blobs.get(stored.manifest.git!.patch!.hash)!.toString()).toContain('+export const total = 2; // discount applied');
  });

  it('sealed to a teammate and opened there, the content unpacks to the same snapshot', async () => {
    const s = await snapshotted();
    const jo = generateSeatKeys();
    const dana = generateSeatKeys();
    const roster = RosterFile.parse({ teammates: [{ handle: 'jo', keys: { x25519: jo.x25519.publicKey, ed25519: jo.ed25519.publicKey } }] });
    const bundle = seal(await packSnapshotContent(s.paths, s.id), { sender: { handle: 'jo', signingKey: jo.ed25519.privateKey }, recipient: { handle: 'dana', x25519: dana.x25519.publicKey }, nowMs: NOW });
    const opened = open(bundle, { roster, me: { handle: 'dana', x25519PrivateKey: dana.x25519.privateKey }, nowMs: NOW + 3_600_000 });
    const back = unpackSnapshotContent(opened.content);
    expect(back.snapshotId).toBe(s.id);
    expect(back.manifest.sessionId).toBe('7f3e9a21-4c8b-4d2e-9f10-2b3c4d5e6f70');
    // The snapshot files on this side were not touched by opening.
    expect(readdirSync(join(s.paths.dataDir, 'snapshots', 'manifests'))).toEqual([`${s.id}.json`]);
  });

  it('refuses a container that is not gzip, has a blob changed, misses a blob, or is a zip bomb', async () => {
    const s = await snapshotted();
    const raw = gunzipSync(await packSnapshotContent(s.paths, s.id));
    expect(() => unpackSnapshotContent(Buffer.from('plain bytes'))).toThrow("the hand-off's content is not a sleds snapshot (not gzip) — ask the sender to hand it off again");
    const changed = Buffer.from(raw);
    changed[changed.length - 3] = changed[changed.length - 3]! ^ 1;
    expect(() => unpackSnapshotContent(gzipSync(changed))).toThrow(/blob [0-9a-f]{12} does not match its hash/);
    expect(() => unpackSnapshotContent(gzipSync(raw.subarray(0, raw.length - 10)))).toThrow(/a blob is cut short/);
    expect(() => unpackSnapshotContent(gzipSync(Buffer.concat([raw, Buffer.from('x')])))).toThrow(/bytes after its last blob/);
    // An index that names no blobs while the manifest does.
    const indexLen = raw.readUInt32BE(8);
    const index = JSON.parse(raw.subarray(12, 12 + indexLen).toString());
    const thin = Buffer.from(JSON.stringify({ ...index, blobs: [] }));
    const len = Buffer.alloc(4);
    len.writeUInt32BE(thin.length);
    expect(() => unpackSnapshotContent(gzipSync(Buffer.concat([raw.subarray(0, 8), len, thin])))).toThrow(/the manifest names is missing/);
    // Zeros gzip to almost nothing; unzipping stops at the limit instead of filling memory.
    const bomb = gzipSync(Buffer.alloc(8 * 1024 * 1024));
    expect(bomb.length).toBeLessThan(16 * 1024);
    expect(() => unpackSnapshotContent(bomb, { maxBytes: 1024 * 1024 })).toThrow(/over 1048576 bytes unzipped/);
  });
});
