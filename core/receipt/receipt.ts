import { z } from 'zod';
import { Band } from '../estimate/band.js';

/**
 * A receipt: what a task actually cost and took, against the band it had, signed by the seat that did it.
 * The record the estimator learns from (nearest neighbours on type, repo, model, prompt size, files, turns).
 * Pure: signing and storing are musher's (musher/receipts/).
 */
export const ReceiptBody = z.object({
  v: z.literal(1),
  id: z.string().min(1),
  taskId: z.string().min(1),
  title: z.string(),
  type: z.string().nullable(),
  repo: z.string().nullable(),
  /** The seat's roster handle (or the local user when there is no roster). */
  seat: z.string().min(1),
  harness: z.string().min(1),
  models: z.array(z.string()),
  /** API-equivalent dollars of every session of the task, plan and key alike. */
  costMicros: z.number().int().nonnegative(),
  /** Of which spent on the platform key (through musher's gateway). */
  keyMicros: z.number().int().nonnegative(),
  /** Minutes of work: gaps (waits for limits or input) are not counted. */
  activeMinutes: z.number().nonnegative(),
  promptChars: z.number().int().nonnegative(),
  filesTouched: z.number().int().nonnegative(),
  turns: z.number().int().nonnegative(),
  band: Band.nullable(),
  /** Both dollars and minutes inside the band; null without one. */
  inBand: z.boolean().nullable(),
  startedAt: z.number().int(),
  endedAt: z.number().int(),
  /** Priced on the half-price tier (an overnight job: a Message Batch, OpenAI flex); absent: the standard tier. */
  tier: z.literal('batch').optional(),
});
export type ReceiptBody = z.infer<typeof ReceiptBody>;

export const SignedReceipt = z.object({
  body: ReceiptBody,
  /** base64 Ed25519 signature over canonicalReceipt(body); null: kept unsigned (the seat had no keys). */
  signature: z.string().min(1).nullable(),
  /** base64 (raw 32-byte) Ed25519 public key of the signer; null when unsigned. */
  signer: z.string().min(1).nullable(),
});
export type SignedReceipt = z.infer<typeof SignedReceipt>;
