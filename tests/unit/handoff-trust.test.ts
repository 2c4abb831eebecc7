import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { refusal } from '../../core/handoff/errors.js';
import {
  checkSenderTrusted,
  pinnedOnFirstUseLine,
  recipientForSealing,
  TrustFileSchema,
  trustStandings,
  type PinnedKeys,
  type SeatPublicKeys,
  type TrustStandingKind,
} from '../../core/handoff/trust.js';
import { RosterFile } from '../../core/roster.js';
import { keyFingerprint, rawPublicKey } from '../../musher/handoff/keys.js';

/** Real keys, so the fingerprints are the ones a person would compare. */
const key = (type: 'x25519' | 'ed25519') => rawPublicKey(type === 'x25519' ? generateKeyPairSync('x25519').publicKey : generateKeyPairSync('ed25519').publicKey);
const keysOf = () => ({ x25519: key('x25519'), ed25519: key('ed25519') });

const DANA = keysOf();
const DANA_NEW = keysOf();
const SAM = keysOf();
const JO = keysOf(); // this seat
const seat: SeatPublicKeys = { handle: 'jo', ...JO };
const fp = keyFingerprint;

const pin = (handle: string, keys: { x25519: string; ed25519: string }): PinnedKeys => ({ handle, name: null, ...keys, pinnedAt: 1_000 });
const roster = (...teammates: Array<{ handle: string; name?: string; keys?: { x25519: string; ed25519: string } }>) => RosterFile.parse({ teammates });

describe('trust standing: the roster against the pins', () => {
  it.each<[string, RosterFile, PinnedKeys[], SeatPublicKeys | null, Array<[string, TrustStandingKind]>]>([
    ['pinned and matching', roster({ handle: 'dana', keys: DANA }), [pin('dana', DANA)], seat, [['dana', 'pinned']]],
    ['not pinned yet', roster({ handle: 'dana', keys: DANA }), [], seat, [['dana', 'unpinned']]],
    ['pinned, the roster holds other keys', roster({ handle: 'dana', keys: DANA_NEW }), [pin('dana', DANA)], seat, [['dana', 'changed']]],
    ['only the ed25519 key swapped', roster({ handle: 'dana', keys: { x25519: DANA.x25519, ed25519: SAM.ed25519 } }), [pin('dana', DANA)], seat, [['dana', 'changed']]],
    ['a pin matches the handle whatever its case', roster({ handle: 'Dana', keys: DANA }), [pin('dana', DANA)], seat, [['dana', 'pinned']]],
    ['own entry with this seat\'s keys', roster({ handle: 'jo', keys: JO }), [], seat, [['jo', 'self']]],
    ['own entry with other keys', roster({ handle: 'jo', keys: SAM }), [], seat, [['jo', 'self-mismatch']]],
    ['own entry, seat keys unknown: judged like anyone', roster({ handle: 'jo', keys: SAM }), [], null, [['jo', 'unpinned']]],
    ['the same handle twice with different keys', roster({ handle: 'dana', keys: DANA }, { handle: 'DANA', keys: DANA_NEW }), [pin('dana', DANA)], seat, [['dana', 'ambiguous']]],
    ['the same handle twice with the same keys', roster({ handle: 'dana', keys: DANA }, { handle: 'dana', keys: DANA }), [pin('dana', DANA)], seat, [['dana', 'pinned']]],
    ['in the roster without keys', roster({ handle: 'dana' }), [pin('dana', DANA)], seat, [['dana', 'no-keys']]],
    [
      'a pin of someone who left the roster changes nothing',
      roster({ handle: 'dana', keys: DANA }, { handle: 'sam', keys: SAM }),
      [pin('dana', DANA), pin('lee', DANA_NEW)],
      seat,
      [
        ['dana', 'pinned'],
        ['sam', 'unpinned'],
      ],
    ],
  ])('%s', (_what, r, pins, me, expected) => {
    expect(trustStandings(r, pins, me, fp).map((s) => [s.handle, s.kind])).toEqual(expected);
  });

  it('a changed key carries the pinned and the roster fingerprints of both keys, and which one differs', () => {
    const [s] = trustStandings(roster({ handle: 'dana', name: 'Dana Lee', keys: { x25519: DANA.x25519, ed25519: DANA_NEW.ed25519 } }), [pin('dana', DANA)], seat, fp);
    expect(s).toEqual({
      kind: 'changed',
      handle: 'dana',
      name: 'Dana Lee',
      keys: { x25519: DANA.x25519, ed25519: DANA_NEW.ed25519 },
      pinned: { x25519: fp(DANA.x25519), ed25519: fp(DANA.ed25519) },
      roster: { x25519: fp(DANA.x25519), ed25519: fp(DANA_NEW.ed25519) },
      differences: [{ type: 'ed25519', expected: fp(DANA.ed25519), roster: fp(DANA_NEW.ed25519) }],
    });
  });
});

describe('checkSenderTrusted (pickup)', () => {
  const base = { seat, fingerprint: fp, id: 'jd7k2m9qa4zp' };

  it.each<[string, RosterFile, PinnedKeys[], string, string | null]>([
    ['a pinned sender with the pinned keys is let through', roster({ handle: 'dana', keys: DANA }), [pin('dana', DANA)], 'dana', null],
    ['this seat as the sender, its entry its own', roster({ handle: 'jo', keys: JO }), [], 'jo', null],
    ['an unpinned sender is refused with the fingerprints to compare', roster({ handle: 'dana', keys: DANA }), [], 'dana', refusal.untrustedSender('jd7k2m9qa4zp', 'dana', { x25519: fp(DANA.x25519), ed25519: fp(DANA.ed25519) }).message],
    [
      'a changed sender key is refused with both fingerprints',
      roster({ handle: 'dana', keys: DANA_NEW }),
      [pin('dana', DANA)],
      'dana',
      refusal.keyChanged('dana', [
        { type: 'x25519', expected: fp(DANA.x25519), roster: fp(DANA_NEW.x25519) },
        { type: 'ed25519', expected: fp(DANA.ed25519), roster: fp(DANA_NEW.ed25519) },
      ]).message,
    ],
    [
      'a changed key of another pinned teammate refuses the whole roster',
      roster({ handle: 'dana', keys: DANA }, { handle: 'sam', keys: { x25519: SAM.x25519, ed25519: DANA_NEW.ed25519 } }),
      [pin('dana', DANA), pin('sam', SAM)],
      'dana',
      refusal.keyChanged('sam', [{ type: 'ed25519', expected: fp(SAM.ed25519), roster: fp(DANA_NEW.ed25519) }]).message,
    ],
    ['this seat\'s own entry swapped refuses the roster', roster({ handle: 'dana', keys: DANA }, { handle: 'jo', keys: { x25519: SAM.x25519, ed25519: JO.ed25519 } }), [pin('dana', DANA)], 'dana', refusal.selfKeyMismatch('jo', [{ type: 'x25519', expected: fp(JO.x25519), roster: fp(SAM.x25519) }]).message],
    ['a second entry for a pinned handle is refused', roster({ handle: 'dana', keys: DANA }, { handle: 'dana', keys: DANA_NEW }), [pin('dana', DANA)], 'dana', refusal.ambiguousRoster('dana').message],
    ['a sender the roster does not name', roster({ handle: 'dana', keys: DANA }), [pin('dana', DANA)], 'sam', refusal.unknownSender('jd7k2m9qa4zp', 'sam').message],
    ['a sender without keys in the roster', roster({ handle: 'dana' }), [pin('dana', DANA)], 'dana', refusal.unknownSender('jd7k2m9qa4zp', 'dana').message],
  ])('%s', (_what, r, pins, sender, line) => {
    const v = checkSenderTrusted({ ...base, roster: r, pins, sender });
    expect(v.ok ? null : v.error.message).toBe(line);
    if (v.ok) expect(v.keys).toEqual(r.teammates.find((t) => t.handle === sender)!.keys);
  });

  it('the refusal kinds are what pickup shows', () => {
    const kinds = [
      checkSenderTrusted({ ...base, roster: roster({ handle: 'dana', keys: DANA }), pins: [], sender: 'dana' }),
      checkSenderTrusted({ ...base, roster: roster({ handle: 'dana', keys: DANA_NEW }), pins: [pin('dana', DANA)], sender: 'dana' }),
      checkSenderTrusted({ ...base, roster: roster({ handle: 'jo', keys: SAM }), pins: [], sender: 'jo' }),
    ].map((v) => (v.ok ? 'ok' : v.error.kind));
    expect(kinds).toEqual(['untrusted-sender', 'key-changed', 'self-key-mismatch']);
  });
});

describe('recipientForSealing (send: trust on first use)', () => {
  const base = { seat, fingerprint: fp };

  it('an unpinned recipient is sealed to its roster key, pinned, and the pinning is said', () => {
    const v = recipientForSealing({ ...base, roster: roster({ handle: 'Dana', name: 'Dana Lee', keys: DANA }), pins: [], recipient: 'dana' });
    expect(v).toEqual({
      ok: true,
      handle: 'dana',
      name: 'Dana Lee',
      x25519: DANA.x25519,
      pin: { handle: 'dana', name: 'Dana Lee', ...DANA },
      note: pinnedOnFirstUseLine('dana', { x25519: fp(DANA.x25519), ed25519: fp(DANA.ed25519) }),
    });
  });

  it('a pinned recipient with the pinned keys: sealed to them, nothing to pin or say', () => {
    const v = recipientForSealing({ ...base, roster: roster({ handle: 'dana', keys: DANA }), pins: [pin('dana', DANA)], recipient: 'DANA' });
    expect(v).toEqual({ ok: true, handle: 'dana', name: null, x25519: DANA.x25519, pin: null, note: null });
  });

  it.each<[string, RosterFile, PinnedKeys[], string, string]>([
    ['a changed recipient key', roster({ handle: 'dana', keys: { x25519: DANA_NEW.x25519, ed25519: DANA.ed25519 } }), [pin('dana', DANA)], 'dana', refusal.keyChanged('dana', [{ type: 'x25519', expected: fp(DANA.x25519), roster: fp(DANA_NEW.x25519) }]).message],
    ['another pinned teammate\'s key changed', roster({ handle: 'dana', keys: DANA }, { handle: 'sam', keys: DANA_NEW }), [pin('sam', SAM)], 'dana', refusal.keyChanged('sam', [{ type: 'x25519', expected: fp(SAM.x25519), roster: fp(DANA_NEW.x25519) }, { type: 'ed25519', expected: fp(SAM.ed25519), roster: fp(DANA_NEW.ed25519) }]).message],
    ['a recipient the roster does not name', roster({ handle: 'dana', keys: DANA }), [], 'sam', refusal.unknownRecipient('sam', 'absent').message],
    ['a recipient without keys', roster({ handle: 'dana' }), [], 'dana', refusal.unknownRecipient('dana', 'no-keys').message],
  ])('%s is refused', (_what, r, pins, recipient, line) => {
    const v = recipientForSealing({ ...base, roster: r, pins, recipient });
    expect(v.ok ? null : v.error.message).toBe(line);
  });
});

describe('the refusal lines', () => {
  const a = '0a1b 2c3d 4e5f 6071';
  const b = '8293 a4b5 c6d7 e8f9';
  it.each([
    [
      refusal.keyChanged('dana', [{ type: 'ed25519', expected: a, roster: b }]),
      `.sleds/roster.yml has keys for 'dana' other than the ones pinned on this seat (ed25519 pinned ${a} → roster ${b}) — confirm the new keys with dana out of band (they run 'sleds keys show'), then run 'sleds keys trust dana' to pin them`,
    ],
    [
      refusal.keyChanged('dana', [
        { type: 'x25519', expected: b, roster: a },
        { type: 'ed25519', expected: a, roster: b },
      ]),
      `.sleds/roster.yml has keys for 'dana' other than the ones pinned on this seat (x25519 pinned ${b} → roster ${a}; ed25519 pinned ${a} → roster ${b}) — confirm the new keys with dana out of band (they run 'sleds keys show'), then run 'sleds keys trust dana' to pin them`,
    ],
    [
      refusal.untrustedSender('jd7k2m9qa4zp', 'dana', { x25519: a, ed25519: b }),
      `hand-off jd7k2m9qa4zp comes from 'dana', whose keys are not pinned on this seat (roster ed25519 ${b}, x25519 ${a}) — nothing was written; compare them with dana out of band (they run 'sleds keys show'), then run 'sleds keys trust dana' and pick it up again`,
    ],
    [
      refusal.selfKeyMismatch('jo', [{ type: 'x25519', expected: a, roster: b }]),
      `.sleds/roster.yml has keys for you ('jo') that are not this seat's (x25519 seat ${a} → roster ${b}) — if you ran 'sleds keys init --force', commit the entry 'sleds keys show' prints; if not, someone changed your entry: restore it`,
    ],
    [refusal.ambiguousRoster('dana'), `.sleds/roster.yml names 'dana' more than once with different keys — keep the one entry dana committed and remove the others`],
  ])('%#: one line', (error, line) => {
    expect(error.message).toBe(line);
    expect(error.message).not.toContain('\n');
  });
});

describe('the pin file shape', () => {
  it.each([
    ['a pin', { v: 1, pins: [pin('dana', DANA)] }, true],
    ['no pins', { v: 1, pins: [] }, true],
    ['a private key smuggled in beside a pin', { v: 1, pins: [{ ...pin('dana', DANA), privateKey: '-----BEGIN PRIVATE KEY-----' }] }, false],
    ['a PEM where a public key goes', { v: 1, pins: [{ ...pin('dana', DANA), x25519: '-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VuBCIEI' }] }, false],
    ['a handle with a space', { v: 1, pins: [pin('da na', DANA)] }, false],
    ['another version', { v: 2, pins: [] }, false],
  ])('%s', (_what, data, ok) => {
    expect(TrustFileSchema.safeParse(data).success).toBe(ok);
  });
});
