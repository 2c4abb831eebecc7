/**
 * A session snapshot taken at the wall: its manifest (what was kept, each part named by its sha256), the snapshot id
 * derived from the manifest's own hash, and the brief rendered from it. Pure; the hashing and the files are
 * musher's (musher/snapshot/).
 *
 * The manifest holds the session's content only — no time of taking, no wall id — so the same content taken twice
 * has the same id and is stored once; when and at which wall it was taken is the store's row (`snapshots`).
 */
import { z } from 'zod';
import { PackSchema, renderPack, type PackDiff } from './pack.js';

export const SNAPSHOT_FORMAT = 'sleds-snapshot/1';

/** Ids are spelled without 0/o/1/l, so one read aloud or typed from a screen is not misread. */
export const SNAPSHOT_ID_ALPHABET = '23456789abcdefghijkmnpqrstuvwxyz';
/** How much of an id is shown; any unambiguous prefix is accepted. */
export const SHORT_ID_LENGTH = 12;
/** The shortest prefix looked up (shorter ones would match too much to be meant). */
export const MIN_ID_PREFIX = 4;

/** A digest (32 bytes of sha256) in the id alphabet, 5 bits a character: 52 characters. */
export function snapshotIdFromDigest(digest: Uint8Array): string {
  let out = '';
  let buffer = 0;
  let bits = 0;
  for (const byte of digest) {
    buffer = (buffer << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      out += SNAPSHOT_ID_ALPHABET[(buffer >>> bits) & 31];
    }
    buffer &= (1 << bits) - 1;
  }
  if (bits > 0) out += SNAPSHOT_ID_ALPHABET[(buffer << (5 - bits)) & 31];
  return out;
}

export function shortSnapshotId(id: string): string {
  return id.slice(0, SHORT_ID_LENGTH);
}

/** Is this something a user could mean as a snapshot id or a prefix of one? (Lower-cased first.) */
export function isSnapshotIdPrefix(text: string): boolean {
  return text.length >= MIN_ID_PREFIX && [...text].every((c) => SNAPSHOT_ID_ALPHABET.includes(c));
}

/** JSON with every object's keys sorted: one spelling per value, so one hash per content. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) {
      const v = (value as Record<string, unknown>)[key];
      if (v !== undefined) out[key] = sortKeys(v);
    }
    return out;
  }
  return value;
}

const Sha256 = z.string().regex(/^[0-9a-f]{64}$/);

export const BlobRefSchema = z.object({ hash: Sha256, bytes: z.number().int().nonnegative() });
export type BlobRef = z.infer<typeof BlobRefSchema>;

export const SnapshotHarnessSchema = z.enum(['claude-code', 'codex']);
export type SnapshotHarness = z.infer<typeof SnapshotHarnessSchema>;

export const TranscriptFileSchema = z.object({
  /** `session`: the session's own transcript/rollout; `fork-parent`: a Codex rollout it was forked from. */
  role: z.enum(['session', 'fork-parent']),
  sessionId: z.string().nullable(),
  /**
   * Where the file goes under the harness's home to resume from the copy: `projects/<slug>/<session>.jsonl` under
   * the Claude config dir, `sessions/YYYY/MM/DD/rollout-….jsonl` under CODEX_HOME.
   */
  path: z.string(),
  /** Where it was read from. */
  sourcePath: z.string(),
  hash: Sha256,
  bytes: z.number().int().nonnegative(),
});
export type TranscriptFile = z.infer<typeof TranscriptFileSchema>;

export const UntrackedFileSchema = z.object({
  path: z.string(),
  /** git's modes: 100644, 100755, or 120000 for a symlink (the blob is its target). */
  mode: z.enum(['100644', '100755', '120000']),
  hash: Sha256,
  bytes: z.number().int().nonnegative(),
});
export type UntrackedFile = z.infer<typeof UntrackedFileSchema>;

export const NumstatSchema = z.object({ path: z.string(), added: z.number().int().nullable(), deleted: z.number().int().nullable() });

export const CutSchema = z.object({
  /** The file left out, or null for the tracked-changes patch. */
  path: z.string().nullable(),
  bytes: z.number().int().nonnegative(),
  why: z.string(),
});
export type SnapshotCut = z.infer<typeof CutSchema>;

export const SnapshotGitSchema = z.object({
  /** The repository's top level. */
  root: z.string(),
  /** The session's cwd relative to it ('' at the top). */
  subdir: z.string(),
  /** origin's URL, else the first remote's, without any credentials in it; null without a remote. */
  remote: z.string().nullable(),
  /** null when detached. */
  branch: z.string().nullable(),
  /** null before the first commit. */
  head: z.string().nullable(),
  /** `git diff --binary HEAD` (tracked changes, staged and not): null when there are none or it was cut. */
  patch: BlobRefSchema.nullable(),
  /** `git diff --numstat HEAD`: added/deleted null for a binary file. */
  numstat: z.array(NumstatSchema),
  /** Untracked files that are not ignored. */
  untracked: z.array(UntrackedFileSchema),
  /** What was left out, and why (the size cap, a secret-looking name, an unreadable file). */
  cut: z.array(CutSchema),
});
export type SnapshotGit = z.infer<typeof SnapshotGitSchema>;

export const SnapshotBarSchema = z.object({
  provider: z.string(),
  window: z.string(),
  usedPct: z.number(),
  resetsAtMs: z.number().nullable(),
  observedAtMs: z.number(),
  source: z.string(),
});
export type SnapshotBar = z.infer<typeof SnapshotBarSchema>;

export const SnapshotManifestSchema = z.object({
  format: z.literal(SNAPSHOT_FORMAT),
  sessionId: z.string(),
  harness: SnapshotHarnessSchema,
  harnessVersion: z.string().nullable(),
  model: z.string().nullable(),
  cwd: z.string(),
  /** The transcript (Claude) or rollout and its fork parents (Codex), up to their last complete line. */
  transcript: z.array(TranscriptFileSchema),
  /** null when the cwd is not in a git repository (see notes). */
  git: SnapshotGitSchema.nullable(),
  pack: PackSchema,
  bars: z.array(SnapshotBarSchema),
  bindingWindow: z.string().nullable(),
  /** One line each: what could not be kept and why. */
  notes: z.array(z.string()),
});
export type SnapshotManifest = z.infer<typeof SnapshotManifestSchema>;

/** Every blob the manifest names (a hash may be named twice: the same bytes are one blob). */
export function manifestBlobs(m: SnapshotManifest): BlobRef[] {
  const refs: BlobRef[] = m.transcript.map((t) => ({ hash: t.hash, bytes: t.bytes }));
  if (m.git !== null) {
    if (m.git.patch !== null) refs.push(m.git.patch);
    for (const u of m.git.untracked) refs.push({ hash: u.hash, bytes: u.bytes });
  }
  return refs;
}

/** The cut, in one line naming what was left out; null when nothing was. */
export function cutNote(cut: SnapshotCut[]): string | null {
  if (cut.length === 0) return null;
  const named = cut.slice(0, 5).map((c) => `${c.path ?? 'the tracked-changes patch'} (${c.why})`);
  const more = cut.length > 5 ? ` and ${cut.length - 5} more` : '';
  return `Left out: ${named.join(', ')}${more}.`;
}

export function packDiff(git: SnapshotGit | null): PackDiff | null {
  if (git === null) return null;
  return {
    branch: git.branch,
    head: git.head,
    files: git.numstat,
    untracked: git.untracked.map((u) => ({ path: u.path, bytes: u.bytes })),
    cutNote: cutNote(git.cut),
  };
}

/** The brief for a snapshot: its pack with the diff summary. */
export function renderSnapshotBrief(m: SnapshotManifest): string {
  const model = m.model !== null ? `, ${m.model}` : '';
  return renderPack(m.pack, { diff: packDiff(m.git), title: `Brief: ${m.harness} session ${m.sessionId}${model}` });
}

/** A row of the store, as the API and CLI show it. */
export const SnapshotRowSchema = z.object({
  id: z.string(),
  sessionId: z.string(),
  wallId: z.string().nullable(),
  harness: z.string(),
  takenAtMs: z.number(),
  sizeBytes: z.number().int().nonnegative(),
  /** A one-line note when something was cut or missing, else null. */
  note: z.string().nullable(),
});
export type SnapshotRow = z.infer<typeof SnapshotRowSchema>;

/** The one-line note a snapshot's row carries: its cut and its notes. */
export function snapshotNote(m: SnapshotManifest): string | null {
  const parts = [...m.notes];
  const cut = m.git !== null ? cutNote(m.git.cut) : null;
  if (cut !== null) parts.push(cut);
  return parts.length > 0 ? parts.join(' ') : null;
}
