import type { SledsPaths } from '../../core/paths.js';
import { renderSnapshotBrief, shortSnapshotId, type SnapshotManifest, type SnapshotRow } from '../../core/snapshot.js';
import type { SnapshotStore } from '../store/snapshots.js';
import { describeLookupFailure, readSnapshot } from './files.js';

/** The snapshot routes' answers (GET /v1/snapshots, GET /v1/snapshots/<id>); server.ts only routes here. */

export interface SnapshotListAnswer {
  snapshots: Array<SnapshotRow & { shortId: string }>;
}

export interface SnapshotShowAnswer {
  snapshot: SnapshotRow & { shortId: string };
  manifest: SnapshotManifest;
  /** The pack rendered as Markdown, with the diff summary: the brief. */
  brief: string;
}

export interface ApiAnswer {
  status: number;
  body: unknown;
}

export function listSnapshots(store: SnapshotStore, limit = 100): SnapshotListAnswer {
  return { snapshots: store.list(limit).map((r) => ({ ...r, shortId: shortSnapshotId(r.id) })) };
}

export async function showSnapshot(store: SnapshotStore, paths: SledsPaths, idOrPrefix: string): Promise<ApiAnswer> {
  const lookup = store.resolve(idOrPrefix);
  if (lookup.kind !== 'one') {
    const status = lookup.kind === 'ambiguous' ? 409 : lookup.kind === 'invalid' ? 400 : 404;
    return { status, body: { error: describeLookupFailure(idOrPrefix, lookup) } };
  }
  const row = store.get(lookup.id);
  try {
    const opened = await readSnapshot(paths, lookup.id);
    const answer: SnapshotShowAnswer = {
      snapshot: { ...row!, shortId: shortSnapshotId(lookup.id) },
      manifest: opened.manifest,
      brief: renderSnapshotBrief(opened.manifest),
    };
    return { status: 200, body: answer };
  } catch (e) {
    return { status: 410, body: { error: `snapshot ${shortSnapshotId(lookup.id)} is recorded but its files cannot be read: ${(e as Error).message}` } };
  }
}
