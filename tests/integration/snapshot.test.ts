import { execFileSync } from 'node:child_process';
import { chmodSync, cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { resolvePaths, type SledsPaths } from '../../core/paths.js';
import { renderSnapshotBrief, shortSnapshotId } from '../../core/snapshot.js';
import { openStore, type Db } from '../../musher/store/db.js';
import { SnapshotStore } from '../../musher/store/snapshots.js';
import { takeSnapshot, type SnapshotInput } from '../../musher/snapshot/take.js';
import { readSnapshot } from '../../musher/snapshot/files.js';
import type { Log } from '../../musher/log.js';

const FIX = join(import.meta.dirname, '..', 'fixtures');
const CLAUDE_FIXTURE = join(FIX, 'pack', 'claude', 'projects', '-home-u-shop', '7f3e9a21-4c8b-4d2e-9f10-2b3c4d5e6f70.jsonl');
const CODEX_RECORDED = join(FIX, 'codex', 'recorded', 'sessions');
const P = '01a22964-438c-70b2-8697-769347912c2f';
const C = '01a22964-4bb3-7613-872c-967096509ffe';
const G = '01a22964-4d09-7693-8e3c-d29fd7ca1ff9';

interface Env {
  root: string;
  paths: SledsPaths;
  db: Db;
  store: SnapshotStore;
  logs: string[];
  log: Log;
  now: number;
}

const envs: Env[] = [];
afterEach(() => {
  for (const e of envs.splice(0)) {
    e.db.close();
    rmSync(e.root, { recursive: true, force: true });
  }
});

function makeEnv(): Env {
  const root = mkdtempSync(join(tmpdir(), 'sleds-snap-'));
  const paths = resolvePaths({ SLEDS_HOME: join(root, 'sleds') }, root);
  const db = openStore(paths.dbFile);
  const logs: string[] = [];
  const log: Log = { info: (m) => logs.push(`info ${m}`), warn: (m) => logs.push(`warn ${m}`), error: (m) => logs.push(`error ${m}`) };
  const env: Env = { root, paths, db, store: new SnapshotStore(db), logs, log, now: Date.parse('2026-11-30T15:00:00Z') };
  envs.push(env);
  return env;
}

function deps(e: Env, maxBytes?: number) {
  return { paths: e.paths, store: e.store, clock: { now: () => e.now }, log: e.log, ...(maxBytes !== undefined ? { maxBytes } : {}) };
}

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=Test', '-c', 'user.email=test@example.com', '-c', 'init.defaultBranch=main', ...args], { cwd, encoding: 'utf8' }).trim();
}

function binary(seed: number, size: number): Buffer {
  const b = Buffer.alloc(size);
  for (let i = 0; i < size; i++) b[i] = (i * 31 + seed * 17) % 256;
  return b;
}

/**
 * A repository with every kind of change: a modified text file, a modified binary file, a staged modification, a
 * staged new file, a deleted file, untracked files (plain, executable, a symlink), ignored files and a
 * secret-looking file git does not ignore.
 */
function makeRepo(root: string): string {
  const repo = join(root, 'shop');
  mkdirSync(repo);
  git(repo, 'init', '-q');
  writeFileSync(join(repo, 'a.txt'), 'one\ntwo\nthree\n');
  writeFileSync(join(repo, 'b.txt'), 'bee\n');
  writeFileSync(join(repo, 'gone.txt'), 'to be deleted\n');
  writeFileSync(join(repo, 'logo.bin'), binary(1, 3000));
  writeFileSync(join(repo, '.gitignore'), '.env\nbuild/\n');
  git(repo, 'add', '.');
  git(repo, 'commit', '-q', '-m', 'first');
  git(repo, 'remote', 'add', 'origin', 'https://dana:ghp_s3cretT0ken@github.com/acme/shop.git');
  // Changes.
  writeFileSync(join(repo, 'a.txt'), 'one\nTWO\nthree\nfour\n');
  writeFileSync(join(repo, 'logo.bin'), binary(2, 3100));
  writeFileSync(join(repo, 'b.txt'), 'bee\nstaged line\n');
  writeFileSync(join(repo, 'staged-new.txt'), 'a new file, staged\n');
  git(repo, 'add', 'b.txt', 'staged-new.txt');
  rmSync(join(repo, 'gone.txt'));
  writeFileSync(join(repo, 'notes.md'), '# notes\nuntracked\n');
  writeFileSync(join(repo, 'run.sh'), '#!/bin/sh\necho hi\n');
  chmodSync(join(repo, 'run.sh'), 0o755);
  symlinkSync('notes.md', join(repo, 'latest-notes'));
  writeFileSync(join(repo, '.env'), 'API_KEY=sk-ignored-secret\n');
  mkdirSync(join(repo, 'build'));
  writeFileSync(join(repo, 'build', 'out.log'), 'ignored build output\n');
  writeFileSync(join(repo, '.env.production'), 'API_KEY=sk-unignored-secret\n');
  return repo;
}

/** A Claude config dir holding the fixture transcript, with a line still being written at its end. */
function makeClaudeTranscript(root: string): string {
  const dir = join(root, 'claude', 'projects', '-home-u-shop');
  mkdirSync(dir, { recursive: true });
  const path = join(dir, '7f3e9a21-4c8b-4d2e-9f10-2b3c4d5e6f70.jsonl');
  cpSync(CLAUDE_FIXTURE, path);
  return path;
}

function claudeInput(cwd: string, transcriptPath: string | null, extra: Partial<SnapshotInput> = {}): SnapshotInput {
  return {
    sessionId: '7f3e9a21-4c8b-4d2e-9f10-2b3c4d5e6f70',
    harness: 'claude-code',
    harnessVersion: '2.1.328',
    model: 'claude-opus-5-5',
    cwd,
    transcriptPath,
    wallId: 'jd7k2m9qa4zp',
    bars: [{ provider: 'anthropic', window: 'five_hour', usedPct: 100, resetsAtMs: Date.parse('2026-11-30T18:00:00Z'), observedAtMs: Date.parse('2026-11-30T14:59:00Z'), source: 'statusline' }],
    bindingWindow: 'five_hour',
    ...extra,
  };
}

function allFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...allFiles(p));
    else out.push(p);
  }
  return out;
}

describe('takeSnapshot: a Claude session in a git repository', () => {
  it('keeps remote, branch, HEAD, the binary patch and the untracked files; never ignored or secret files', async () => {
    const e = makeEnv();
    const repo = makeRepo(e.root);
    const transcript = makeClaudeTranscript(e.root);
    const taken = await takeSnapshot(claudeInput(repo, transcript), deps(e));
    const g = taken.manifest.git!;

    expect(g.root).toBe(repo);
    expect(g.subdir).toBe('');
    expect(g.remote).toBe('https://github.com/acme/shop.git');
    expect(g.branch).toBe('main');
    expect(g.head).toBe(git(repo, 'rev-parse', 'HEAD'));
    expect(Object.fromEntries(g.numstat.map((n) => [n.path, [n.added, n.deleted]]))).toEqual({
      'a.txt': [2, 1],
      'b.txt': [1, 0],
      'gone.txt': [0, 1],
      'logo.bin': [null, null],
      'staged-new.txt': [1, 0],
    });
    expect(g.untracked.map((u) => [u.path, u.mode])).toEqual([
      ['latest-notes', '120000'],
      ['notes.md', '100644'],
      ['run.sh', '100755'],
    ]);
    expect(g.cut).toEqual([{ path: '.env.production', bytes: 0, why: 'looks like a secret, not copied; handoff.allow_untracked in the policy lets it travel' }]);

    // Nothing ignored, nothing secret, no credentials of the remote, anywhere in the stored snapshot.
    const stored = allFiles(join(e.paths.dataDir, 'snapshots')).map((f) => readFileSync(f, 'utf8')).join('\n');
    for (const secret of ['sk-ignored-secret', 'sk-unignored-secret', 'ghp_s3cretT0ken', 'ignored build output']) expect(stored).not.toContain(secret);
    expect(taken.row.note).toContain('.env.production (looks like a secret, not copied; handoff.allow_untracked in the policy lets it travel)');
  });

  it('secret-looking untracked files stay out unless the policy lists them, and the brief says which were left out', async () => {
    const e = makeEnv();
    const repo = makeRepo(e.root);
    writeFileSync(join(repo, '.env.test'), 'DB=localhost\n');
    writeFileSync(join(repo, 'deploy.pem'), '-----BEGIN PRIVATE KEY-----\nsk-pem-secret\n');
    writeFileSync(join(repo, 'credentials.json'), '{"token":"sk-credentials-secret"}\n');
    writeFileSync(join(repo, 'prod.tfvars'), 'password = "sk-tfvars-secret"\n');
    const taken = await takeSnapshot(claudeInput(repo, null), { ...deps(e), allowUntracked: (cwd) => (cwd === repo ? ['.env.test'] : []) });
    const g = taken.manifest.git!;
    expect(g.untracked.map((u) => u.path)).toContain('.env.test');
    expect(g.cut.map((c) => c.path).sort()).toEqual(['.env.production', 'credentials.json', 'deploy.pem', 'prod.tfvars']);
    const stored = allFiles(join(e.paths.dataDir, 'snapshots')).map((f) => readFileSync(f, 'utf8')).join('\n');
    for (const secret of ['sk-pem-secret', 'sk-credentials-secret', 'sk-tfvars-secret']) expect(stored).not.toContain(secret);
    expect(renderSnapshotBrief(taken.manifest)).toMatch(/Left out: .*credentials\.json \(looks like a secret, not copied/);
  });

  it('the stored patch applied with git apply --binary to a fresh clone at HEAD reproduces the tracked changes', async () => {
    const e = makeEnv();
    const repo = makeRepo(e.root);
    const taken = await takeSnapshot(claudeInput(repo, null), deps(e));
    const opened = await readSnapshot(e.paths, taken.id);
    const patch = await opened.readBlob(opened.manifest.git!.patch!.hash);

    const clone = join(e.root, 'clone');
    execFileSync('git', ['clone', '-q', repo, clone]);
    writeFileSync(join(e.root, 'p.diff'), patch);
    git(clone, 'apply', '--binary', '--index', join(e.root, 'p.diff'));
    for (const u of opened.manifest.git!.untracked) {
      const bytes = await opened.readBlob(u.hash);
      if (u.mode === '120000') symlinkSync(bytes.toString('utf8'), join(clone, u.path));
      else writeFileSync(join(clone, u.path), bytes, { mode: u.mode === '100755' ? 0o755 : 0o644 });
    }
    for (const f of ['a.txt', 'b.txt', 'logo.bin', 'staged-new.txt', 'notes.md', 'run.sh']) {
      expect(readFileSync(join(clone, f)).equals(readFileSync(join(repo, f))), f).toBe(true);
    }
    expect(() => readFileSync(join(clone, 'gone.txt'))).toThrow();
    expect(git(clone, 'diff', '--numstat', 'HEAD')).toBe(git(repo, 'diff', '--numstat', 'HEAD'));
    // Staged and unstaged are one patch against HEAD: the same paths changed, the same files new.
    const changed = (dir: string) => git(dir, 'status', '--porcelain', '--untracked-files=all').split('\n').map((l) => `${l.startsWith('??') ? 'new' : 'changed'} ${l.replace(/^\s*\S+\s+/, '')}`);
    expect(changed(clone)).toEqual(changed(repo).filter((l) => !l.includes('.env.production')));
  });

  it('the transcript up to its last complete line, in the layout claude --resume finds, and the pack', async () => {
    const e = makeEnv();
    const repo = makeRepo(e.root);
    const transcript = makeClaudeTranscript(e.root);
    const taken = await takeSnapshot(claudeInput(repo, transcript), deps(e));
    const [file] = taken.manifest.transcript;
    expect(taken.manifest.transcript).toHaveLength(1);
    expect(file!.path).toBe('projects/-home-u-shop/7f3e9a21-4c8b-4d2e-9f10-2b3c4d5e6f70.jsonl');
    const full = readFileSync(transcript);
    const kept = full.subarray(0, full.lastIndexOf(0x0a) + 1);
    const opened = await readSnapshot(e.paths, shortSnapshotId(taken.id));
    expect((await opened.readBlob(file!.hash)).equals(kept)).toBe(true);
    expect(opened.manifest.pack.firstPrompt?.text).toBe('add a read-through cache to the price lookup');
    expect(opened.manifest.pack.todos?.length).toBe(4);
    expect(opened.manifest.bars[0]?.usedPct).toBe(100);
    expect(opened.manifest.bindingWindow).toBe('five_hour');
    expect(taken.row).toMatchObject({ sessionId: '7f3e9a21-4c8b-4d2e-9f10-2b3c4d5e6f70', wallId: 'jd7k2m9qa4zp', harness: 'claude-code', takenAtMs: e.now });
  });

  it('the same content twice is the same id, stored once; changed content is a new id; no temp files are left', async () => {
    const e = makeEnv();
    const repo = makeRepo(e.root);
    const transcript = makeClaudeTranscript(e.root);
    const first = await takeSnapshot(claudeInput(repo, transcript), deps(e));
    const blobsBefore = readdirSync(join(e.paths.dataDir, 'snapshots', 'blobs')).sort();
    e.now += 60_000;
    const again = await takeSnapshot(claudeInput(repo, transcript), deps(e));
    expect(again.id).toBe(first.id);
    expect(again.fresh).toBe(false);
    expect(again.row.takenAtMs).toBe(first.row.takenAtMs);
    expect(e.store.list()).toHaveLength(1);
    expect(readdirSync(join(e.paths.dataDir, 'snapshots', 'blobs')).sort()).toEqual(blobsBefore);

    writeFileSync(join(repo, 'a.txt'), 'changed again\n');
    const changed = await takeSnapshot(claudeInput(repo, transcript), deps(e));
    expect(changed.id).not.toBe(first.id);
    expect(changed.fresh).toBe(true);
    expect(e.store.list().map((r) => r.id)).toEqual([changed.id, first.id]);
    // The transcript did not change: its blob is shared.
    expect(changed.manifest.transcript[0]!.hash).toBe(first.manifest.transcript[0]!.hash);

    const names = allFiles(join(e.paths.dataDir, 'snapshots')).map((f) => f.split('/').pop()!);
    expect(names.filter((n) => n.startsWith('.tmp-'))).toEqual([]);
    expect(first.id).toMatch(/^[2-9a-km-np-z]{52}$/);
  });

  it('the cap: an untracked file over it is left out and named; the patch over it is left out and named', async () => {
    const e = makeEnv();
    const repo = makeRepo(e.root);
    writeFileSync(join(repo, 'big-untracked.dat'), binary(3, 200_000));
    const taken = await takeSnapshot(claudeInput(repo, null), deps(e, 64 * 1024));
    const g = taken.manifest.git!;
    expect(g.patch).not.toBeNull();
    expect(g.untracked.map((u) => u.path)).toEqual(['latest-notes', 'notes.md', 'run.sh']);
    expect(g.cut.find((c) => c.path === 'big-untracked.dat')).toEqual({ path: 'big-untracked.dat', bytes: 200_000, why: '0.2 MB, over the 0.1 MB cap' });
    expect(taken.row.note).toContain('big-untracked.dat (0.2 MB, over the 0.1 MB cap)');

    writeFileSync(join(repo, 'a.txt'), `${'a long changed line\n'.repeat(10_000)}`);
    const bigPatch = await takeSnapshot(claudeInput(repo, null), deps(e, 64 * 1024));
    expect(bigPatch.manifest.git!.patch).toBeNull();
    expect(bigPatch.manifest.git!.cut[0]).toMatchObject({ path: null, why: expect.stringMatching(/over the 0\.1 MB cap/) });
    expect(bigPatch.manifest.git!.numstat.find((n) => n.path === 'a.txt')).toEqual({ path: 'a.txt', added: 10_000, deleted: 3 });
    expect(bigPatch.row.note).toContain('the tracked-changes patch');
  });

  it('a cwd below the top level: the whole repository is kept, and where the session stood', async () => {
    const e = makeEnv();
    const repo = makeRepo(e.root);
    mkdirSync(join(repo, 'src'));
    writeFileSync(join(repo, 'src', 'new.ts'), 'export {};\n');
    const taken = await takeSnapshot(claudeInput(join(repo, 'src'), null), deps(e));
    expect(taken.manifest.git!.subdir).toBe('src');
    expect(taken.manifest.git!.untracked.map((u) => u.path)).toContain('src/new.ts');
    expect(taken.manifest.git!.untracked.map((u) => u.path)).toContain('notes.md');
    expect(taken.manifest.git!.numstat.map((n) => n.path)).toContain('a.txt');
  });
});

describe('takeSnapshot: without git, or before the first commit', () => {
  it('not a repository: git is null with a note, the rest is kept', async () => {
    const e = makeEnv();
    const dir = join(e.root, 'plain');
    mkdirSync(dir);
    const taken = await takeSnapshot(claudeInput(dir, makeClaudeTranscript(e.root)), deps(e));
    expect(taken.manifest.git).toBeNull();
    expect(taken.manifest.notes).toEqual([`git: ${dir} is not in a git repository, so no git state was kept`]);
    expect(taken.manifest.transcript).toHaveLength(1);
    expect(taken.row.note).toContain('not in a git repository');
  });

  it('a cwd that is gone, and no transcript path: a snapshot with two notes', async () => {
    const e = makeEnv();
    const taken = await takeSnapshot(claudeInput(join(e.root, 'nowhere'), null), deps(e));
    expect(taken.manifest.git).toBeNull();
    expect(taken.manifest.notes).toHaveLength(2);
    expect(taken.manifest.notes.join(' ')).toMatch(/no transcript path.*no longer exists|no longer exists.*no transcript path/);
  });

  it('a repository with no commit yet: no HEAD, the branch to be, the staged files as the patch', async () => {
    const e = makeEnv();
    const repo = join(e.root, 'fresh');
    mkdirSync(repo);
    git(repo, 'init', '-q');
    writeFileSync(join(repo, 'staged.txt'), 'first words\n');
    git(repo, 'add', 'staged.txt');
    writeFileSync(join(repo, 'loose.txt'), 'untracked\n');
    const taken = await takeSnapshot(claudeInput(repo, null), deps(e));
    const g = taken.manifest.git!;
    expect(g.head).toBeNull();
    expect(g.branch).toBe('main');
    expect(g.remote).toBeNull();
    expect(g.numstat).toEqual([{ path: 'staged.txt', added: 1, deleted: 0 }]);
    expect(g.untracked.map((u) => u.path)).toEqual(['loose.txt']);
    // The patch recreates the staged file in an empty repository.
    const opened = await readSnapshot(e.paths, taken.id);
    const target = join(e.root, 'target');
    mkdirSync(target);
    git(target, 'init', '-q');
    writeFileSync(join(e.root, 'p.diff'), await opened.readBlob(g.patch!.hash));
    git(target, 'apply', '--binary', join(e.root, 'p.diff'));
    expect(readFileSync(join(target, 'staged.txt'), 'utf8')).toBe('first words\n');
  });

  it('a detached HEAD has no branch', async () => {
    const e = makeEnv();
    const repo = makeRepo(e.root);
    git(repo, 'stash', '-q', '-u');
    git(repo, 'checkout', '-q', '--detach', 'HEAD');
    const taken = await takeSnapshot(claudeInput(repo, null), deps(e));
    expect(taken.manifest.git!.branch).toBeNull();
    expect(taken.manifest.git!.head).toBe(git(repo, 'rev-parse', 'HEAD'));
  });
});

describe('takeSnapshot: a Codex fork', () => {
  function codexInput(rollout: string | null, sessionId: string): SnapshotInput {
    return { ...claudeInput('/nonexistent-cwd', rollout), harness: 'codex', sessionId, harnessVersion: '0.169.0', model: 'gpt-5.1-codex', bars: [], bindingWindow: null };
  }

  it('a fork of a fork keeps both ancestors’ rollouts, each in its sessions/YYYY/MM/DD place', async () => {
    const e = makeEnv();
    const sessions = join(e.root, 'codex', 'sessions');
    cpSync(CODEX_RECORDED, sessions, { recursive: true });
    const rollout = join(sessions, '2026', '11', '29', `rollout-2026-11-29T22-19-28-${G}.jsonl`);
    const taken = await takeSnapshot(codexInput(rollout, G), deps(e));
    expect(taken.manifest.transcript.map((t) => [t.role, t.sessionId, t.path])).toEqual([
      ['fork-parent', P, `sessions/2026/11/29/rollout-2026-11-29T22-19-26-${P}.jsonl`],
      ['fork-parent', C, `sessions/2026/11/29/rollout-2026-11-29T22-19-28-${C}.jsonl`],
      ['session', G, `sessions/2026/11/29/rollout-2026-11-29T22-19-28-${G}.jsonl`],
    ]);
    const opened = await readSnapshot(e.paths, taken.id);
    for (const t of opened.manifest.transcript) expect((await opened.readBlob(t.hash)).equals(readFileSync(t.sourcePath))).toBe(true);
    expect(opened.manifest.pack.firstPrompt?.text).toBe('hello one');
    expect(opened.manifest.pack.latestPrompts.map((p) => p.text)).toEqual(['second turn', 'forked prompt', 'fork of fork']);
    expect(opened.manifest.notes.filter((n) => n.startsWith('rollout'))).toEqual([]);
  });

  it('a fork whose parent is missing: kept, with a note that it cannot be resumed alone', async () => {
    const e = makeEnv();
    const day = join(e.root, 'codex', 'sessions', '2026', '11', '29');
    mkdirSync(day, { recursive: true });
    const name = `rollout-2026-11-29T22-19-28-${C}.jsonl`;
    cpSync(join(CODEX_RECORDED, '2026', '11', '29', name), join(day, name));
    const taken = await takeSnapshot(codexInput(join(day, name), C), deps(e));
    expect(taken.manifest.transcript.map((t) => t.role)).toEqual(['session']);
    expect(taken.manifest.notes).toContain(`rollout: fork parent ${P} not found under ${join(e.root, 'codex', 'sessions')}: the copy cannot be resumed without it`);
  });
});

describe('readSnapshot and the store', () => {
  it('prefixes resolve when unambiguous; unknown and malformed ids say what to run', async () => {
    const e = makeEnv();
    const repo = makeRepo(e.root);
    const taken = await takeSnapshot(claudeInput(repo, null), deps(e));
    expect((await readSnapshot(e.paths, taken.id.slice(0, 6))).id).toBe(taken.id);
    expect(e.store.get(taken.id.slice(0, 5).toUpperCase())?.id).toBe(taken.id);
    await expect(readSnapshot(e.paths, 'zzzzzzzz')).rejects.toThrow("no snapshot zzzzzzzz — run 'sleds snapshots' for the list");
    await expect(readSnapshot(e.paths, 'l0l')).rejects.toThrow(/is not a snapshot id/);
    expect(e.store.resolve('zzzzzz')).toEqual({ kind: 'none' });
  });

  it('a manifest changed on disk is refused', async () => {
    const e = makeEnv();
    const taken = await takeSnapshot(claudeInput(join(e.root, 'nowhere'), null), deps(e));
    const file = join(e.paths.dataDir, 'snapshots', 'manifests', `${taken.id}.json`);
    writeFileSync(file, readFileSync(file, 'utf8').replace('"claude-opus-5-5"', '"claude-haiku"'));
    await expect(readSnapshot(e.paths, taken.id)).rejects.toThrow(/does not match its id/);
  });

  it('a data dir that cannot be written: one line to log, nothing recorded', async () => {
    const e = makeEnv();
    writeFileSync(join(e.paths.dataDir, 'snapshots'), 'a file where the folder should be');
    await expect(takeSnapshot(claudeInput(join(e.root, 'nowhere'), null), deps(e))).rejects.toThrow(/^snapshot of session 7f3e9a21-4c8b-4d2e-9f10-2b3c4d5e6f70 not stored under .*: E\w+$/);
    expect(e.store.list()).toEqual([]);
  });
});
