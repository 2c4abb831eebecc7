import { teammateByHandle, type RosterFile } from '../roster.js';

/**
 * Whose key signed a receipt, checked against the team's roster: a valid signature only proves that *some* key signed
 * it; the roster says whether that key is the named seat's. Pure.
 */
export type SignerCheck =
  /** The seat's Ed25519 key in the roster is the signer. */
  | { kind: 'seat-key'; handle: string }
  /** The roster names the seat with another key: forged, or the seat's keys changed. */
  | { kind: 'other-key'; handle: string; rosterKey: string }
  /** No roster here, or the seat is not in it with keys: the fingerprint is all there is to compare. */
  | { kind: 'unknown'; why: string };

export function checkSigner(roster: RosterFile | null, seat: string, signer: string): SignerCheck {
  if (!roster) return { kind: 'unknown', why: 'no .sleds/roster.yml here' };
  const mate = teammateByHandle(roster, seat);
  if (!mate) return { kind: 'unknown', why: `seat ${seat} is not in .sleds/roster.yml` };
  if (!mate.keys) return { kind: 'unknown', why: `seat ${seat} has no keys in .sleds/roster.yml` };
  return mate.keys.ed25519 === signer ? { kind: 'seat-key', handle: mate.handle } : { kind: 'other-key', handle: mate.handle, rosterKey: mate.keys.ed25519 };
}
