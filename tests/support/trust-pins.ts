import { join } from 'node:path';
import { HandoffTrust } from '../../musher/handoff/trust-gate.js';
import { TrustStore } from '../../musher/handoff/trust-store.js';
import type { SeatKeys } from '../../musher/handoff/keys.js';

/** A seat's trust root in `dir` with these teammates' keys pinned, as `sleds keys trust <handle> --yes` would. */
export function pinnedTrust(dir: string, teammates: Record<string, SeatKeys>, nowMs = 0): HandoffTrust {
  const store = new TrustStore(join(dir, 'trusted-keys.json'), { now: () => nowMs });
  for (const [handle, keys] of Object.entries(teammates)) store.pin({ handle, name: null, x25519: keys.x25519.publicKey, ed25519: keys.ed25519.publicKey });
  return new HandoffTrust(store);
}
