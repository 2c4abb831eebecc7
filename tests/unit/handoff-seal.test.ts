import { createCipheriv, createHash, diffieHellman, generateKeyPairSync, hkdfSync, sign } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { HandoffError, type HandoffErrorKind } from '../../core/handoff/errors.js';
import { HANDOFF_TTL_MS, isExpired } from '../../core/handoff/header.js';
import { RosterFile } from '../../core/roster.js';
import { isWallId } from '../../core/wall/wall-id.js';
import { generateSeatKeys, type SeatKeys } from '../../musher/handoff/keys.js';
import { BUNDLE_MAGIC, decodeBundle, open, readHeader, seal, type OpenOptions } from '../../musher/handoff/seal.js';

const NOW = Date.parse('2026-11-30T15:00:00Z');
const jo = generateSeatKeys();
const dana = generateSeatKeys();
const mallory = generateSeatKeys();

function entry(handle: string, keys: SeatKeys) {
  return { handle, keys: { x25519: keys.x25519.publicKey, ed25519: keys.ed25519.publicKey } };
}
const roster = RosterFile.parse({ teammates: [entry('jo', jo), entry('dana', dana), { handle: 'sam' }] });
const CONTENT = Buffer.from('the snapshot container: code, conversation, brief\n'.repeat(50));

function sealed(content = CONTENT, nowMs = NOW): Buffer {
  return seal(content, { sender: { handle: 'jo', signingKey: jo.ed25519.privateKey }, recipient: { handle: 'dana', x25519: dana.x25519.publicKey }, nowMs });
}
const asDana: OpenOptions = { roster, me: { handle: 'dana', x25519PrivateKey: dana.x25519.privateKey }, nowMs: NOW + 1000 };

function refusal(fn: () => unknown): { kind: HandoffErrorKind; message: string } {
  try {
    fn();
  } catch (e) {
    if (e instanceof HandoffError) return { kind: e.kind, message: e.message };
    throw e;
  }
  throw new Error('not refused');
}

/** Layout offsets of a bundle (see seal.ts). */
function offsets(b: Buffer) {
  const h = b.readUInt32BE(8);
  const c = b.readUInt32BE(12 + h);
  return { header: 12, h, cipher: 16 + h, c, tag: 16 + h + c, sig: 32 + h + c };
}

function flip(b: Buffer, at: number): Buffer {
  const copy = Buffer.from(b);
  copy[at] = copy[at]! ^ 0x01;
  return copy;
}

describe('seal/open: the round trip', () => {
  it('the recipient gets the content back, with the header naming sender, recipient, id and 7 days', () => {
    const bundle = sealed();
    const opened = open(bundle, asDana);
    expect(opened.content.equals(CONTENT)).toBe(true);
    expect(opened.header).toMatchObject({ v: 1, sender: 'jo', recipient: 'dana', createdAt: NOW, expiresAt: NOW + 7 * 24 * 3600 * 1000 });
    expect(opened.header.contentSha256).toBe(createHash('sha256').update(CONTENT).digest('hex'));
    expect(isWallId(opened.header.id)).toBe(true);
    expect(bundle.subarray(0, 8).equals(BUNDLE_MAGIC)).toBe(true);
    // The content is not in the bundle in the clear.
    expect(bundle.includes(Buffer.from('code, conversation'))).toBe(false);
  });

  it('empty content, and two seals of the same content differ (fresh ephemeral key and id)', () => {
    expect(open(sealed(Buffer.alloc(0)), asDana).content.length).toBe(0);
    const a = sealed();
    const b = sealed();
    expect(a.equals(b)).toBe(false);
    expect(readHeader(a).ephemeralPublicKey).not.toBe(readHeader(b).ephemeralPublicKey);
    expect(readHeader(a).id).not.toBe(readHeader(b).id);
  });

  it('the header is readable without any key', () => {
    const h = readHeader(sealed());
    expect(h).toMatchObject({ sender: 'jo', recipient: 'dana', createdAt: NOW, expiresAt: NOW + HANDOFF_TTL_MS, recipientPublicKey: dana.x25519.publicKey });
  });
});

describe('open refuses, one line each, in order', () => {
  const bundle = sealed();
  const o = offsets(bundle);

  it.each([
    ['a flipped ciphertext byte', () => flip(bundle, o.cipher + 5)],
    ['a flipped tag byte', () => flip(bundle, o.tag + 3)],
    ['a flipped signature byte', () => flip(bundle, o.sig + 10)],
    // A digit of createdAt changed: still valid JSON and a valid header, but not what jo signed.
    [
      'a changed header value',
      () => {
        const text = bundle.subarray(o.header, o.header + o.h).toString('utf8');
        const forged = text.replace(`"createdAt":${NOW}`, `"createdAt":${NOW + 1}`);
        expect(forged).not.toBe(text);
        return Buffer.concat([bundle.subarray(0, o.header), Buffer.from(forged), bundle.subarray(o.header + o.h)]);
      },
    ],
  ])('%s: bad signature or tampered bytes', (_what, make) => {
    const r = refusal(() => open(make(), asDana));
    expect(r.kind).toBe('bad-signature');
    expect(r.message).toBe(`hand-off ${readHeader(bundle).id}: bad signature or tampered bytes (it does not verify against jo's key) — nothing was written; ask jo to hand it off again`);
  });

  it('a header re-pointed at the recipient by someone else, re-signed with their key: bad signature', () => {
    // Mallory re-signs jo's bundle with her own key but keeps jo's name: the roster's key for jo does not verify it.
    const { signed } = decodeBundle(bundle);
    const forged = Buffer.concat([signed, sign(null, signed, mallory.ed25519.privateKey)]);
    expect(refusal(() => open(forged, asDana)).kind).toBe('bad-signature');
  });

  it.each([
    ['empty', Buffer.alloc(0), 'this is not a sleds hand-off bundle (0 bytes is too short) — ask the sender to hand it off again'],
    ['garbage', Buffer.from('not a bundle at all, just some bytes that are long enough to pass the size check here'.repeat(2)), 'this is not a sleds hand-off bundle (it does not start with the bundle magic) — ask the sender to hand it off again'],
    ['truncated by one byte', bundle.subarray(0, bundle.length - 1), 'this is not a sleds hand-off bundle (it is cut short) — ask the sender to hand it off again'],
    ['cut inside its header', bundle.subarray(0, 100), 'this is not a sleds hand-off bundle (it is cut short inside its header) — ask the sender to hand it off again'],
    ['a byte appended', Buffer.concat([bundle, Buffer.from([0])]), 'this is not a sleds hand-off bundle (it has bytes after its signature) — ask the sender to hand it off again'],
  ])('malformed: %s', (_what, bytes, message) => {
    expect(refusal(() => open(bytes, asDana))).toEqual({ kind: 'malformed', message });
    expect(refusal(() => readHeader(bytes))).toEqual({ kind: 'malformed', message });
  });

  it('malformed: a header that is not JSON', () => {
    const broken = Buffer.from(bundle);
    broken[o.header] = 0x7e; // '{' → '~'
    expect(refusal(() => open(broken, asDana))).toEqual({ kind: 'malformed', message: 'this is not a sleds hand-off bundle (its header is not JSON) — ask the sender to hand it off again' });
  });

  it('unknown sender: the sender has no keys in the roster, or is not in it', () => {
    const id = readHeader(bundle).id;
    const withoutJo = RosterFile.parse({ teammates: [entry('dana', dana)] });
    const r = refusal(() => open(bundle, { ...asDana, roster: withoutJo }));
    expect(r).toEqual({
      kind: 'unknown-sender',
      message: `hand-off ${id} claims to come from 'jo', whose signing key is not in .sleds/roster.yml — pull the latest roster, or ask jo to run 'sleds keys init' and commit the entry`,
    });
    const fromSam = seal(CONTENT, { sender: { handle: 'sam', signingKey: mallory.ed25519.privateKey }, recipient: { handle: 'dana', x25519: dana.x25519.publicKey }, nowMs: NOW });
    expect(refusal(() => open(fromSam, asDana)).kind).toBe('unknown-sender');
  });

  it('wrong recipient: by handle, and by key (the same handle on a seat with another key)', () => {
    const id = readHeader(bundle).id;
    expect(refusal(() => open(bundle, { ...asDana, me: { handle: 'jo', x25519PrivateKey: jo.x25519.privateKey } }))).toEqual({
      kind: 'wrong-recipient',
      message: `hand-off ${id} is for 'dana', not for you ('jo') — it can only be picked up by dana`,
    });
    const r = refusal(() => open(bundle, { ...asDana, me: { handle: 'dana', x25519PrivateKey: mallory.x25519.privateKey } }));
    expect(r.kind).toBe('wrong-recipient');
    expect(r.message).toContain('was sealed to another key than this seat');
  });

  it('expired by the clock passed in; one millisecond before, it opens', () => {
    const id = readHeader(bundle).id;
    const expiresAt = readHeader(bundle).expiresAt;
    expect(open(bundle, { ...asDana, nowMs: expiresAt - 1 }).content.equals(CONTENT)).toBe(true);
    expect(refusal(() => open(bundle, { ...asDana, nowMs: expiresAt }))).toEqual({
      kind: 'expired',
      message: `hand-off ${id} expired at 2026-12-07T15:00:00.000Z — ask the sender to hand it off again`,
    });
    expect(isExpired({ expiresAt }, expiresAt + 86_400_000)).toBe(true);
  });

  it('checks run in order: a tampered bundle to someone else is refused for its signature first', () => {
    const tampered = flip(bundle, o.cipher);
    expect(refusal(() => open(tampered, { ...asDana, me: { handle: 'jo', x25519PrivateKey: jo.x25519.privateKey }, nowMs: NOW + 30 * 86_400_000 })).kind).toBe('bad-signature');
    expect(refusal(() => open(bundle, { ...asDana, me: { handle: 'jo', x25519PrivateKey: jo.x25519.privateKey }, nowMs: NOW + 30 * 86_400_000 })).kind).toBe('wrong-recipient');
  });

  it('content hash mismatch: a rostered sender whose header lies about the content (built by hand, as a faulty sender would)', () => {
    const eph = generateKeyPairSync('x25519');
    const ephRaw = Buffer.from(eph.publicKey.export({ format: 'jwk' }).x!, 'base64url').toString('base64');
    const header = Buffer.from(
      JSON.stringify({ v: 1, id: 'jd7k2m9qa4zp', sender: 'jo', recipient: 'dana', createdAt: NOW, expiresAt: NOW + HANDOFF_TTL_MS, contentSha256: 'ab'.repeat(32), ephemeralPublicKey: ephRaw, recipientPublicKey: dana.x25519.publicKey }),
    );
    const shared = diffieHellman({ privateKey: eph.privateKey, publicKey: dana.x25519.privateKey });
    const okm = Buffer.from(hkdfSync('sha256', shared, createHash('sha256').update(header).digest(), Buffer.from('sleds-handoff/1 aes-256-gcm key+nonce'), 44));
    const cipher = createCipheriv('aes-256-gcm', okm.subarray(0, 32), okm.subarray(32));
    cipher.setAAD(header);
    const ct = Buffer.concat([cipher.update(CONTENT), cipher.final()]);
    const u32 = (n: number) => {
      const b = Buffer.alloc(4);
      b.writeUInt32BE(n);
      return b;
    };
    const signed = Buffer.concat([BUNDLE_MAGIC, u32(header.length), header, u32(ct.length), ct, cipher.getAuthTag()]);
    const lying = Buffer.concat([signed, sign(null, signed, jo.ed25519.privateKey)]);
    expect(refusal(() => open(lying, asDana))).toEqual({
      kind: 'content-mismatch',
      message: `hand-off jd7k2m9qa4zp: its content does not match the hash in its header — nothing was written; ask jo to hand it off again`,
    });
    // And the same hand-built bundle with the right hash opens: the test's construction is the real format.
    const honestHeader = Buffer.from(header.toString().replace('ab'.repeat(32), createHash('sha256').update(CONTENT).digest('hex')));
    const okm2 = Buffer.from(hkdfSync('sha256', shared, createHash('sha256').update(honestHeader).digest(), Buffer.from('sleds-handoff/1 aes-256-gcm key+nonce'), 44));
    const c2 = createCipheriv('aes-256-gcm', okm2.subarray(0, 32), okm2.subarray(32));
    c2.setAAD(honestHeader);
    const ct2 = Buffer.concat([c2.update(CONTENT), c2.final()]);
    const signed2 = Buffer.concat([BUNDLE_MAGIC, u32(honestHeader.length), honestHeader, u32(ct2.length), ct2, c2.getAuthTag()]);
    expect(open(Buffer.concat([signed2, sign(null, signed2, jo.ed25519.privateKey)]), asDana).content.equals(CONTENT)).toBe(true);
  });
});
