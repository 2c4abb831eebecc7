import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import type { SecretStore } from '../secrets/store.js';

/**
 * A seat's hand-off keys: X25519 (bundles are sealed to it) and Ed25519 (what it sends is signed with it). The
 * private halves live in the secret store as PKCS#8 PEM under generic names and leave this module only as
 * KeyObjects; the public halves are 32 raw bytes in base64, the spelling of `.sleds/roster.yml`.
 */
export const SEAT_KEY_SECRETS = { x25519: 'handoff-x25519-private', ed25519: 'handoff-ed25519-private' } as const;
export type SeatKeyType = keyof typeof SEAT_KEY_SECRETS;

export interface SeatKeyPair {
  privateKey: KeyObject;
  /** base64 of the 32-byte raw public key. */
  publicKey: string;
}

export interface SeatKeys {
  x25519: SeatKeyPair;
  ed25519: SeatKeyPair;
}

export class SeatKeysError extends Error {}

/** The 32 raw bytes of an X25519/Ed25519 public (or private: its public half) key, in base64. */
export function rawPublicKey(key: KeyObject): string {
  const pub = key.type === 'private' ? createPublicKey(key) : key;
  const x = pub.export({ format: 'jwk' }).x;
  if (typeof x !== 'string') throw new SeatKeysError('not an X25519 or Ed25519 key');
  return Buffer.from(x, 'base64url').toString('base64');
}

/** A KeyObject from a roster's base64 raw public key; throws on anything that is not 32 bytes of base64. */
export function publicKeyFromRaw(b64: string, type: SeatKeyType): KeyObject {
  const raw = Buffer.from(b64, 'base64');
  if (raw.length !== 32 || raw.toString('base64') !== b64) throw new SeatKeysError(`'${b64.slice(0, 12)}…' is not a 32-byte ${type} public key in base64`);
  return createPublicKey({ key: { kty: 'OKP', crv: type === 'x25519' ? 'X25519' : 'Ed25519', x: raw.toString('base64url') }, format: 'jwk' });
}

/** What may be shown of a public key to compare it by eye: sha256 of its raw bytes, 16 hex digits in 4 groups. */
export function keyFingerprint(b64: string): string {
  const hex = createHash('sha256').update(Buffer.from(b64, 'base64')).digest('hex').slice(0, 16);
  return hex.match(/.{4}/g)!.join(' ');
}

function pair(privateKey: KeyObject): SeatKeyPair {
  return { privateKey, publicKey: rawPublicKey(privateKey) };
}

export function generateSeatKeys(): SeatKeys {
  return { x25519: pair(generateKeyPairSync('x25519').privateKey), ed25519: pair(generateKeyPairSync('ed25519').privateKey) };
}

function toPem(key: KeyObject): string {
  return key.export({ format: 'pem', type: 'pkcs8' }).toString();
}

function fromPem(pem: string, type: SeatKeyType): KeyObject {
  let key: KeyObject;
  try {
    key = createPrivateKey(pem);
  } catch {
    throw new SeatKeysError(`the seat's ${type} private key in the secret store is not readable — run 'sleds keys init --force' and commit the new roster entry`);
  }
  if (key.asymmetricKeyType !== type) throw new SeatKeysError(`the secret ${SEAT_KEY_SECRETS[type]} holds a ${key.asymmetricKeyType} key, not ${type} — run 'sleds keys init --force'`);
  return key;
}

/** Which of the seat's private keys are in the store. */
export async function seatKeysPresent(store: SecretStore): Promise<SeatKeyType[]> {
  const out: SeatKeyType[] = [];
  for (const type of ['x25519', 'ed25519'] as const) if ((await store.get(SEAT_KEY_SECRETS[type])) !== null) out.push(type);
  return out;
}

/** The seat's keys, or null when none were made; throws when only one is there or one is unreadable. */
export async function loadSeatKeys(store: SecretStore): Promise<SeatKeys | null> {
  const x = await store.get(SEAT_KEY_SECRETS.x25519);
  const ed = await store.get(SEAT_KEY_SECRETS.ed25519);
  if (x === null && ed === null) return null;
  if (x === null || ed === null) throw new SeatKeysError(`only one of the seat's hand-off keys is in the secret store — run 'sleds keys init --force' and commit the new roster entry`);
  return { x25519: pair(fromPem(x, 'x25519')), ed25519: pair(fromPem(ed, 'ed25519')) };
}

export async function saveSeatKeys(store: SecretStore, keys: SeatKeys): Promise<void> {
  await store.set(SEAT_KEY_SECRETS.x25519, toPem(keys.x25519.privateKey));
  await store.set(SEAT_KEY_SECRETS.ed25519, toPem(keys.ed25519.privateKey));
}

/** The seat's handle: SLEDS_SEAT, else config.yml's handle:, else the OS user (one function: musher/config/handle.ts). */
export { seatHandle } from '../config/handle.js';
