import { z } from 'zod';
import { buildPack, claudePackEvents, codexPackEvents } from '../../core/pack.js';
import type { SledsPaths } from '../../core/paths.js';
import {
  SNAPSHOT_FORMAT,
  SnapshotBarSchema,
  SnapshotHarnessSchema,
  SnapshotManifestSchema,
  shortSnapshotId,
  snapshotNote,
  type SnapshotManifest,
  type SnapshotRow,
} from '../../core/snapshot.js';
import type { Clock } from '../clock.js';
import type { Log } from '../log.js';
import type { SnapshotStore } from '../store/snapshots.js';
import { encodeManifest, ensureSnapshotDirs, putBlob, putManifest, sha256Hex, snapshotDirs, sweepTemps } from './files.js';
import { captureGitState, DEFAULT_GIT_MAX_BYTES } from './git-state.js';
import { captureClaudeTranscript, captureCodexRollout, keepsRollouts, type CapturedFile } from './transcripts.js';

/** What the wall knows of the session when it asks for a snapshot. */
export const SnapshotInputSchema = z.object({
  sessionId: z.string().min(1),
  harness: SnapshotHarnessSchema,
  harnessVersion: z.string().nullable(),
  model: z.string().nullable(),
  cwd: z.string().min(1),
  /** The Claude transcript or the Codex rollout (sessions.transcript_path). */
  transcriptPath: z.string().nullable(),
  wallId: z.string().nullable(),
  bars: z.array(SnapshotBarSchema),
  bindingWindow: z.string().nullable(),
});
export type SnapshotInput = z.infer<typeof SnapshotInputSchema>;

export interface SnapshotDeps {
  paths: SledsPaths;
  store: SnapshotStore;
  clock: Clock;
  log: Log;
  /** The cap on the git patch and untracked files together (default 20 MB). */
  maxBytes?: number;
  /** Untracked files that look like secrets but may be kept, by the policy of the folder's repository. */
  allowUntracked?: (cwd: string) => readonly string[];
}

export interface TakenSnapshot {
  id: string;
  manifest: SnapshotManifest;
  /** The store's row: when, at which wall, how big, and the one-line note when something was cut or missing. */
  row: SnapshotRow;
  /** False when the same content had been stored before (nothing new was written). */
  fresh: boolean;
}

function lines(bytes: Buffer): string[] {
  return bytes.toString('utf8').split('\n');
}

/**
 * Snapshots a session at the wall: its transcript (Claude) or rollout chain (Codex) up to the last complete line,
 * the git state of its cwd, the pack, the bars and the binding window, content-addressed under the data dir.
 *
 * What cannot be kept (no transcript path, not a git repository, a fork parent not found, files over the cap) is a
 * note in the manifest and the row: the snapshot is still taken. It throws — one line, for the caller to log — only
 * when the snapshot cannot be stored at all (the input is malformed, the data dir cannot be written).
 */
export async function takeSnapshot(input: SnapshotInput, deps: SnapshotDeps): Promise<TakenSnapshot> {
  const parsed = SnapshotInputSchema.safeParse(input);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`snapshot not taken: bad input at ${issue?.path.join('.') || '(root)'}: ${issue?.message ?? 'invalid'}`);
  }
  const want = parsed.data;
  const notes: string[] = [];

  const rollouts = keepsRollouts(want.harness);
  const transcript = rollouts ? await captureCodexRollout(want.sessionId, want.transcriptPath) : await captureClaudeTranscript(want.sessionId, want.transcriptPath);
  notes.push(...transcript.notes);
  const git = await captureGitState(want.cwd, { maxBytes: deps.maxBytes ?? DEFAULT_GIT_MAX_BYTES, sha256: sha256Hex, allowUntracked: deps.allowUntracked?.(want.cwd) ?? [] });
  notes.push(...git.notes);

  const own = transcript.files[transcript.files.length - 1];
  const events =
    own === undefined ? [] : rollouts ? codexPackEvents(transcript.files.map((f: CapturedFile) => lines(f.bytes))) : claudePackEvents(lines(own.bytes));

  const files = transcript.files.map((f) => ({ file: f, hash: sha256Hex(f.bytes) }));
  const manifest: SnapshotManifest = SnapshotManifestSchema.parse({
    format: SNAPSHOT_FORMAT,
    sessionId: want.sessionId,
    harness: want.harness,
    harnessVersion: want.harnessVersion,
    model: want.model,
    cwd: want.cwd,
    transcript: files.map(({ file, hash }) => ({ role: file.role, sessionId: file.sessionId, path: file.path, sourcePath: file.sourcePath, hash, bytes: file.bytes.length })),
    git: git.git,
    pack: buildPack(events),
    bars: want.bars,
    bindingWindow: want.bindingWindow,
    notes,
  });

  const dirs = snapshotDirs(deps.paths);
  const { bytes: manifestBytes, id } = encodeManifest(manifest);
  let size = manifestBytes.length;
  try {
    await ensureSnapshotDirs(dirs);
    await sweepTemps(dirs, deps.clock.now());
    const blobs = new Map<string, Buffer>();
    for (const { file, hash } of files) blobs.set(hash, file.bytes);
    for (const b of git.blobs) blobs.set(b.hash, b.bytes);
    for (const [hash, bytes] of blobs) {
      await putBlob(dirs, hash, bytes);
      size += bytes.length;
    }
    await putManifest(dirs, id, manifestBytes); // last: the snapshot exists once this rename is done
  } catch (e) {
    throw new Error(`snapshot of session ${want.sessionId} not stored under ${dirs.root}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }

  const row: SnapshotRow = {
    id,
    sessionId: want.sessionId,
    wallId: want.wallId,
    harness: want.harness,
    takenAtMs: deps.clock.now(),
    sizeBytes: size,
    note: snapshotNote(manifest),
  };
  const fresh = deps.store.record(row);
  const stored = fresh ? row : (deps.store.get(id) ?? row);
  deps.log.info(
    `snapshot ${shortSnapshotId(id)} of ${want.harness} session ${want.sessionId}${fresh ? '' : ' (same content as before)'}: ${size} bytes${row.note !== null ? ` · ${row.note}` : ''}`,
  );
  return { id, manifest, row: stored, fresh };
}
