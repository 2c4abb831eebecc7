/**
 * The world the transport tests run in: a bare repository as the shared remote, the sender's clone A with work in
 * progress (a commit not pushed yet, a changed tracked file, a staged new file, a new untracked file, an ignored
 * file, an executable script), the teammate's clone B, and a snapshot of A taken by the real snapshot code.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolvePaths, type SledsPaths } from '../../core/paths.js';
import type { Log } from '../../musher/log.js';
import { readSnapshot } from '../../musher/snapshot/files.js';
import { takeSnapshot } from '../../musher/snapshot/take.js';
import { openStore, type Db } from '../../musher/store/db.js';
import { SnapshotStore } from '../../musher/store/snapshots.js';
import type { WipSource } from '../../musher/handoff/transport.js';
import { wipFromGit } from '../../musher/handoff/work-in-progress.js';
import { manifestBlobs } from '../../core/snapshot.js';

export const NOW = Date.parse('2026-11-30T15:00:00Z');
/** The session the world's snapshot is of (a harness session id is a UUID). */
export const SESSION = '5e55a0de-0000-4000-8000-000000000001';
export const DAY = 24 * 60 * 60 * 1000;

export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=Test', '-c', 'user.email=test@example.com', '-c', 'init.defaultBranch=main', ...args], {
    cwd,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  }).trimEnd(); // not the start: `status --porcelain` lines begin with a meaningful space
}

/** A stand-in for a sealed bundle: opaque bytes with the expiry in a header line the injected reader understands. */
export function fakeBundle(expiresAt: number, body = 'sealed'): Buffer {
  return Buffer.concat([Buffer.from(`SLEDS-TEST expires=${expiresAt}\n`, 'utf8'), Buffer.from(body, 'utf8'), Buffer.from([0, 255, 1, 254])]);
}
export function readExpiry(bundle: Buffer): number | null {
  const m = /^SLEDS-TEST expires=(\d+)\n/.exec(bundle.subarray(0, 64).toString('latin1'));
  return m === null ? null : Number(m[1]);
}

/** What a user would compare to know their checkout was left alone. */
export function checkoutState(repo: string): string {
  return [
    git(repo, 'rev-parse', 'HEAD'),
    git(repo, 'symbolic-ref', 'HEAD'),
    git(repo, 'status', '--porcelain', '--untracked-files=all', '--ignored'),
    git(repo, 'diff', '--cached', '--binary'),
    git(repo, 'diff', '--binary'),
    git(repo, 'branch', '--list'),
  ].join('\n---\n');
}

export interface World {
  root: string;
  shared: string;
  a: string;
  b: string;
  paths: SledsPaths;
  db: Db;
  /** A's HEAD: a commit the remote does not have yet. */
  aHead: string;
  /** The snapshot of A (its session SESSION). */
  snapshotId: string;
  wip: WipSource;
}

const worlds: World[] = [];
export function disposeWorlds(): void {
  for (const w of worlds.splice(0)) {
    w.db.close();
    rmSync(w.root, { recursive: true, force: true });
  }
}

export async function makeWorld(opts: { bClonesShared?: boolean } = {}): Promise<World> {
  const root = mkdtempSync(join(tmpdir(), 'sleds-handoff-'));
  const shared = join(root, 'shared.git');
  git(root, 'init', '-q', '--bare', shared);
  const a = join(root, 'shop');
  mkdirSync(a);
  git(a, 'init', '-q');
  writeFileSync(join(a, 'a.txt'), 'one\ntwo\nthree\n');
  writeFileSync(join(a, 'gone.txt'), 'to be deleted\n');
  writeFileSync(join(a, '.gitignore'), 'build/\n');
  git(a, 'add', '.');
  git(a, 'commit', '-q', '-m', 'first');
  git(a, 'remote', 'add', 'origin', shared);
  git(a, 'push', '-q', 'origin', 'main');
  const b = join(root, 'shop-dana');
  if (opts.bClonesShared ?? true) git(root, 'clone', '-q', shared, b);
  else {
    mkdirSync(b);
    git(b, 'init', '-q');
  }
  // A's work since: a commit not pushed, then work in progress.
  writeFileSync(join(a, 'later.txt'), 'committed, not pushed\n');
  git(a, 'add', 'later.txt');
  git(a, 'commit', '-q', '-m', 'local only');
  writeFileSync(join(a, 'a.txt'), 'one\nTWO\nthree\nfour\n');
  writeFileSync(join(a, 'staged-new.txt'), 'staged, never committed\n');
  git(a, 'add', 'staged-new.txt');
  rmSync(join(a, 'gone.txt'));
  writeFileSync(join(a, 'notes.md'), '# notes\nuntracked\n');
  writeFileSync(join(a, 'run.sh'), '#!/bin/sh\necho hi\n');
  chmodSync(join(a, 'run.sh'), 0o755);
  mkdirSync(join(a, 'build'));
  writeFileSync(join(a, 'build', 'out.log'), 'ignored build output\n');

  const paths = resolvePaths({ SLEDS_HOME: join(root, 'sleds') }, root);
  const db = openStore(paths.dbFile);
  const log: Log = { info: () => undefined, warn: () => undefined, error: () => undefined };
  const taken = await takeSnapshot(
    { sessionId: SESSION, harness: 'claude-code', harnessVersion: null, model: null, cwd: a, transcriptPath: null, wallId: null, bars: [], bindingWindow: null },
    { paths, store: new SnapshotStore(db), clock: { now: () => NOW }, log },
  );
  const snap = await readSnapshot(paths, taken.id);
  const blobs = new Map<string, Buffer>();
  for (const b of manifestBlobs(snap.manifest)) blobs.set(b.hash, await snap.readBlob(b.hash));
  const wip = wipFromGit(snap.manifest.git, (h) => blobs.get(h));
  if (wip === null) throw new Error('the snapshot of A kept no git state');
  const w: World = { root, shared, a, b, paths, db, aHead: git(a, 'rev-parse', 'HEAD'), snapshotId: taken.id, wip };
  worlds.push(w);
  return w;
}

/** What a pickup's folder holds of A's work (pickedUpState().files): its commits and changes, nothing ignored. */
export const A_WORK_FILES: Record<string, string | null> = {
  'a.txt': 'one\nTWO\nthree\nfour\n',
  'later.txt': 'committed, not pushed\n',
  'staged-new.txt': 'staged, never committed\n',
  'gone.txt': null,
  'notes.md': '# notes\nuntracked\n',
  'run.sh': '#!/bin/sh\necho hi\n',
  'build/out.log': null,
};

/** A's changes as `git status --porcelain` lists them in a pickup's folder (lines sorted): uncommitted on top of A's HEAD. */
export const A_WORK_STATUS = [' D gone.txt', ' M a.txt', '?? notes.md', '?? run.sh', '?? staged-new.txt'];

/** Asserts what a pickup's folder holds: A's HEAD, A's changes uncommitted on top, nothing ignored. */
export function pickedUpState(dir: string): { head: string; status: string; files: Record<string, string | null>; runShMode: number } {
  const read = (p: string): string | null => {
    try {
      return readFileSync(join(dir, p), 'utf8');
    } catch {
      return null;
    }
  };
  return {
    head: git(dir, 'rev-parse', 'HEAD'),
    status: git(dir, 'status', '--porcelain', '--untracked-files=all'),
    files: Object.fromEntries(['a.txt', 'later.txt', 'staged-new.txt', 'gone.txt', 'notes.md', 'run.sh', 'build/out.log'].map((p) => [p, read(p)])),
    runShMode: statSync(join(dir, 'run.sh')).mode & 0o777,
  };
}
