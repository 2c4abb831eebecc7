/**
 * What musher keeps of a hook event once it has answered it: the few fields it reads later, never the payload as
 * received. A PostToolUse payload carries the tool's whole input and output (a file's contents, a command's output,
 * an MCP answer); musher reads back only which tool ran and which files it changed (a receipt's files touched).
 * Pure.
 */

export interface KeptHookFields {
  /** The tool's name (PreToolUse, PostToolUse, …). */
  tool?: string;
  /** The files an editing tool changed (PostToolUse only): Claude Code's Edit/MultiEdit/Write/NotebookEdit, Codex's apply_patch. */
  files?: string[];
}

/** Claude Code's editing tools and where each names its file. */
const FILE_FIELDS: Record<string, string> = { Edit: 'file_path', MultiEdit: 'file_path', Write: 'file_path', NotebookEdit: 'notebook_path' };
/** Codex's `apply_patch` names each file on a line of its own. */
const PATCH_FILE_RE = /^\*\*\* (?:Add|Update|Delete) File: (.+)$/gm;
const MAX_TOOL_NAME = 200;
const MAX_PATH = 4096;
const MAX_FILES = 1000;

/** The files one tool call changed, from its name and input; [] for any other tool or an unknown shape. */
export function editedFiles(tool: string, input: unknown): string[] {
  const field = FILE_FIELDS[tool];
  if (field) {
    const path = typeof input === 'object' && input !== null ? (input as Record<string, unknown>)[field] : undefined;
    return typeof path === 'string' && path !== '' ? [path] : [];
  }
  if (tool === 'apply_patch' || tool === 'ApplyPatch') {
    const text = typeof input === 'string' ? input : JSON.stringify(input ?? '');
    const files = new Set<string>();
    for (const m of text.replace(/\\n/g, '\n').matchAll(PATCH_FILE_RE)) files.add(m[1]!.trim());
    return [...files];
  }
  return [];
}

export function keptHookFields(event: string, payload: unknown): KeptHookFields {
  if (typeof payload !== 'object' || payload === null) return {};
  const { tool_name: tool, tool_input: input } = payload as { tool_name?: unknown; tool_input?: unknown };
  if (typeof tool !== 'string' || tool === '') return {};
  const kept: KeptHookFields = { tool: tool.slice(0, MAX_TOOL_NAME) };
  if (event === 'PostToolUse') {
    const files = editedFiles(tool, input).filter((f) => f.length <= MAX_PATH).slice(0, MAX_FILES);
    if (files.length > 0) kept.files = files;
  }
  return kept;
}
