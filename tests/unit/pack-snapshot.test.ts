import { describe, expect, it } from 'vitest';
import { canonicalJson, isSnapshotIdPrefix, shortSnapshotId, snapshotIdFromDigest, SNAPSHOT_ID_ALPHABET } from '../../core/snapshot.js';
import { looksLikeSecret, redactRemote } from '../../musher/snapshot/git-state.js';
import { claudeRelativePath, codexRelativePath, completeLines, sessionsRootOf } from '../../musher/snapshot/transcripts.js';
import { resolveIdPrefix } from '../../musher/snapshot/files.js';

describe('snapshot ids', () => {
  it('spell a digest in 52 characters of an alphabet without 0, o, 1 or l', () => {
    expect(SNAPSHOT_ID_ALPHABET).toHaveLength(32);
    expect(SNAPSHOT_ID_ALPHABET).not.toMatch(/[01ol]/);
    expect(snapshotIdFromDigest(new Uint8Array(32))).toBe('2'.repeat(52));
    expect(snapshotIdFromDigest(new Uint8Array(32).fill(0xff))).toBe(`${'z'.repeat(51)}i`); // 256 bits: the last character holds one bit, padded (10000)
    // 0b00001 00010 00011 … : 0x08 0x86 0x42 0x98 0xe8 → "3456" + "7" + "8" + "9" + "a"
    expect(snapshotIdFromDigest(Uint8Array.from([0x08, 0x86, 0x42, 0x98, 0xe8]))).toBe('3456789a');
    expect(shortSnapshotId('abcdefghijkmnpqrstuv')).toBe('abcdefghijkm');
  });

  it.each([
    ['jd7k', true],
    ['jd7k2m9qa4zp', true],
    ['jd7', false],
    ['jd7k-', false],
    ['l0l0', false],
    ['JD7K', false],
  ])('%s is an id prefix: %s', (text, ok) => {
    expect(isSnapshotIdPrefix(text)).toBe(ok);
  });

  it('resolves a prefix: one, none, ambiguous, invalid (case folded)', () => {
    const ids = ['abcd2222', 'abcd3333', 'efgh4444'];
    expect(resolveIdPrefix('EFGH', ids)).toEqual({ kind: 'one', id: 'efgh4444' });
    expect(resolveIdPrefix('abcd', ids)).toEqual({ kind: 'ambiguous', ids: ['abcd2222', 'abcd3333'] });
    expect(resolveIdPrefix('abcd3', ids)).toEqual({ kind: 'one', id: 'abcd3333' });
    expect(resolveIdPrefix('zzzz', ids)).toEqual({ kind: 'none' });
    expect(resolveIdPrefix('ab', ids)).toEqual({ kind: 'invalid' });
  });

  it('canonical JSON: one spelling whatever the key order', () => {
    expect(canonicalJson({ b: 1, a: { d: [{ y: 1, x: 2 }], c: null } })).toBe(canonicalJson({ a: { c: null, d: [{ x: 2, y: 1 }] }, b: 1 }));
    expect(canonicalJson({ b: 1, a: 2, u: undefined })).toBe('{"a":2,"b":1}');
  });
});

describe('what the snapshot keeps out', () => {
  it.each([
    ['https://dana:ghp_tok@github.com/acme/shop.git', 'https://github.com/acme/shop.git'],
    ['https://ghp_tok@github.com/acme/shop.git', 'https://github.com/acme/shop.git'],
    ['http://x-access-token:abc@example.com/r.git', 'http://example.com/r.git'],
    ['ssh://git@github.com/acme/shop.git', 'ssh://git@github.com/acme/shop.git'],
    ['ssh://git:pw@host/r.git', 'ssh://git@host/r.git'],
    ['git@github.com:acme/shop.git', 'git@github.com:acme/shop.git'],
    ['/srv/git/shop.git', '/srv/git/shop.git'],
  ])('remote %s → %s', (url, kept) => {
    expect(redactRemote(url)).toBe(kept);
  });

  it.each([
    ['.env', [], true],
    ['config/.env.production', [], true],
    ['.envrc', [], true],
    ['.env.example', [], true],
    ['.env.example', ['.env.example'], false],
    ['config/.env.test', ['config/.env.*'], false],
    ['config/.env.production', ['config/.env.test'], true],
    ['certs/server.pem', [], true],
    ['server.key', [], true],
    ['id_ed25519', [], true],
    ['id_ed25519.pub', [], true],
    ['credentials.json', [], true],
    ['infra/prod.tfvars', [], true],
    ['infra/prod.tfvars.json', [], true],
    ['.npmrc', [], true],
    ['.netrc', [], true],
    ['src/env.ts', [], false],
    ['keys.md', [], false],
    ['docs/credential-rotation.md', [], false],
  ] as Array<[string, string[], boolean]>)('%s (policy allows %j) looks like a secret: %s', (path, allowed, secret) => {
    expect(looksLikeSecret(path, allowed)).toBe(secret);
  });
});

describe('transcript layout', () => {
  it('keeps complete lines only', () => {
    expect(completeLines(Buffer.from('a\nb\nhalf')).toString()).toBe('a\nb\n');
    expect(completeLines(Buffer.from('a\n')).toString()).toBe('a\n');
    expect(completeLines(Buffer.from('half')).toString()).toBe('');
  });

  it('places files where the harness resumes from', () => {
    expect(claudeRelativePath('/home/u/.claude/projects/-home-u-my-proj/4e7d.jsonl')).toBe('projects/-home-u-my-proj/4e7d.jsonl');
    expect(codexRelativePath('/home/u/.codex/sessions/2026/11/29/rollout-2026-11-29T22-19-26-01a2.jsonl')).toBe('sessions/2026/11/29/rollout-2026-11-29T22-19-26-01a2.jsonl');
    expect(codexRelativePath('/home/u/.codex/archived_sessions/rollout-2026-11-28T09-00-00-01a2.jsonl')).toBe('sessions/2026/11/28/rollout-2026-11-28T09-00-00-01a2.jsonl');
    expect(sessionsRootOf('/home/u/.codex/sessions/2026/11/29/rollout-x.jsonl')).toBe('/home/u/.codex/sessions');
    expect(sessionsRootOf('/tmp/rollout-x.jsonl')).toBe('/tmp');
  });
});
