import { z } from 'zod';
import type { RosterFile, TeammateKeys } from '../roster.js';
import { refusal, type HandoffError, type KeyDifference, type KeyFingerprints } from './errors.js';
import { HandleSchema, RawPublicKeyB64, sameHandle } from './header.js';

/**
 * The trust root of hand-offs: teammates' public keys as this seat pinned them, against `.sleds/roster.yml` as the
 * working tree holds it (which anyone who can push a branch can change). Pure: the pin file's shape, each
 * teammate's standing, and the two decisions the hand-off service asks for — may this sender's bundle be opened,
 * and to which key may a bundle for this recipient be sealed. Fingerprints are computed by the caller's function
 * (sha256 needs node:crypto, which core does not load).
 */

/** One pinned teammate: their two public keys as the roster spelled them when this seat trusted them. */
export const PinnedKeysSchema = z.strictObject({
  handle: HandleSchema,
  name: z.string().min(1).nullable(),
  x25519: RawPublicKeyB64,
  ed25519: RawPublicKeyB64,
  pinnedAt: z.number().int().nonnegative(),
});
export type PinnedKeys = z.infer<typeof PinnedKeysSchema>;

/** The pin file: strict, so nothing but public keys and names can ever be read into (or kept in) it. */
export const TrustFileSchema = z.strictObject({ v: z.literal(1), pins: z.array(PinnedKeysSchema) });
export type TrustFile = z.infer<typeof TrustFileSchema>;

/** The fingerprint of a base64 raw public key (musher's `keyFingerprint`). */
export type Fingerprint = (publicKeyB64: string) => string;

/** This seat's own handle and public keys: its roster entry must carry exactly these. */
export interface SeatPublicKeys {
  handle: string;
  x25519: string;
  ed25519: string;
}

interface StandingBase {
  handle: string;
  name: string | null;
}

/** Where one roster handle stands against the pins. */
export type TrustStanding =
  /** Pinned, and the roster holds the pinned keys. */
  | (StandingBase & { kind: 'pinned'; keys: TeammateKeys; pinnedAt: number })
  /** Not pinned yet: these are the fingerprints to compare out of band. */
  | (StandingBase & { kind: 'unpinned'; keys: TeammateKeys; fingerprints: KeyFingerprints })
  /** Pinned, but the roster holds other keys. */
  | (StandingBase & { kind: 'changed'; keys: TeammateKeys; pinned: KeyFingerprints; roster: KeyFingerprints; differences: KeyDifference[] })
  /** This seat's own entry, carrying this seat's keys. */
  | (StandingBase & { kind: 'self'; keys: TeammateKeys })
  /** This seat's own entry, carrying other keys than this seat's. */
  | (StandingBase & { kind: 'self-mismatch'; keys: TeammateKeys; seat: KeyFingerprints; roster: KeyFingerprints; differences: KeyDifference[] })
  /** The roster names the handle more than once, with different keys. */
  | (StandingBase & { kind: 'ambiguous' })
  /** In the roster without keys: nothing to trust or refuse. */
  | (StandingBase & { kind: 'no-keys' });

export type TrustStandingKind = TrustStanding['kind'];

const KEY_TYPES = ['x25519', 'ed25519'] as const;

function fingerprintsOf(keys: Pick<TeammateKeys, 'x25519' | 'ed25519'>, fp: Fingerprint): KeyFingerprints {
  return { x25519: fp(keys.x25519), ed25519: fp(keys.ed25519) };
}

function differencesOf(expected: Pick<TeammateKeys, 'x25519' | 'ed25519'>, roster: TeammateKeys, fp: Fingerprint): KeyDifference[] {
  return KEY_TYPES.filter((t) => expected[t] !== roster[t]).map((type) => ({ type, expected: fp(expected[type]), roster: fp(roster[type]) }));
}

/** The pin for a handle (case-insensitive), or null. */
export function pinFor(pins: readonly PinnedKeys[], handle: string): PinnedKeys | null {
  return pins.find((p) => sameHandle(p.handle, handle)) ?? null;
}

/**
 * Every handle in the roster (lower-cased, in roster order, once each) and where it stands. `seat` null: this
 * seat's keys are not known (it has none yet), so its own entry is judged like anyone's.
 */
export function trustStandings(roster: RosterFile, pins: readonly PinnedKeys[], seat: SeatPublicKeys | null, fingerprint: Fingerprint): TrustStanding[] {
  const order: string[] = [];
  const entries = new Map<string, RosterFile['teammates']>();
  for (const t of roster.teammates) {
    const handle = t.handle.toLowerCase();
    if (!entries.has(handle)) {
      order.push(handle);
      entries.set(handle, []);
    }
    entries.get(handle)!.push(t);
  }
  return order.map((handle): TrustStanding => {
    const all = entries.get(handle)!;
    const name = all.find((t) => t.name)?.name ?? null;
    const keyed = all.filter((t) => t.keys).map((t) => t.keys!);
    const distinct = new Set(keyed.map((k) => `${k.x25519} ${k.ed25519}`));
    if (distinct.size > 1) return { kind: 'ambiguous', handle, name };
    const keys = keyed[0];
    if (!keys) return { kind: 'no-keys', handle, name };
    if (seat && sameHandle(seat.handle, handle)) {
      const differences = differencesOf(seat, keys, fingerprint);
      return differences.length === 0
        ? { kind: 'self', handle, name, keys }
        : { kind: 'self-mismatch', handle, name, keys, seat: fingerprintsOf(seat, fingerprint), roster: fingerprintsOf(keys, fingerprint), differences };
    }
    const pin = pinFor(pins, handle);
    if (!pin) return { kind: 'unpinned', handle, name, keys, fingerprints: fingerprintsOf(keys, fingerprint) };
    const differences = differencesOf(pin, keys, fingerprint);
    return differences.length === 0
      ? { kind: 'pinned', handle, name, keys, pinnedAt: pin.pinnedAt }
      : { kind: 'changed', handle, name, keys, pinned: fingerprintsOf(pin, fingerprint), roster: fingerprintsOf(keys, fingerprint), differences };
  });
}

/** The refusal a standing is on its own (a changed, ambiguous or mismatched own entry), else null. */
export function standingRefusal(s: TrustStanding): HandoffError | null {
  switch (s.kind) {
    case 'changed':
      return refusal.keyChanged(s.handle, s.differences);
    case 'self-mismatch':
      return refusal.selfKeyMismatch(s.handle, s.differences);
    case 'ambiguous':
      return refusal.ambiguousRoster(s.handle);
    default:
      return null;
  }
}

/** A roster is refused as a whole while any pinned handle's key changed (or it is otherwise not to be believed):
 *  the first such handle in roster order, else null. */
export function rosterRefusal(standings: readonly TrustStanding[]): HandoffError | null {
  for (const s of standings) {
    const refused = standingRefusal(s);
    if (refused) return refused;
  }
  return null;
}

export interface TrustInput {
  roster: RosterFile;
  pins: readonly PinnedKeys[];
  /** This seat's handle and public keys (its own entry must carry them); null when it has none. */
  seat: SeatPublicKeys | null;
  fingerprint: Fingerprint;
}

export type SenderVerdict = { ok: true; keys: TeammateKeys } | { ok: false; error: HandoffError };

/**
 * Pickup: may a bundle that says it comes from `sender` be checked against the roster's key for them? Only when the
 * roster as a whole stands (no pinned key changed) and the sender is pinned with the keys the roster holds (or is
 * this seat). `id` is the bundle's, for the line. `keys` are the ones to verify with.
 */
export function checkSenderTrusted(input: TrustInput & { sender: string; id: string }): SenderVerdict {
  const standings = trustStandings(input.roster, input.pins, input.seat, input.fingerprint);
  const refused = rosterRefusal(standings);
  if (refused) return { ok: false, error: refused };
  const s = standings.find((x) => sameHandle(x.handle, input.sender));
  if (!s || s.kind === 'no-keys') return { ok: false, error: refusal.unknownSender(input.id, input.sender) };
  if (s.kind === 'unpinned') return { ok: false, error: refusal.untrustedSender(input.id, input.sender, s.fingerprints) };
  if (s.kind === 'pinned' || s.kind === 'self') return { ok: true, keys: s.keys };
  // rosterRefusal has refused every other kind already.
  return { ok: false, error: standingRefusal(s)! };
}

/** What to pin: the roster's entry for the handle, as the pin file holds it (without the time). */
export type PinRequest = Omit<PinnedKeys, 'pinnedAt'>;

export type RecipientVerdict =
  | {
      ok: true;
      handle: string;
      name: string | null;
      /** The X25519 key to seal to. */
      x25519: string;
      /** Set on first use: the caller pins it, and shows `note`. */
      pin: PinRequest | null;
      note: string | null;
    }
  | { ok: false; error: HandoffError };

/** The line said when a recipient's keys are pinned on first use. */
export function pinnedOnFirstUseLine(handle: string, fingerprints: KeyFingerprints): string {
  return `pinned ${handle}'s keys on first use (x25519 ${fingerprints.x25519}, ed25519 ${fingerprints.ed25519}) — compare them with ${handle} out of band; 'sleds keys trusted' lists the pinned keys`;
}

/**
 * Send: to which key may a bundle for `recipient` be sealed? Trust on first use: an unpinned recipient's roster keys
 * are used and pinned (said once, in `note`); a pinned one's must be the pinned keys; and the roster as a whole must
 * stand, as for a pickup.
 */
export function recipientForSealing(input: TrustInput & { recipient: string }): RecipientVerdict {
  const standings = trustStandings(input.roster, input.pins, input.seat, input.fingerprint);
  const refused = rosterRefusal(standings);
  if (refused) return { ok: false, error: refused };
  const s = standings.find((x) => sameHandle(x.handle, input.recipient));
  if (!s) return { ok: false, error: refusal.unknownRecipient(input.recipient.toLowerCase(), 'absent') };
  if (s.kind === 'no-keys') return { ok: false, error: refusal.unknownRecipient(s.handle, 'no-keys') };
  if (s.kind === 'pinned' || s.kind === 'self') return { ok: true, handle: s.handle, name: s.name, x25519: s.keys.x25519, pin: null, note: null };
  if (s.kind === 'unpinned') {
    return {
      ok: true,
      handle: s.handle,
      name: s.name,
      x25519: s.keys.x25519,
      pin: { handle: s.handle, name: s.name, x25519: s.keys.x25519, ed25519: s.keys.ed25519 },
      note: pinnedOnFirstUseLine(s.handle, s.fingerprints),
    };
  }
  // rosterRefusal has refused every other kind already.
  return { ok: false, error: standingRefusal(s)! };
}
