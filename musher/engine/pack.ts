import { open, realpath } from 'node:fs/promises';
import { isAbsolute, join, relative } from 'node:path';

/**
 * The pack: the one prompt a node's harness gets (through stdin or a file, never argv). The node's brief, what went
 * wrong last time (a failed check's log, a reviewer's request, a conflict, a parked question's answer), the
 * decisions taken on the route, what the nodes it depends on landed, and the field book (the repository's
 * CLAUDE.md and AGENTS.md and the route's notes). It never exceeds its limit: when it would, the least needed part is
 * cut first (the field book, then the dependencies, the oldest decisions, the start of a log), the brief last.
 */

export type FeedbackKind = 'verify-failed' | 'checks-failed' | 'changes-requested' | 'conflict' | 'answer' | 'continue';

export interface PackInput {
  route: { key: string; title: string; notes: string | null; tracker: string | null };
  node: { id: string; title: string; brief: string };
  fieldBook: Array<{ name: string; text: string }>;
  decisions: Array<{ question: string; answer: string; answeredBy: string; at: number }>;
  dependencies: Array<{ nodeId: string; title: string; prUrl: string | null; summary: string }>;
  feedback: { kind: FeedbackKind; text: string } | null;
  limits: { maxChars: number };
}

/** The files read into the field book, in this order. */
export const FIELD_BOOK_FILES = ['CLAUDE.md', 'AGENTS.md'] as const;
export const FIELD_BOOK_MAX_BYTES = 32 * 1024;

const FEEDBACK_HEADING: Record<FeedbackKind, string> = {
  'verify-failed': "The repository's checks failed on your last attempt — fix what they report, then finish again",
  'checks-failed': "The PR's checks failed — fix what they report and push again",
  'changes-requested': 'A reviewer requested changes on the PR — address them',
  conflict: 'The PR conflicts with the base branch — merge the base into your branch and resolve the conflict',
  answer: 'Your parked question was answered — go on with this answer',
  continue: 'Your run was stopped before it finished (a limit, a restart) — carry on where you left off',
};

const CUT = '…(cut)…';
/** The most of the limit a feedback log takes before anything else is cut. */
const FEEDBACK_SHARE = 0.4;

interface Section {
  /** Shrinks first when the pack is over its limit: the lowest number. */
  priority: number;
  heading: string;
  body: string;
  /** Which end of the body survives a cut: a log's end, a document's start. */
  keep: 'start' | 'end';
}

function cutTo(text: string, max: number, keep: 'start' | 'end'): string {
  if (text.length <= max) return text;
  if (max <= CUT.length) return '';
  return keep === 'end' ? `${CUT}${text.slice(text.length - (max - CUT.length))}` : `${text.slice(0, max - CUT.length)}${CUT}`;
}

function render(s: Section): string {
  return `## ${s.heading}\n\n${s.body.trim()}\n`;
}

function day(ms: number): string {
  return new Date(ms).toISOString().replace(/:\d\d\.\d+Z$/, 'Z').replace('T', ' ');
}

export function buildPack(p: PackInput): string {
  const max = Math.max(0, Math.floor(p.limits.maxChars));
  const title = `# ${p.node.title} (node ${p.node.id} of route ${p.route.key}: ${p.route.title}${p.route.tracker ? `, ${p.route.tracker}` : ''})\n`;
  const close =
    '## When you are done\n\nCommit your work on this branch and stop. sleds runs the checks, pushes and opens the PR; do not merge anything. ' +
    'If you need a decision you cannot take, ask it (the `ask` tool) with 2 to 4 options, your recommended one first, and whether it is reversible: ' +
    'sleds answers from the spec and earlier decisions, decides a reversible one, or asks a person (then end your turn: you are resumed with the answer).\n';

  const sections: Section[] = [{ priority: 5, heading: 'Your task', body: p.node.brief, keep: 'start' }];
  // A log's tail is what matters: it gets at most its share of the limit, so a long one cannot push out the decisions.
  if (p.feedback) sections.push({ priority: 4, heading: FEEDBACK_HEADING[p.feedback.kind], body: cutTo(p.feedback.text.trim(), Math.floor(max * FEEDBACK_SHARE), 'end'), keep: 'end' });
  if (p.decisions.length > 0) {
    // Newest last; a cut drops the oldest.
    const lines = [...p.decisions].sort((a, b) => a.at - b.at).map((d) => `- ${d.question} → **${d.answer}** (${d.answeredBy}, ${day(d.at)})`);
    sections.push({ priority: 3, heading: 'Decisions taken on this route', body: lines.join('\n'), keep: 'end' });
  }
  if (p.dependencies.length > 0) {
    const body = p.dependencies.map((d) => `### ${d.title} (${d.nodeId})${d.prUrl ? ` — ${d.prUrl}` : ''}\n\n${d.summary.trim()}`).join('\n\n');
    sections.push({ priority: 2, heading: 'What the nodes before you landed', body, keep: 'start' });
  }
  const book = [...(p.route.notes ? [{ name: 'Route notes', text: p.route.notes }] : []), ...p.fieldBook];
  if (book.length > 0) {
    sections.push({ priority: 1, heading: 'Field book', body: book.map((f) => `### ${f.name}\n\n${f.text.trim()}`).join('\n\n'), keep: 'start' });
  }

  const join_ = (): string => [title, ...sections.map(render), close].join('\n');
  let text = join_();
  // Least needed first: each section shrinks to what the limit leaves, down to nothing but its heading.
  for (const s of [...sections].sort((a, b) => a.priority - b.priority)) {
    if (text.length <= max) break;
    const over = text.length - max;
    s.body = cutTo(s.body.trim(), Math.max(0, s.body.trim().length - over), s.keep) || CUT;
    text = join_();
  }
  if (text.length <= max) return text;
  // Headings alone are over the limit (a tiny limit): the start of the whole, cut.
  return cutTo(text, max, 'start');
}

/** Reads a file confined to `dir` (no symlink out of it), at most `maxBytes`; null when it is not there or not a file. */
export async function readConfined(dir: string, name: string, maxBytes: number): Promise<string | null> {
  let root: string;
  let real: string;
  try {
    root = await realpath(dir);
    real = await realpath(join(dir, name));
  } catch {
    // Not there (most repositories have one of the two, or neither): nothing to read.
    return null;
  }
  const rel = relative(root, real);
  if (rel === '' || rel.startsWith('..') || isAbsolute(rel)) return null;
  const fh = await open(real, 'r').catch(() => null);
  if (!fh) return null;
  try {
    if (!(await fh.stat()).isFile()) return null;
    const buf = Buffer.alloc(maxBytes + 1);
    const { bytesRead } = await fh.read(buf, 0, maxBytes + 1, 0);
    const text = buf.subarray(0, Math.min(bytesRead, maxBytes)).toString('utf8');
    return bytesRead > maxBytes ? `${text}\n${CUT}` : text;
  } finally {
    await fh.close();
  }
}

/** The repository's own instructions for agents, as the worktree has them (a symlink out of it is not read). */
export async function readFieldBook(worktree: string, maxBytes = FIELD_BOOK_MAX_BYTES): Promise<PackInput['fieldBook']> {
  const book: PackInput['fieldBook'] = [];
  for (const name of FIELD_BOOK_FILES) {
    const text = await readConfined(worktree, name, maxBytes);
    if (text !== null && text.trim() !== '') book.push({ name, text });
  }
  return book;
}
