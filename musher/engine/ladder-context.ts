import { readdir, realpath } from 'node:fs/promises';
import { join, relative } from 'node:path';
import type { LadderSource } from '../../core/overnight/ladder.js';
import { readConfined } from './pack.js';

/**
 * What the ladder's first rung reads (issue 15 § 5): the spec files of a node's worktree — SPEC.md, README.md,
 * CLAUDE.md, AGENTS.md and docs/**\/*.md — and the node's brief and its route's notes. Each file is read confined to the
 * worktree (a symlink out of it is not read) and at most 64 KiB of it; docs/ is walked to a few levels and files.
 */

export const SPEC_FILES = ['SPEC.md', 'README.md', 'CLAUDE.md', 'AGENTS.md'] as const;
const MAX_BYTES = 64 * 1024;
const MAX_DOCS = 50;
const MAX_DEPTH = 4;

async function docsOf(root: string): Promise<string[]> {
  const found: string[] = [];
  const walk = async (dir: string, depth: number): Promise<void> => {
    if (depth > MAX_DEPTH || found.length >= MAX_DOCS) return;
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
    for (const e of entries.sort((a, b) => a.name.localeCompare(b.name))) {
      if (found.length >= MAX_DOCS) return;
      if (e.name.startsWith('.')) continue;
      const full = join(dir, e.name);
      if (e.isDirectory()) await walk(full, depth + 1);
      else if (e.isFile() && e.name.toLowerCase().endsWith('.md')) found.push(relative(root, full));
    }
  };
  await walk(join(root, 'docs'), 1);
  return found;
}

export async function ladderSources(node: { worktree: string | null; brief: string }, route: { notes: string | null }): Promise<LadderSource[]> {
  const sources: LadderSource[] = [];
  if (node.worktree) {
    const root = await realpath(node.worktree).catch(() => null);
    if (root) {
      for (const name of [...SPEC_FILES, ...(await docsOf(root))]) {
        const text = await readConfined(root, name, MAX_BYTES);
        if (text !== null && text.trim() !== '') sources.push({ name, text });
      }
    }
  }
  if (node.brief.trim()) sources.push({ name: 'the node’s brief', text: node.brief });
  if (route.notes?.trim()) sources.push({ name: 'the route’s notes', text: route.notes });
  return sources;
}
