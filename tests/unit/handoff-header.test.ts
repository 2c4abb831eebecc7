import { describe, expect, it } from 'vitest';
import { HANDOFF_TTL_MS, HandoffHeaderSchema, isExpired, isFromTheFuture, MAX_CLOCK_SKEW_MS, RawPublicKeyB64 } from '../../core/handoff/header.js';
import { RosterFile, teammateByHandle } from '../../core/roster.js';

const KEY = Buffer.alloc(32, 7).toString('base64'); // 'BwcH…Bwc='
const header = {
  v: 1,
  id: 'jd7k2m9qa4zp',
  sender: 'jo',
  recipient: 'dana',
  createdAt: 1_000,
  expiresAt: 1_000 + HANDOFF_TTL_MS,
  contentSha256: 'ab'.repeat(32),
  ephemeralPublicKey: KEY,
  recipientPublicKey: KEY,
};

describe('the hand-off header', () => {
  it.each([
    ['the sealed shape', {}, true],
    ['an unknown field (tolerated)', { note: 'later' }, true],
    ['version 2', { v: 2 }, false],
    ['an id with a 1 in it', { id: 'jd7k2m9qa41p' }, false],
    ['an id of 11 characters', { id: 'jd7k2m9qa4z' }, false],
    ['expiry past 7 days', { expiresAt: 1_001 + HANDOFF_TTL_MS }, false],
    ['expiry before creation', { expiresAt: 999 }, false],
    ['a 31-byte key', { ephemeralPublicKey: Buffer.alloc(31, 7).toString('base64') }, false],
    ['a hash in capitals', { contentSha256: 'AB'.repeat(32) }, false],
    ['a handle with a space', { recipient: 'da na' }, false],
  ])('%s', (_what, change, ok) => {
    expect(HandoffHeaderSchema.safeParse({ ...header, ...change }).success).toBe(ok);
  });

  it.each([
    ['made before now', 0, false],
    ['made now', 1_000, false],
    ['made 5 minutes ahead (clock skew)', 1_000 - MAX_CLOCK_SKEW_MS, false],
    ['made 5 minutes and 1 ms ahead', 1_000 - MAX_CLOCK_SKEW_MS - 1, true],
    ['made a day ahead', 1_000 - 86_400_000, true],
  ])('%s: from the future %s', (_what, nowMs, future) => {
    expect(isFromTheFuture(header, nowMs)).toBe(future);
  });

  it('expired from the instant expiresAt is reached, not one ms before', () => {
    expect(isExpired(header, header.expiresAt - 1)).toBe(false);
    expect(isExpired(header, header.expiresAt)).toBe(true);
  });

  it.each([
    [KEY, true],
    [Buffer.alloc(32, 255).toString('base64'), true],
    [KEY.replace('=', ''), false],
    [`${KEY.slice(0, 42)}B=`, false], // non-canonical: the last character carries bits beyond the 32 bytes
    [Buffer.alloc(33).toString('base64'), false],
  ])('raw public key %s → %s', (k, ok) => {
    expect(RawPublicKeyB64.safeParse(k).success).toBe(ok);
  });
});

describe('the roster with keys', () => {
  it('keys are optional; when present both must be 32-byte base64 keys', () => {
    const r = RosterFile.parse({ teammates: [{ handle: 'jo' }, { handle: 'Dana', keys: { x25519: KEY, ed25519: KEY } }] });
    expect(r.teammates[0]!.keys).toBeUndefined();
    expect(teammateByHandle(r, 'dana')?.keys).toEqual({ x25519: KEY, ed25519: KEY });
    expect(teammateByHandle(r, 'nobody')).toBeNull();
    const bad = RosterFile.safeParse({ teammates: [{ handle: 'jo', keys: { x25519: 'short', ed25519: KEY } }] });
    expect(bad.success).toBe(false);
    expect(bad.error!.issues[0]!.message).toBe('a public key is 32 bytes in base64 (44 characters ending in =)');
    expect(RosterFile.safeParse({ teammates: [{ handle: 'jo', keys: { x25519: KEY } }] }).success).toBe(false);
  });
});
