import { z } from 'zod';
import { WALL_ID_ALPHABET, WALL_ID_LENGTH } from '../wall/wall-id.js';

/**
 * The hand-off bundle's header: who sent it to whom, when it stops being good, what it holds. It travels in the
 * clear (the transport lists and prunes by it) but is authenticated twice: it is the AES-GCM AAD and it is under
 * the sender's signature. Pure: the schema, the expiry rule, the key spelling.
 */

/** A bundle is good for seven days from its making; pickup refuses it after, and prune removes it. */
export const HANDOFF_TTL_MS = 7 * 24 * 60 * 60 * 1000;

/** A 32-byte raw public key (X25519 or Ed25519) in standard base64: 43 characters and one '=' (the last
 *  character before it carries 4 bits, so only 16 letters can stand there). */
export const RawPublicKeyB64 = z
  .string()
  .regex(/^[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=$/, 'a public key is 32 bytes in base64 (44 characters ending in =)');

export const HandleSchema = z.string().regex(/^[a-z0-9][a-z0-9._-]*$/i, 'a handle is letters, digits, dot, dash or underscore');

export const BundleIdSchema = z
  .string()
  .length(WALL_ID_LENGTH)
  .refine((s) => [...s].every((c) => WALL_ID_ALPHABET.includes(c)), `a bundle id is ${WALL_ID_LENGTH} of ${WALL_ID_ALPHABET}`);

export const HandoffHeaderSchema = z
  .looseObject({
    v: z.literal(1),
    id: BundleIdSchema,
    sender: HandleSchema,
    recipient: HandleSchema,
    createdAt: z.number().int().nonnegative(),
    expiresAt: z.number().int().nonnegative(),
    contentSha256: z.string().regex(/^[0-9a-f]{64}$/),
    /** The sender's one-time X25519 key for this bundle. */
    ephemeralPublicKey: RawPublicKeyB64,
    /** The recipient's X25519 key it was sealed to: a seat with another key is told so before any decryption. */
    recipientPublicKey: RawPublicKeyB64,
  })
  .refine((h) => h.expiresAt > h.createdAt && h.expiresAt - h.createdAt <= HANDOFF_TTL_MS, 'expiresAt must fall within 7 days after createdAt');
export type HandoffHeader = z.infer<typeof HandoffHeaderSchema>;

/** Expired from the instant `expiresAt` is reached; one millisecond before it is still good. */
export function isExpired(header: Pick<HandoffHeader, 'expiresAt'>, nowMs: number): boolean {
  return nowMs >= header.expiresAt;
}

/** How far ahead of the recipient's clock a bundle's `createdAt` may be: clocks drift, bundles do not come from tomorrow. */
export const MAX_CLOCK_SKEW_MS = 5 * 60 * 1000;

/** Made later than the recipient's clock allows (beyond the skew): a bundle dated ahead to outlive its week. */
export function isFromTheFuture(header: Pick<HandoffHeader, 'createdAt'>, nowMs: number): boolean {
  return header.createdAt > nowMs + MAX_CLOCK_SKEW_MS;
}

export function expiresAtFor(createdAt: number): number {
  return createdAt + HANDOFF_TTL_MS;
}

export function sameHandle(a: string, b: string): boolean {
  return a.toLowerCase() === b.toLowerCase();
}
