import { readdir, readFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { CODEX_ROLLOUT_SOURCE, parseCodexRolloutLine } from '../../harnesses/codex/rollout.js';
import { harnessById } from '../../harnesses/registry.js';

/**
 * Whether a harness keeps its sessions as rollout chains (a thread forked from others, each file its own) rather than
 * one transcript file: its adapter reads the rollout source. Decides how a snapshot captures and packs the session.
 */
export function keepsRollouts(harness: string): boolean {
  const found = harnessById(harness);
  return found.ok && found.adapter.transcriptSource === CODEX_ROLLOUT_SOURCE;
}

/** One transcript/rollout file as of the wall: its bytes up to the last complete line. */
export interface CapturedFile {
  role: 'session' | 'fork-parent';
  sessionId: string | null;
  /** Where it goes under the harness's home to resume from the copy. */
  path: string;
  sourcePath: string;
  bytes: Buffer;
}

export interface TranscriptCapture {
  /** The oldest fork ancestor first, the session's own file last. */
  files: CapturedFile[];
  notes: string[];
}

/** How many fork ancestors are followed (a loop in the metadata must not spin). */
const MAX_FORK_DEPTH = 16;

/** The bytes up to and including the last newline: a line still being written is not part of the snapshot. */
export function completeLines(bytes: Buffer): Buffer {
  const end = bytes.lastIndexOf(0x0a);
  return end < 0 ? bytes.subarray(0, 0) : bytes.subarray(0, end + 1);
}

/** `projects/<slug>/<session>.jsonl`: the layout `claude --resume <id>` finds under a Claude config dir (facts §4). */
export function claudeRelativePath(transcriptPath: string): string {
  return `projects/${basename(dirname(transcriptPath))}/${basename(transcriptPath)}`;
}

/** `sessions/YYYY/MM/DD/rollout-….jsonl`: from the path when it has that layout, else from the file name's date. */
export function codexRelativePath(rolloutPath: string): string {
  const name = basename(rolloutPath);
  const m = /(?:^|[\\/])(\d{4})[\\/](\d{2})[\\/](\d{2})[\\/][^\\/]+$/.exec(rolloutPath);
  if (m !== null) return `sessions/${m[1]}/${m[2]}/${m[3]}/${name}`;
  const d = /^rollout-(\d{4})-(\d{2})-(\d{2})T/.exec(name);
  return d !== null ? `sessions/${d[1]}/${d[2]}/${d[3]}/${name}` : `sessions/${name}`;
}

async function readComplete(path: string): Promise<Buffer> {
  return completeLines(await readFile(path));
}

/** The Claude Code transcript as of the wall. */
export async function captureClaudeTranscript(sessionId: string, transcriptPath: string | null): Promise<TranscriptCapture> {
  if (transcriptPath === null) return { files: [], notes: ['transcript: musher knows no transcript path for this session, so none was kept'] };
  try {
    const bytes = await readComplete(transcriptPath);
    return { files: [{ role: 'session', sessionId, path: claudeRelativePath(transcriptPath), sourcePath: transcriptPath, bytes }], notes: [] };
  } catch (e) {
    return { files: [], notes: [`transcript: ${transcriptPath} could not be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}), so none was kept`] };
  }
}

/** The thread a rollout was forked from: its first line's session_meta `forked_from_id`. */
function forkedFromOf(bytes: Buffer, path: string): string | null {
  const end = bytes.indexOf(0x0a);
  const first = bytes.subarray(0, end < 0 ? bytes.length : end).toString('utf8');
  const parsed = parseCodexRolloutLine(first, { filePath: path });
  return parsed.kind === 'session' && parsed.from === 'session_meta' ? (parsed.forkedFrom ?? null) : null;
}

/** The `sessions` folder a rollout lives in (`…/sessions/YYYY/MM/DD/rollout-….jsonl`), else the rollout's own folder. */
export function sessionsRootOf(rolloutPath: string): string {
  const day = dirname(rolloutPath);
  if (/[\\/]\d{4}[\\/]\d{2}[\\/]\d{2}$/.test(day)) return dirname(dirname(dirname(day)));
  return day;
}

async function listDir(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir)).sort();
  } catch {
    // A folder that does not exist lists nothing.
    return [];
  }
}

/** The rollout of a thread in a sessions tree (YYYY/MM/DD, newest first), or in the archive beside it. */
export async function findRollout(sessionsRoot: string, threadId: string): Promise<string | null> {
  const suffix = `-${threadId}.jsonl`;
  const hit = (dir: string, names: string[]): string | null => {
    const name = names.find((n) => n.startsWith('rollout-') && n.endsWith(suffix));
    return name !== undefined ? join(dir, name) : null;
  };
  const own = hit(sessionsRoot, await listDir(sessionsRoot));
  if (own !== null) return own;
  for (const y of (await listDir(sessionsRoot)).filter((n) => /^\d{4}$/.test(n)).reverse()) {
    for (const m of (await listDir(join(sessionsRoot, y))).filter((n) => /^\d{2}$/.test(n)).reverse()) {
      for (const d of (await listDir(join(sessionsRoot, y, m))).filter((n) => /^\d{2}$/.test(n)).reverse()) {
        const dir = join(sessionsRoot, y, m, d);
        const found = hit(dir, await listDir(dir));
        if (found !== null) return found;
      }
    }
  }
  const archive = join(dirname(sessionsRoot), 'archived_sessions');
  return hit(archive, await listDir(archive));
}

/**
 * The Codex rollout as of the wall, with every fork ancestor's: a fork's copy alone cannot be resumed ("invalid
 * paginated history lineage … missing source rollout", shared/facts/codex-cli.md §5), so each parent named by a
 * session_meta `forked_from_id` is looked up in the same sessions tree and kept too.
 */
export async function captureCodexRollout(sessionId: string, rolloutPath: string | null): Promise<TranscriptCapture> {
  if (rolloutPath === null) return { files: [], notes: ['rollout: musher knows no rollout path for this session, so none was kept'] };
  const notes: string[] = [];
  let own: Buffer;
  try {
    own = await readComplete(rolloutPath);
  } catch (e) {
    return { files: [], notes: [`rollout: ${rolloutPath} could not be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}), so none was kept`] };
  }
  const files: CapturedFile[] = [{ role: 'session', sessionId, path: codexRelativePath(rolloutPath), sourcePath: rolloutPath, bytes: own }];
  const root = sessionsRootOf(rolloutPath);
  const seen = new Set([sessionId]);
  let parent = forkedFromOf(own, rolloutPath);
  for (let depth = 0; parent !== null && depth < MAX_FORK_DEPTH; depth++) {
    if (seen.has(parent)) {
      notes.push(`rollout: the fork lineage loops back to ${parent}; stopped there`);
      break;
    }
    seen.add(parent);
    const path = await findRollout(root, parent);
    if (path === null) {
      notes.push(`rollout: fork parent ${parent} not found under ${root}: the copy cannot be resumed without it`);
      break;
    }
    let bytes: Buffer;
    try {
      bytes = await readComplete(path);
    } catch (e) {
      notes.push(`rollout: fork parent ${path} could not be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}): the copy cannot be resumed without it`);
      break;
    }
    files.unshift({ role: 'fork-parent', sessionId: parent, path: codexRelativePath(path), sourcePath: path, bytes });
    parent = forkedFromOf(bytes, path);
  }
  return { files, notes };
}
