/**
 * The hand-off transport: how a sealed bundle and its work in progress travel from the sender's machine to the
 * teammate's. A port: the repository's own remote (git-transport.ts) and a shared folder (folder-transport.ts) are
 * its adapters; the team hub planned later plugs in beside them. Bundles are opaque bytes here (the seal module
 * makes and reads them); their expiry is read through an injected `readExpiry`, the seal's header reader.
 */
import type { UntrackedFile } from '../../core/snapshot.js';

/** The session's work in progress, as the snapshot kept it: the WIP branch is built from this. */
export interface WipSource {
  /** The commit the changes are against; null before the first commit. */
  head: string | null;
  /** The branch the session was on (named in the WIP commit's message); null when detached. */
  branch: string | null;
  /** `git diff --binary --full-index HEAD` (tracked changes, staged and not); null when there were none. */
  patch: Buffer | null;
  /** Untracked files git did not ignore, with their modes (a symlink's bytes are its target). */
  untracked: Array<{ path: string; mode: UntrackedFile['mode']; bytes: Buffer }>;
}

export interface SentHandoff {
  /** Where the bundle went: `refs/sleds/handoffs/<id>` on the remote, or the bundle file's path. */
  ref: string;
  /** The WIP branch (`sleds/handoff/<id>`) or WIP file; null when there was no work in progress to send. */
  branch: string | null;
}

export interface ListedHandoff {
  id: string;
  /** From the bundle's header; null when the header could not be read. */
  expiresAt: number | null;
}

export interface PickedUp {
  by: string;
  atMs: number | null;
}

export interface HandoffTransport {
  /** One line naming where hand-offs go: "git remote origin (git@github.com:acme/shop.git)". */
  describe(): string;
  send(b: { id: string; bundle: Buffer; wip: WipSource | null }): Promise<SentHandoff>;
  /**
   * The bundle's bytes, read without writing anything into the local repository or home (it is not verified yet).
   * Throws "no hand-off <id> on …".
   */
  fetch(id: string): Promise<Buffer>;
  /** Once the bundle is verified: brings the WIP into the local repository for `checkoutWip` (no-op without one). */
  bringWip(id: string): Promise<void>;
  list(): Promise<ListedHandoff[]>;
  /** Removes the hand-offs whose bundle expired at or before `nowMs` (bundle, WIP and pickup mark); returns their ids. */
  prune(nowMs: number): Promise<string[]>;
  /** One pickup per bundle: throws "hand-off <id> was already picked up by …" when another got there first. */
  markPickedUp?(id: string, by: string): Promise<void>;
  isPickedUp?(id: string): Promise<PickedUp | null>;
}

/** The seal module's header reader: the bundle's expiry in epoch ms, or null when it cannot be read. */
export type ReadExpiry = (bundle: Buffer) => number | null;

/**
 * Hand-off ids become ref and file names, so only plain ones are accepted (the seal's ids are 12 characters of the
 * snapshot id alphabet; anything of lower-case letters and digits is let through).
 */
const HANDOFF_ID = /^[0-9a-z]{4,64}$/;

export function assertHandoffId(id: string): string {
  if (!HANDOFF_ID.test(id)) throw new Error(`'${id}' is not a hand-off id (lower-case letters and digits) — copy it from the hand-off message`);
  return id;
}

export function isExpired(expiresAt: number | null, nowMs: number): boolean {
  return expiresAt !== null && expiresAt <= nowMs;
}
