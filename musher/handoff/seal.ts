import { createCipheriv, createDecipheriv, createHash, diffieHellman, generateKeyPairSync, hkdfSync, randomBytes, sign, verify, type KeyObject } from 'node:crypto';
import { refusal } from '../../core/handoff/errors.js';
import { expiresAtFor, HandoffHeaderSchema, isExpired, isFromTheFuture, sameHandle, type HandoffHeader } from '../../core/handoff/header.js';
import { teammateByHandle, type RosterFile } from '../../core/roster.js';
import { wallIdFrom } from '../../core/wall/wall-id.js';
import { publicKeyFromRaw, rawPublicKey } from './keys.js';

/**
 * The sealed, signed, expiring hand-off bundle. node:crypto only.
 *
 * Sealing: a one-time X25519 key pair, Diffie-Hellman with the recipient's X25519 public key, HKDF-SHA256 (salt =
 * sha256 of the header bytes, which name both public keys, so the key is bound to this header) → 32 bytes of
 * AES-256-GCM key and 12 of nonce; GCM over the content with the header bytes as AAD; then the sender's Ed25519
 * signature over everything before it.
 *
 * Layout (all integers big-endian; nothing after the signature):
 *
 *   offset      size  field
 *   0           8     magic "SLEDSHB" 0x01
 *   8           4     H: header length (1..8192)
 *   12          H     header: UTF-8 JSON (HandoffHeaderSchema)
 *   12+H        4     C: ciphertext length (≤ MAX_BUNDLE_CONTENT_BYTES)
 *   16+H        C     ciphertext (AES-256-GCM)
 *   16+H+C      16    GCM tag
 *   32+H+C      64    Ed25519 signature over bytes [0, 32+H+C)
 *
 * `open` returns the content only after every check passed and writes nothing; `readHeader` reads the header
 * without any key, and proves nothing: it is for listing and pruning.
 */
export const BUNDLE_MAGIC = Buffer.from('SLEDSHB\x01', 'latin1');
export const MAX_HEADER_BYTES = 8192;
/** The content a bundle may hold; a snapshot's container is well under it (its git part is capped at 20 MiB). */
export const MAX_BUNDLE_CONTENT_BYTES = 512 * 1024 * 1024;
const TAG_BYTES = 16;
const SIG_BYTES = 64;
const HKDF_INFO = Buffer.from('sleds-handoff/1 aes-256-gcm key+nonce', 'utf8');

export interface BundleParts {
  headerBytes: Buffer;
  ciphertext: Buffer;
  tag: Buffer;
  signature: Buffer;
  /** Bytes [0, 32+H+C): what the signature covers. */
  signed: Buffer;
}

/** Splits a bundle into its parts by the layout alone (no header parsing); throws `malformed`. */
export function decodeBundle(bundle: Buffer): BundleParts {
  const fixed = BUNDLE_MAGIC.length + 4 + 4 + TAG_BYTES + SIG_BYTES;
  if (bundle.length < fixed) throw refusal.malformed(`${bundle.length} bytes is too short`);
  if (!bundle.subarray(0, BUNDLE_MAGIC.length).equals(BUNDLE_MAGIC)) throw refusal.malformed('it does not start with the bundle magic');
  const h = bundle.readUInt32BE(8);
  if (h === 0 || h > MAX_HEADER_BYTES) throw refusal.malformed(`a header of ${h} bytes`);
  if (bundle.length < fixed + h) throw refusal.malformed('it is cut short inside its header');
  const c = bundle.readUInt32BE(12 + h);
  if (c > MAX_BUNDLE_CONTENT_BYTES) throw refusal.malformed(`${c} bytes of content is over the limit`);
  if (bundle.length !== fixed + h + c) throw refusal.malformed(bundle.length < fixed + h + c ? 'it is cut short' : 'it has bytes after its signature');
  const tagAt = 16 + h + c;
  return {
    headerBytes: bundle.subarray(12, 12 + h),
    ciphertext: bundle.subarray(16 + h, tagAt),
    tag: bundle.subarray(tagAt, tagAt + TAG_BYTES),
    signature: bundle.subarray(tagAt + TAG_BYTES),
    signed: bundle.subarray(0, tagAt + TAG_BYTES),
  };
}

function parseHeader(headerBytes: Buffer): HandoffHeader {
  let json: unknown;
  try {
    json = JSON.parse(headerBytes.toString('utf8'));
  } catch {
    throw refusal.malformed('its header is not JSON');
  }
  const parsed = HandoffHeaderSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw refusal.malformed(`its header's ${issue.path.join('.') || 'shape'}: ${issue.message}`);
  }
  return parsed.data;
}

/** The header, unverified: for listing and pruning only — never trust it for more. Throws `malformed`. */
export function readHeader(bundle: Buffer): HandoffHeader {
  return parseHeader(decodeBundle(bundle).headerBytes);
}

/**
 * The header from a bundle's first bytes (a listing reads no more than the magic, the length and the largest
 * header), unverified like `readHeader`. Throws `malformed`.
 */
export function readHeaderFromPrefix(prefix: Buffer): HandoffHeader {
  if (prefix.length < 12 || !prefix.subarray(0, BUNDLE_MAGIC.length).equals(BUNDLE_MAGIC)) throw refusal.malformed('it does not start with the bundle magic');
  const h = prefix.readUInt32BE(8);
  if (h === 0 || h > MAX_HEADER_BYTES) throw refusal.malformed(`a header of ${h} bytes`);
  if (prefix.length < 12 + h) throw refusal.malformed('it is cut short inside its header');
  return parseHeader(prefix.subarray(12, 12 + h));
}

function keyAndNonce(shared: Buffer, headerBytes: Buffer): { key: Buffer; nonce: Buffer } {
  const salt = createHash('sha256').update(headerBytes).digest();
  const okm = Buffer.from(hkdfSync('sha256', shared, salt, HKDF_INFO, 44));
  return { key: okm.subarray(0, 32), nonce: okm.subarray(32, 44) };
}

export interface SealOptions {
  sender: { handle: string; signingKey: KeyObject };
  /** `x25519`: the recipient's public key as the roster spells it (base64 of 32 raw bytes). */
  recipient: { handle: string; x25519: string };
  nowMs: number;
  /** Default: 12 random characters of the wall-id alphabet. */
  id?: string;
}

export function newBundleId(): string {
  return wallIdFrom(randomBytes(12));
}

export function seal(content: Buffer, opts: SealOptions): Buffer {
  if (content.length > MAX_BUNDLE_CONTENT_BYTES) throw new Error(`the hand-off content is ${content.length} bytes, over the ${MAX_BUNDLE_CONTENT_BYTES}-byte limit — take a smaller snapshot`);
  if (opts.sender.signingKey.asymmetricKeyType !== 'ed25519' || opts.sender.signingKey.type !== 'private') throw new Error('seal needs the sender\'s Ed25519 private key');
  const recipientKey = publicKeyFromRaw(opts.recipient.x25519, 'x25519');
  const ephemeral = generateKeyPairSync('x25519');
  const header: HandoffHeader = {
    v: 1,
    id: opts.id ?? newBundleId(),
    sender: opts.sender.handle,
    recipient: opts.recipient.handle,
    createdAt: opts.nowMs,
    expiresAt: expiresAtFor(opts.nowMs),
    contentSha256: createHash('sha256').update(content).digest('hex'),
    ephemeralPublicKey: rawPublicKey(ephemeral.publicKey),
    recipientPublicKey: opts.recipient.x25519,
  };
  // What we write must be what we would accept.
  const headerBytes = Buffer.from(JSON.stringify(HandoffHeaderSchema.parse(header)), 'utf8');
  const { key, nonce } = keyAndNonce(diffieHellman({ privateKey: ephemeral.privateKey, publicKey: recipientKey }), headerBytes);
  const cipher = createCipheriv('aes-256-gcm', key, nonce);
  cipher.setAAD(headerBytes);
  const ciphertext = Buffer.concat([cipher.update(content), cipher.final()]);
  const h = Buffer.alloc(4);
  h.writeUInt32BE(headerBytes.length);
  const c = Buffer.alloc(4);
  c.writeUInt32BE(ciphertext.length);
  const signed = Buffer.concat([BUNDLE_MAGIC, h, headerBytes, c, ciphertext, cipher.getAuthTag()]);
  return Buffer.concat([signed, sign(null, signed, opts.sender.signingKey)]);
}

export interface OpenOptions {
  /** The roster the sender's signing key is looked up in (by the header's sender handle). */
  roster: RosterFile;
  /** This seat: its handle and its X25519 private key. */
  me: { handle: string; x25519PrivateKey: KeyObject };
  nowMs: number;
  /** The id the bundle was asked for by (its ref or file name): the signed header must name the same. */
  expectId?: string;
}

export interface OpenedBundle {
  header: HandoffHeader;
  content: Buffer;
}

/**
 * Checks, in order — malformed, unknown sender, bad signature or tampered bytes, wrong recipient, another id than
 * the one asked for, made in the future, expired, then (decrypting) undecryptable and content hash — and throws the
 * first refusal as a HandoffError. Writes nothing.
 */
export function open(bundle: Buffer, opts: OpenOptions): OpenedBundle {
  const parts = decodeBundle(bundle);
  const header = parseHeader(parts.headerBytes);

  const sender = teammateByHandle(opts.roster, header.sender);
  if (!sender?.keys) throw refusal.unknownSender(header.id, header.sender);
  const signingKey = publicKeyFromRaw(sender.keys.ed25519, 'ed25519');
  if (!verify(null, parts.signed, signingKey, parts.signature)) throw refusal.badSignature(header.id, header.sender);

  if (!sameHandle(header.recipient, opts.me.handle)) throw refusal.wrongRecipient(header.id, header.recipient, opts.me.handle, 'handle');
  if (header.recipientPublicKey !== rawPublicKey(opts.me.x25519PrivateKey)) throw refusal.wrongRecipient(header.id, header.recipient, opts.me.handle, 'key');

  if (opts.expectId !== undefined && header.id !== opts.expectId) throw refusal.idMismatch(opts.expectId, header.id);
  if (isFromTheFuture(header, opts.nowMs)) throw refusal.fromTheFuture(header.id, new Date(header.createdAt).toISOString(), new Date(opts.nowMs).toISOString());
  if (isExpired(header, opts.nowMs)) throw refusal.expired(header.id, new Date(header.expiresAt).toISOString());

  let content: Buffer;
  try {
    const ephemeral = publicKeyFromRaw(header.ephemeralPublicKey, 'x25519');
    const { key, nonce } = keyAndNonce(diffieHellman({ privateKey: opts.me.x25519PrivateKey, publicKey: ephemeral }), parts.headerBytes);
    const decipher = createDecipheriv('aes-256-gcm', key, nonce);
    decipher.setAAD(parts.headerBytes);
    decipher.setAuthTag(parts.tag);
    content = Buffer.concat([decipher.update(parts.ciphertext), decipher.final()]);
  } catch {
    throw refusal.undecryptable(header.id, header.sender);
  }
  if (createHash('sha256').update(content).digest('hex') !== header.contentSha256) throw refusal.contentMismatch(header.id, header.sender);
  return { header, content };
}
