/**
 * The hand-off transport: how a sealed bundle and its work in progress travel from the sender's machine to the
 * teammate's. A port: the repository's own remote (git-transport.ts) and a shared folder (folder-transport.ts) are
 * its adapters; the team hub planned later plugs in beside them. Bundles are opaque bytes here (the seal module
 * makes and reads them); their expiry is read through an injected `readExpiry`, the seal's header reader.
 */
import { HandleSchema } from '../../core/handoff/header.js';
import type { UntrackedFile } from '../../core/snapshot.js';

/**
 * The session's work in progress, as the snapshot kept it. It travels inside the sealed bundle only; the pickup
 * rebuilds the worktree from it (work-in-progress.ts).
 */
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
}

export interface ListedHandoff {
  id: string;
  /** From the bundle's header; null when the header could not be read (or the bundle is over the size cap). */
  expiresAt: number | null;
}

export interface PickedUp {
  by: string;
  atMs: number | null;
}

/**
 * The largest bundle a transport reads: the sealed content's limit plus its header and framing. Anything bigger is
 * not ours and is refused before it is read into memory.
 */
export const MAX_BUNDLE_BYTES = 512 * 1024 * 1024 + 16 * 1024;

/** How much of a bundle is read to list it: the magic, the header's length and the largest header. */
export const BUNDLE_HEADER_PREFIX_BYTES = 12 + 8192;

export interface HandoffTransport {
  /** One line naming where hand-offs go: "git remote origin (git@github.com:acme/shop.git)". */
  describe(): string;
  /** Sends the sealed bundle: the only thing of a hand-off that travels. */
  send(b: { id: string; bundle: Buffer }): Promise<SentHandoff>;
  /**
   * The bundle's bytes, read without writing anything into the local repository or home (it is not verified yet),
   * refused over MAX_BUNDLE_BYTES before being read. Throws "no hand-off <id> on …".
   */
  fetch(id: string): Promise<Buffer>;
  /** The hand-offs there with their expiry, read from the first bytes of each bundle, in a scratch place. */
  list(): Promise<ListedHandoff[]>;
  /** Removes the hand-offs whose bundle expired at or before `nowMs` (bundle and pickup mark); returns their ids. */
  prune(nowMs: number): Promise<string[]>;
  /** One pickup per bundle: throws "hand-off <id> was already picked up by …" when another got there first. */
  markPickedUp(id: string, by: string): Promise<void>;
  isPickedUp(id: string): Promise<PickedUp | null>;
}

/** A pickup mark as a teammate's machine writes it; `by` must be a handle, or the mark says only "someone". */
export function readPickedMark(text: string): PickedUp {
  try {
    const v = JSON.parse(text) as { by?: unknown; atMs?: unknown };
    const by = HandleSchema.safeParse(v.by);
    const atMs = typeof v.atMs === 'number' && Number.isSafeInteger(v.atMs) && v.atMs >= 0 ? v.atMs : null;
    if (by.success) return { by: by.data, atMs };
  } catch {
    // not JSON: still a mark
  }
  return { by: 'someone', atMs: null };
}

/** The seal module's header reader, given a bundle's first bytes: its expiry in epoch ms, or null when unreadable. */
export type ReadExpiry = (bundle: Buffer) => number | null;

/**
 * Hand-off ids become ref and file names, so only plain ones are accepted (the seal's ids are 12 characters of the
 * snapshot id alphabet; anything of lower-case letters and digits is let through).
 */
const HANDOFF_ID = /^[0-9a-z]{4,64}$/;

export function assertHandoffId(id: string): string {
  if (!HANDOFF_ID.test(id)) throw new Error(`${JSON.stringify(id.slice(0, 64))} is not a hand-off id (lower-case letters and digits) — copy it from the hand-off message`);
  return id;
}

export function isExpired(expiresAt: number | null, nowMs: number): boolean {
  return expiresAt !== null && expiresAt <= nowMs;
}
