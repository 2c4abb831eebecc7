import { createHash } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';
import { z } from 'zod';
import type { SledsPaths } from '../../core/paths.js';
import { manifestProblem } from '../../core/handoff/confine.js';
import { manifestBlobs, renderSnapshotBrief, SnapshotManifestSchema, type SnapshotManifest } from '../../core/snapshot.js';
import { readSnapshot } from '../snapshot/files.js';

/**
 * What a hand-off bundle carries: one snapshot — its manifest and every blob it names (each once), the work in
 * progress among them (the base commit, the binary patch, the untracked files) — and, when the sender's base commit
 * is not on their remote, the commits it needs as a `git bundle` (`history`). One gzip'd container, sealed and signed
 * as a whole: nothing of the work travels beside it. Read back with bounded sizes and checked throughout (zod for
 * the index, sha256 for every blob, nothing the manifest names missing, nothing it does not name, and every path
 * and id in the manifest in its harness's own shape: core/handoff/confine.ts), because a bundle comes from another
 * machine. The brief is rendered by the reader from the manifest, not taken from the sender.
 *
 * Container, before gzip (integers big-endian):
 *   "SLEDSBC" 0x02 | u32 I | index: I bytes of UTF-8 JSON | the blobs' bytes, one after another in index order
 */
const MAGIC = Buffer.from('SLEDSBC\x02', 'latin1');
const OLD_MAGIC = Buffer.from('SLEDSBC\x01', 'latin1');
/** The whole container unzipped; a zip bomb stops here. */
export const MAX_CONTENT_BYTES = 512 * 1024 * 1024;
const MAX_INDEX_BYTES = 16 * 1024 * 1024;

const BlobRef = z.object({ hash: z.string().regex(/^[0-9a-f]{64}$/), bytes: z.number().int().nonnegative() });

const ContentIndexSchema = z.looseObject({
  v: z.literal(2),
  snapshotId: z.string().regex(/^[0-9a-z]{1,128}$/),
  manifest: SnapshotManifestSchema,
  /** A `git bundle` of the commits up to the base commit that the sender's remote lacked; null: it has them all. */
  history: BlobRef.nullable(),
  /** Why no history came although the remote may lack the base (too large, git failed); null otherwise. */
  historyNote: z.string().max(1000).nullable(),
  blobs: z.array(BlobRef),
});

export interface SnapshotContent {
  snapshotId: string;
  manifest: SnapshotManifest;
  /** Every blob the manifest names, by sha256, each checked against its hash. */
  blobs: Map<string, Buffer>;
  /** The commits the base needs beyond the remote's, as a git bundle; null when none travelled. */
  history: Buffer | null;
  historyNote: string | null;
  /** Rendered here from the manifest. */
  brief: string;
}

export class BundleContentError extends Error {}

function bad(why: string): BundleContentError {
  return new BundleContentError(`the hand-off's content is not a sleds snapshot (${why}) — ask the sender to hand it off again`);
}

function sha256Hex(b: Buffer): string {
  return createHash('sha256').update(b).digest('hex');
}

/** The snapshot `snapshotId` (or an unambiguous prefix) as one gzip'd container, with the history its base needs. */
export async function packSnapshotContent(paths: SledsPaths, snapshotId: string, extra: { history?: Buffer | null; historyNote?: string | null } = {}): Promise<Buffer> {
  const snap = await readSnapshot(paths, snapshotId);
  const blobs = new Map<string, Buffer>();
  for (const { hash } of manifestBlobs(snap.manifest)) if (!blobs.has(hash)) blobs.set(hash, await snap.readBlob(hash));
  return encodeSnapshotContent({ snapshotId: snap.id, manifest: snap.manifest, blobs, history: extra.history ?? null, historyNote: extra.historyNote ?? null });
}

/** The container's bytes for a manifest and its blobs (by hash). Checks nothing: what is read back is checked. */
export function encodeSnapshotContent(c: { snapshotId: string; manifest: SnapshotManifest; blobs: ReadonlyMap<string, Buffer>; history: Buffer | null; historyNote: string | null }): Buffer {
  const hashes = [...c.blobs.keys()].sort();
  const index = {
    v: 2 as const,
    snapshotId: c.snapshotId,
    manifest: c.manifest,
    history: c.history !== null ? { hash: sha256Hex(c.history), bytes: c.history.length } : null,
    historyNote: c.historyNote,
    blobs: hashes.map((hash) => ({ hash, bytes: c.blobs.get(hash)!.length })),
  };
  const indexBytes = Buffer.from(JSON.stringify(index), 'utf8');
  const parts = [...hashes.map((h) => c.blobs.get(h)!), ...(c.history !== null ? [c.history] : [])];
  const total = MAGIC.length + 4 + indexBytes.length + parts.reduce((n, b) => n + b.length, 0);
  if (total > MAX_CONTENT_BYTES) throw new Error(`snapshot ${c.snapshotId.slice(0, 12)} is ${total} bytes, over the ${MAX_CONTENT_BYTES}-byte hand-off limit`);
  const len = Buffer.alloc(4);
  len.writeUInt32BE(indexBytes.length);
  return gzipSync(Buffer.concat([MAGIC, len, indexBytes, ...parts]));
}

/**
 * The container read back and checked; throws BundleContentError with one line. `maxBytes`: the most it may unzip
 * to (default MAX_CONTENT_BYTES).
 */
export function unpackSnapshotContent(buf: Buffer, opts: { maxBytes?: number } = {}): SnapshotContent {
  const maxBytes = opts.maxBytes ?? MAX_CONTENT_BYTES;
  let raw: Buffer;
  try {
    raw = gunzipSync(buf, { maxOutputLength: maxBytes });
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw bad(code === 'ERR_BUFFER_TOO_LARGE' ? `over ${maxBytes} bytes unzipped` : 'not gzip');
  }
  if (raw.length >= OLD_MAGIC.length && raw.subarray(0, OLD_MAGIC.length).equals(OLD_MAGIC)) {
    throw new BundleContentError("the hand-off was made by an older sleds, whose work in progress travelled outside the seal — ask the sender to update sleds and hand it off again");
  }
  if (raw.length < MAGIC.length + 4 || !raw.subarray(0, MAGIC.length).equals(MAGIC)) throw bad('no container magic');
  const indexLen = raw.readUInt32BE(MAGIC.length);
  const indexAt = MAGIC.length + 4;
  if (indexLen > MAX_INDEX_BYTES || indexAt + indexLen > raw.length) throw bad('its index is cut short or too large');
  let json: unknown;
  try {
    json = JSON.parse(raw.subarray(indexAt, indexAt + indexLen).toString('utf8'));
  } catch {
    throw bad('its index is not JSON');
  }
  const parsed = ContentIndexSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw bad(`index ${issue.path.join('.')}: ${issue.message}`);
  }
  const index = parsed.data;
  const blobs = new Map<string, Buffer>();
  let at = indexAt + indexLen;
  const take = (ref: { hash: string; bytes: number }): Buffer => {
    if (at + ref.bytes > raw.length) throw bad('a blob is cut short');
    const bytes = raw.subarray(at, at + ref.bytes);
    at += ref.bytes;
    if (sha256Hex(bytes) !== ref.hash) throw bad(`blob ${ref.hash.slice(0, 12)} does not match its hash`);
    return Buffer.from(bytes);
  };
  for (const ref of index.blobs) blobs.set(ref.hash, take(ref));
  const history = index.history !== null ? take(index.history) : null;
  if (at !== raw.length) throw bad('bytes after its last blob');
  const named = new Set(manifestBlobs(index.manifest).map((b) => b.hash));
  for (const hash of named) if (!blobs.has(hash)) throw bad(`blob ${hash.slice(0, 12)} the manifest names is missing`);
  for (const hash of blobs.keys()) if (!named.has(hash)) throw bad(`blob ${hash.slice(0, 12)} is not named by the manifest`);
  const problem = manifestProblem(index.manifest, (hash) => blobs.get(hash)?.toString('utf8') ?? null);
  if (problem !== null) throw new BundleContentError(`hand-off refused: ${problem} — nothing was written; a bundle may only hold a worktree and a transcript in the harness's own places`);
  return { snapshotId: index.snapshotId, manifest: index.manifest, blobs, history, historyNote: index.historyNote, brief: renderSnapshotBrief(index.manifest) };
}
