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
  | 'content-mismatch'
  | 'untrusted-sender'
  | 'key-changed'
  | 'self-key-mismatch'
  | 'ambiguous-roster'
  | 'unknown-recipient';

/** A key's fingerprint as shown to compare by eye, one per key type. */
export interface KeyFingerprints {
  x25519: string;
  ed25519: string;
}

/** One key that differs between what this seat pinned (or holds) and what the roster says. */
export interface KeyDifference {
  type: 'x25519' | 'ed25519';
  /** The fingerprint this seat pinned (or, for its own entry, the seat's own key). */
  expected: string;
  roster: string;
}

const differences = (diffs: readonly KeyDifference[], expectedWord: string): string =>
  diffs.map((d) => `${d.type} ${expectedWord} ${d.expected} → roster ${d.roster}`).join('; ');

export class HandoffError extends Error {
  constructor(
    readonly kind: HandoffErrorKind,
    message: string,
    /** The teammate the refusal is about, when it names one (whose keys to pin, for `untrusted-sender`). */
    readonly handle: string | null = null,
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
  /** A roster whose key for a pinned teammate is not the pinned one: a branch may have swapped it. */
  keyChanged: (handle: string, diffs: readonly KeyDifference[]) =>
    new HandoffError(
      'key-changed',
      `.sleds/roster.yml has keys for '${handle}' other than the ones pinned on this seat (${differences(diffs, 'pinned')}) — confirm the new keys with ${handle} out of band (they run 'sleds keys show'), then run 'sleds keys trust ${handle}' to pin them`,
    ),
  untrustedSender: (id: string, sender: string, roster: KeyFingerprints) =>
    new HandoffError(
      'untrusted-sender',
      `hand-off ${id} comes from '${sender}', whose keys are not pinned on this seat (roster ed25519 ${roster.ed25519}, x25519 ${roster.x25519}) — nothing was written; compare them with ${sender} out of band (they run 'sleds keys show'), then run 'sleds keys trust ${sender}' and pick it up again`,
      sender,
    ),
  selfKeyMismatch: (handle: string, diffs: readonly KeyDifference[]) =>
    new HandoffError(
      'self-key-mismatch',
      `.sleds/roster.yml has keys for you ('${handle}') that are not this seat's (${differences(diffs, 'seat')}) — if you ran 'sleds keys init --force', commit the entry 'sleds keys show' prints; if not, someone changed your entry: restore it`,
    ),
  ambiguousRoster: (handle: string) =>
    new HandoffError(
      'ambiguous-roster',
      `.sleds/roster.yml names '${handle}' more than once with different keys — keep the one entry ${handle} committed and remove the others`,
    ),
  unknownRecipient: (handle: string, why: 'absent' | 'no-keys') =>
    new HandoffError(
      'unknown-recipient',
      why === 'absent'
        ? `'${handle}' is not in .sleds/roster.yml — pull the latest roster, or hand off to a teammate it names`
        : `${handle} has no keys in the roster — they run 'sleds keys init' and commit the entry it prints`,
    ),
};
