/**
 * Why a bundle was refused. `open` checks in this order and stops at the first: the kinds are what pickup shows
 * and what tests assert; each message is one line saying what happened and what to do next.
 */
export type HandoffErrorKind =
  | 'malformed'
  | 'unknown-sender'
  | 'bad-signature'
  | 'wrong-recipient'
  | 'expired'
  | 'id-mismatch'
  | 'from-the-future'
  | 'undecryptable'
  | 'content-mismatch';

export class HandoffError extends Error {
  constructor(
    readonly kind: HandoffErrorKind,
    message: string,
  ) {
    super(message);
    this.name = 'HandoffError';
  }
}

export function isHandoffError(e: unknown, kind?: HandoffErrorKind): e is HandoffError {
  return e instanceof HandoffError && (kind === undefined || e.kind === kind);
}

/** The one line for each refusal. `id` is the bundle's when it could be read. */
export const refusal = {
  malformed: (why: string) =>
    new HandoffError('malformed', `this is not a sleds hand-off bundle (${why}) — ask the sender to hand it off again`),
  unknownSender: (id: string, sender: string) =>
    new HandoffError(
      'unknown-sender',
      `hand-off ${id} claims to come from '${sender}', whose signing key is not in .sleds/roster.yml — pull the latest roster, or ask ${sender} to run 'sleds keys init' and commit the entry`,
    ),
  badSignature: (id: string, sender: string) =>
    new HandoffError(
      'bad-signature',
      `hand-off ${id}: bad signature or tampered bytes (it does not verify against ${sender}'s key) — nothing was written; ask ${sender} to hand it off again`,
    ),
  wrongRecipient: (id: string, recipient: string, me: string, why: 'handle' | 'key') =>
    new HandoffError(
      'wrong-recipient',
      why === 'handle'
        ? `hand-off ${id} is for '${recipient}', not for you ('${me}') — it can only be picked up by ${recipient}`
        : `hand-off ${id} was sealed to another key than this seat's — pull the latest roster and ask the sender to hand it off again, or pick it up on the seat whose key is in the roster`,
    ),
  expired: (id: string, expiresAtIso: string) =>
    new HandoffError('expired', `hand-off ${id} expired at ${expiresAtIso} — ask the sender to hand it off again`),
  idMismatch: (asked: string, inHeader: string) =>
    new HandoffError(
      'id-mismatch',
      `the bundle stored as hand-off ${asked} is hand-off ${inHeader} — someone moved it; nothing was written, ask the sender for the id again`,
    ),
  fromTheFuture: (id: string, createdAtIso: string, nowIso: string) =>
    new HandoffError('from-the-future', `hand-off ${id} says it was made at ${createdAtIso}, after now (${nowIso}) — check this machine's clock, or ask the sender to hand it off again`),
  undecryptable: (id: string, sender: string) =>
    new HandoffError('undecryptable', `hand-off ${id} could not be decrypted with this seat's key — ask ${sender} to hand it off again`),
  contentMismatch: (id: string, sender: string) =>
    new HandoffError('content-mismatch', `hand-off ${id}: its content does not match the hash in its header — nothing was written; ask ${sender} to hand it off again`),
};
