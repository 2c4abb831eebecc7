/**
 * What a hand-off bundle may ask to be written on the teammate's machine, checked before anything is. A bundle comes
 * from another person: its manifest names where the transcript goes under the harness's home, which files go into
 * the worktree, and the session id that reaches the harness's argv. Each must have the one shape the harness itself
 * writes, or the whole bundle is refused with one line. Pure: the resolving against real folders (symlinked parents)
 * is musher's (musher/handoff/confined-write.ts).
 */
import { isSessionId } from '../session-id.js';
import type { SnapshotManifest, TranscriptFile } from '../snapshot.js';

const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';

/**
 * Claude Code: `projects/<slug>/<session uuid>.jsonl`, the slug being the launch cwd with every non-alphanumeric
 * character replaced by `-` (a long one cut to 200 and given `-<base36 hash>`): letters, digits and dashes only.
 */
const CLAUDE_TRANSCRIPT = new RegExp(`^projects/([A-Za-z0-9-]{1,255})/(${UUID})\\.jsonl$`, 'i');

/** Codex: `sessions/YYYY/MM/DD/rollout-YYYY-MM-DDThh-mm-ss-<thread uuid>.jsonl`. */
const CODEX_ROLLOUT = new RegExp(`^sessions/(\\d{4})/(\\d{2})/(\\d{2})/rollout-(\\d{4})-(\\d{2})-(\\d{2})T\\d{2}-\\d{2}-\\d{2}-(${UUID})\\.jsonl$`, 'i');

/** Control characters (C0, DEL, C1): nothing a path of ours holds, and what would repaint a terminal it is shown on. */
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

function shown(s: string): string {
  return JSON.stringify(s.length > 80 ? `${s.slice(0, 77)}…` : s);
}

/** Why a transcript entry's path is not the harness's own shape for it, or null when it is. */
export function transcriptPathProblem(harness: SnapshotManifest['harness'], t: Pick<TranscriptFile, 'path' | 'sessionId' | 'role'>, sessionId: string): string | null {
  if (harness === 'claude-code') {
    const m = CLAUDE_TRANSCRIPT.exec(t.path);
    if (m === null) return `transcript path ${shown(t.path)} is not projects/<slug>/<session uuid>.jsonl`;
    if (t.role !== 'session') return `transcript ${shown(t.path)}: Claude Code sessions have no ${t.role} file`;
    if (m[2]!.toLowerCase() !== sessionId.toLowerCase()) return `transcript ${shown(t.path)} is not session ${sessionId}'s`;
    return null;
  }
  const m = CODEX_ROLLOUT.exec(t.path);
  if (m === null) return `rollout path ${shown(t.path)} is not sessions/YYYY/MM/DD/rollout-<time>-<thread uuid>.jsonl`;
  if (m[1] !== m[4] || m[2] !== m[5] || m[3] !== m[6]) return `rollout path ${shown(t.path)}: its folder's date is not its name's`;
  const threadId = m[7]!.toLowerCase();
  if (t.sessionId !== null && t.sessionId.toLowerCase() !== threadId) return `rollout ${shown(t.path)} is named for another thread than ${t.sessionId}`;
  if (t.role === 'session' && threadId !== sessionId.toLowerCase()) return `rollout ${shown(t.path)} is not session ${sessionId}'s`;
  return null;
}

/**
 * Why a path cannot be a file of the worktree, or null: relative, `/`-separated, no empty, `.` or `..` part, no
 * `.git` part (git's own rule: it would write into the repository's control files), no backslash, no control
 * character, at most 4096 bytes.
 */
export function worktreePathProblem(path: string): string | null {
  if (path.length === 0) return 'an empty file path';
  if (Buffer.byteLength(path) > 4096) return `a file path of ${Buffer.byteLength(path)} bytes`;
  if (CONTROL.test(path)) return `file path ${shown(path)} holds a control character`;
  if (path.includes('\\')) return `file path ${shown(path)} holds a backslash`;
  if (path.startsWith('/')) return `file path ${shown(path)} is absolute`;
  for (const part of path.split('/')) {
    if (part === '' || part === '.' || part === '..') return `file path ${shown(path)} is not a plain relative path`;
    if (part.toLowerCase() === '.git') return `file path ${shown(path)} reaches into .git`;
  }
  return null;
}

/** A symlink in the worktree may point only inside it: a relative target that stays below the worktree's top. */
export function symlinkTargetProblem(path: string, target: string): string | null {
  if (target.length === 0 || CONTROL.test(target) || target.includes('\\')) return `symlink ${shown(path)} has an unusable target`;
  if (target.startsWith('/')) return `symlink ${shown(path)} points outside the worktree (${shown(target)})`;
  const parts = path.split('/').slice(0, -1);
  for (const part of target.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (parts.length === 0) return `symlink ${shown(path)} points outside the worktree (${shown(target)})`;
      parts.pop();
    } else {
      if (part.toLowerCase() === '.git') return `symlink ${shown(path)} points into .git`;
      parts.push(part);
    }
  }
  return null;
}

/** A commit id as git names it: 40 hex digits (SHA-1) or 64 (SHA-256). */
export function isCommitId(s: string): boolean {
  return /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/.test(s);
}

/**
 * The first reason this manifest, read from a bundle, cannot be picked up; null when every path and id in it has
 * its shape. `symlinkTarget(hash)` gives a symlink entry's target (its blob's bytes).
 */
export function manifestProblem(m: SnapshotManifest, symlinkTarget: (hash: string) => string | null): string | null {
  if (!isSessionId(m.sessionId)) return `session id ${shown(m.sessionId)} is not a UUID`;
  const seen = new Set<string>();
  for (const t of m.transcript) {
    if (t.sessionId !== null && !isSessionId(t.sessionId)) return `transcript session id ${shown(t.sessionId)} is not a UUID`;
    const p = transcriptPathProblem(m.harness, t, m.sessionId);
    if (p !== null) return p;
    if (seen.has(t.path.toLowerCase())) return `transcript ${shown(t.path)} is named twice`;
    seen.add(t.path.toLowerCase());
  }
  const g = m.git;
  if (g === null) return null;
  if (g.head !== null && !isCommitId(g.head)) return `its base commit ${shown(g.head)} is not a commit id`;
  if (g.subdir !== '' && worktreePathProblem(g.subdir) !== null) return `its folder in the repository ${shown(g.subdir)} is not a plain relative path`;
  const files = new Map<string, string>();
  for (const u of g.untracked) {
    const p = worktreePathProblem(u.path);
    if (p !== null) return p;
    if (files.has(u.path)) return `file ${shown(u.path)} is named twice`;
    files.set(u.path, u.mode);
    if (u.mode === '120000') {
      const target = symlinkTarget(u.hash);
      const s = target === null ? `symlink ${shown(u.path)} has no target` : symlinkTargetProblem(u.path, target);
      if (s !== null) return s;
    }
  }
  // No file below another entry: git would refuse it, and below a symlink it would be written through the link.
  for (const path of files.keys()) {
    const parts = path.split('/');
    for (let i = 1; i < parts.length; i++) {
      const parent = parts.slice(0, i).join('/');
      if (files.has(parent)) return `file ${shown(path)} lies below ${files.get(parent) === '120000' ? 'the symlink' : 'the file'} ${shown(parent)}`;
    }
  }
  return null;
}
