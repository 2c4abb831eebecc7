import { sign, verify } from 'node:crypto';
import { canonicalReceipt } from '../../core/receipt/canonical.js';
import { ReceiptBody, SignedReceipt } from '../../core/receipt/receipt.js';
import { publicKeyFromRaw, type SeatKeyPair } from '../handoff/keys.js';

/** Ed25519 over the canonical serialization of the body; unsigned (signature and signer null) without a key. */
export function signReceipt(body: ReceiptBody, key: SeatKeyPair | null): SignedReceipt {
  if (!key) return { body, signature: null, signer: null };
  const signature = sign(null, Buffer.from(canonicalReceipt(body), 'utf8'), key.privateKey).toString('base64');
  return { body, signature, signer: key.publicKey };
}

export type Verdict = { ok: true; signer: string } | { ok: false; why: string };

/**
 * Checks a receipt as it was handed over (parsed JSON, from musher or a file): its shape, then its signature over
 * the canonical bytes of its body. Each failure is one line saying what is wrong.
 */
export function verifyReceipt(raw: unknown): Verdict {
  const parsed = SignedReceipt.safeParse(raw);
  if (!parsed.success) return { ok: false, why: `not a receipt: ${parsed.error.issues.map((i) => `${i.path.join('.') || 'receipt'} ${i.message}`).join('; ')}` };
  const { signature, signer } = parsed.data;
  if (!signature || !signer) return { ok: false, why: 'the receipt is unsigned (its seat had no keys) — nothing to verify' };
  // The body as handed over, not as parsed: a field added or changed after signing must fail.
  const body = (raw as { body: unknown }).body;
  if (!ReceiptBody.safeParse(body).success) return { ok: false, why: 'the receipt body is not a receipt' };
  let key;
  try {
    key = publicKeyFromRaw(signer, 'ed25519');
  } catch {
    return { ok: false, why: "the signer is not an Ed25519 public key — the receipt's signer field was changed" };
  }
  const good = verify(null, Buffer.from(canonicalReceipt(body), 'utf8'), key, Buffer.from(signature, 'base64'));
  return good ? { ok: true, signer } : { ok: false, why: 'the signature does not match the body — the receipt was changed after it was signed' };
}
