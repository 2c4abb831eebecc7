import { pathExists, TEMP_PREFIX, writeFileAtomic } from '../fs-atomic.js';
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { SledsPaths } from '../../core/paths.js';
import {
  canonicalJson,
  isSnapshotIdPrefix,
  shortSnapshotId,
  SnapshotManifestSchema,
  snapshotIdFromDigest,
  type SnapshotManifest,
} from '../../core/snapshot.js';

/**
 * The snapshot files under the data dir: `snapshots/blobs/<sha256>` (each part once, whoever names it) and
 * `snapshots/manifests/<id>.json`, where id is the manifest's own sha256 in the id alphabet. Every file is written
 * to a temp name in its folder, synced, then renamed: a reader sees the whole file or none. Blobs go first and the
 * manifest last, so a crash part way leaves no snapshot that names a missing part.
 */
export interface SnapshotDirs {
  root: string;
  blobs: string;
  manifests: string;
}

/** Temp files older than this are a crashed write's: removed at the next snapshot. */
const STALE_TEMP_MS = 60 * 60 * 1000;

export function snapshotDirs(paths: SledsPaths): SnapshotDirs {
  const root = join(paths.dataDir, 'snapshots');
  return { root, blobs: join(root, 'blobs'), manifests: join(root, 'manifests') };
}

export function sha256Hex(bytes: Buffer | string): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** The manifest's bytes and the id they make. */
export function encodeManifest(manifest: SnapshotManifest): { bytes: Buffer; id: string } {
  const bytes = Buffer.from(`${canonicalJson(manifest)}\n`, 'utf8');
  return { bytes, id: snapshotIdFromDigest(createHash('sha256').update(bytes).digest()) };
}



export async function ensureSnapshotDirs(dirs: SnapshotDirs): Promise<void> {
  await mkdir(dirs.blobs, { recursive: true, mode: 0o700 });
  await mkdir(dirs.manifests, { recursive: true, mode: 0o700 });
}

/** Stores a blob under its hash unless it is there already. Returns the bytes newly written (0 when shared). */
export async function putBlob(dirs: SnapshotDirs, hash: string, bytes: Buffer): Promise<number> {
  if (await pathExists(join(dirs.blobs, hash))) return 0;
  await writeFileAtomic(join(dirs.blobs, hash), bytes);
  return bytes.length;
}

/** Stores the manifest (last), unless the same content is there already. */
export async function putManifest(dirs: SnapshotDirs, id: string, bytes: Buffer): Promise<boolean> {
  if (await pathExists(join(dirs.manifests, `${id}.json`))) return false;
  await writeFileAtomic(join(dirs.manifests, `${id}.json`), bytes);
  return true;
}

/** Removes temp files a crashed write left behind (old enough that no write in flight owns them). */
export async function sweepTemps(dirs: SnapshotDirs, nowMs: number): Promise<void> {
  for (const dir of [dirs.blobs, dirs.manifests]) {
    let names: string[];
    try {
      names = await readdir(dir);
    } catch {
      // A folder not made yet holds no temp files.
      continue;
    }
    for (const name of names) {
      if (!name.startsWith(TEMP_PREFIX)) continue;
      try {
        const st = await stat(join(dir, name));
        if (nowMs - st.mtimeMs > STALE_TEMP_MS) await unlink(join(dir, name));
      } catch {
        // gone already
      }
    }
  }
}

export type IdLookup = { kind: 'one'; id: string } | { kind: 'none' } | { kind: 'ambiguous'; ids: string[] } | { kind: 'invalid' };

/** Resolves an id or an unambiguous prefix of one among `ids`. */
export function resolveIdPrefix(text: string, ids: Iterable<string>): IdLookup {
  const prefix = text.trim().toLowerCase();
  if (!isSnapshotIdPrefix(prefix)) return { kind: 'invalid' };
  const hits = [...ids].filter((id) => id.startsWith(prefix));
  if (hits.length === 1) return { kind: 'one', id: hits[0]! };
  if (hits.length === 0) return { kind: 'none' };
  return { kind: 'ambiguous', ids: hits.sort() };
}

export function describeLookupFailure(text: string, lookup: Exclude<IdLookup, { kind: 'one' }>): string {
  switch (lookup.kind) {
    case 'invalid':
      return `'${text}' is not a snapshot id (at least 4 of 23456789abcdefghijkmnpqrstuvwxyz) — run 'sleds snapshots' for the list`;
    case 'none':
      return `no snapshot ${text} — run 'sleds snapshots' for the list`;
    case 'ambiguous':
      return `snapshot id ${text} is ambiguous (${lookup.ids.slice(0, 5).map(shortSnapshotId).join(', ')}${lookup.ids.length > 5 ? ', …' : ''}) — type more of it`;
  }
}

export interface OpenedSnapshot {
  id: string;
  manifest: SnapshotManifest;
  /** A part's bytes, checked against its hash. */
  readBlob(hash: string): Promise<Buffer>;
}

/**
 * Opens a stored snapshot by id or unambiguous prefix, from the files alone (no database): what the hand-off reads.
 * Throws a one-line error when the id is unknown or ambiguous, or the manifest does not match its id.
 */
export async function readSnapshot(paths: SledsPaths, idOrPrefix: string): Promise<OpenedSnapshot> {
  const dirs = snapshotDirs(paths);
  let names: string[] = [];
  try {
    names = await readdir(dirs.manifests);
  } catch {
    // no snapshots yet
  }
  const ids = names.filter((n) => n.endsWith('.json') && !n.startsWith(TEMP_PREFIX)).map((n) => n.slice(0, -'.json'.length));
  const lookup = resolveIdPrefix(idOrPrefix, ids);
  if (lookup.kind !== 'one') throw new Error(describeLookupFailure(idOrPrefix, lookup));
  const bytes = await readFile(join(dirs.manifests, `${lookup.id}.json`));
  if (snapshotIdFromDigest(createHash('sha256').update(bytes).digest()) !== lookup.id) {
    throw new Error(`snapshot ${shortSnapshotId(lookup.id)}: its manifest does not match its id (changed on disk?) — take a new snapshot`);
  }
  const parsed = SnapshotManifestSchema.safeParse(JSON.parse(bytes.toString('utf8')));
  if (!parsed.success) throw new Error(`snapshot ${shortSnapshotId(lookup.id)}: its manifest is not one this sleds reads (${parsed.error.issues[0]?.message ?? 'bad shape'})`);
  return {
    id: lookup.id,
    manifest: parsed.data,
    readBlob: async (hash: string) => {
      if (!/^[0-9a-f]{64}$/.test(hash)) throw new Error(`'${hash}' is not a blob hash`);
      const blob = await readFile(join(dirs.blobs, hash));
      if (sha256Hex(blob) !== hash) throw new Error(`snapshot blob ${hash.slice(0, 12)} does not match its hash (changed on disk?)`);
      return blob;
    },
  };
}
