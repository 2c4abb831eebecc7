import { checkSenderTrusted, recipientForSealing, type RecipientVerdict, type SeatPublicKeys, type SenderVerdict } from '../../core/handoff/trust.js';
import type { RosterFile } from '../../core/roster.js';
import { keyFingerprint, type SeatKeys } from './keys.js';
import type { TrustStore } from './trust-store.js';

/** This seat's handle and the public halves of its keys, as the trust check compares its own roster entry. */
export function seatPublicKeys(handle: string, keys: SeatKeys): SeatPublicKeys {
  return { handle, x25519: keys.x25519.publicKey, ed25519: keys.ed25519.publicKey };
}

/**
 * The hand-off service's view of the trust root: the pure decisions of core/handoff/trust.ts over the pins as the
 * store holds them at this instant (read fresh on each call, so a `sleds keys trust` is seen at once). Both throw
 * TrustStoreError when the pin file is unreadable or could have been written by another user.
 */
export class HandoffTrust {
  constructor(private readonly store: TrustStore) {}

  /** Pickup, before `open`: may the bundle from `sender` (its unverified header's) be verified with the roster key? */
  checkSender(roster: RosterFile, seat: SeatPublicKeys | null, sender: string, id: string): SenderVerdict {
    return checkSenderTrusted({ roster, pins: this.store.load(), seat, sender, id, fingerprint: keyFingerprint });
  }

  /** Send, before `seal`: the key to seal to; an unpinned recipient is pinned here (trust on first use) and `note`
   *  says so, to be shown with the hand-off's answer. */
  recipientForSealing(roster: RosterFile, seat: SeatPublicKeys | null, recipient: string): RecipientVerdict {
    const verdict = recipientForSealing({ roster, pins: this.store.load(), seat, recipient, fingerprint: keyFingerprint });
    if (verdict.ok && verdict.pin) this.store.pin(verdict.pin);
    return verdict;
  }
}
