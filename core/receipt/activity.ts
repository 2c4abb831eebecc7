/**
 * What a receipt measures from a task's sessions, from their records alone. Pure.
 */

/**
 * A gap between two consecutive model calls longer than this is a wait (for the user's input, for a limit's reset,
 * for a hold or a hand-off), not work, and is not counted. Five minutes: a model call and the tools between two calls
 * take seconds to a couple of minutes; a long test run may be cut short, a coffee break is not counted.
 */
export const ACTIVE_GAP_MS = 5 * 60_000;

/** Active minutes over the model calls' times (any order; several sessions' calls merged): the sum of gaps ≤ ACTIVE_GAP_MS. */
export function activeMinutes(timestamps: readonly number[], gapMs = ACTIVE_GAP_MS): number {
  const ts = [...timestamps].sort((a, b) => a - b);
  let active = 0;
  for (let i = 1; i < ts.length; i++) {
    const gap = ts[i]! - ts[i - 1]!;
    if (gap <= gapMs) active += gap;
  }
  return Math.round(active / 6_000) / 10;
}

/** Claude Code's editing tools and where each names its file. */
const FILE_FIELDS: Record<string, string> = { Edit: 'file_path', MultiEdit: 'file_path', Write: 'file_path', NotebookEdit: 'notebook_path' };
/** Codex's `apply_patch` names each file on a line of its own. */
const PATCH_FILE_RE = /^\*\*\* (?:Add|Update|Delete) File: (.+)$/gm;

/**
 * The files a task changed, from its sessions' PostToolUse payloads (parsed JSON): Claude Code's Edit, MultiEdit,
 * Write and NotebookEdit, and Codex's apply_patch. Distinct paths; unknown shapes are skipped.
 */
export function filesTouched(payloads: readonly unknown[]): number {
  const files = new Set<string>();
  for (const p of payloads) {
    if (typeof p !== 'object' || p === null) continue;
    const { tool_name: tool, tool_input: input } = p as { tool_name?: unknown; tool_input?: unknown };
    if (typeof tool !== 'string') continue;
    const field = FILE_FIELDS[tool];
    if (field && typeof input === 'object' && input !== null) {
      const path = (input as Record<string, unknown>)[field];
      if (typeof path === 'string' && path !== '') files.add(path);
      continue;
    }
    if (tool === 'apply_patch' || tool === 'ApplyPatch') {
      const text = typeof input === 'string' ? input : JSON.stringify(input ?? '');
      for (const m of text.replace(/\\n/g, '\n').matchAll(PATCH_FILE_RE)) files.add(m[1]!.trim());
    }
  }
  return files.size;
}
