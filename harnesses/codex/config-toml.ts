import { parse, TomlError } from 'smol-toml';

/**
 * Codex's config.toml, read with a real TOML parser (smol-toml) and edited as text.
 *
 * Why not parse → change → stringify: stringify writes the user's file anew, without their comments, order and
 * formatting, and uninstall could not give their bytes back. So the file is only ever read with the parser, and
 * written by small text edits: sleds' own blocks (whole tables between two marker comments) appended, replaced or
 * removed, and a `trusted_hash = …` line changed in a table of the user's. The parser is also what finds where
 * those lines are (in a file that parses, the lines from one statement's start up to the next parse on their own,
 * and no shorter run does, so a `[table]` inside a multi-line string or array is never taken for one), and every
 * edited file is parsed again and must read back as exactly the intended values before anything is written
 * (`verifiedEdit`).
 */

export type TomlTable = { [key: string]: unknown };

/** A config.toml that is not TOML: one line naming the line and column, in smol-toml's words. */
export class TomlSyntaxError extends Error {
  constructor(
    readonly line: number,
    readonly column: number,
    readonly reason: string,
  ) {
    super(`line ${line}, column ${column}: ${reason}`);
  }
}

export function parseToml(text: string): TomlTable {
  try {
    return parse(text) as TomlTable;
  } catch (e) {
    if (e instanceof TomlError) {
      const reason = e.message.split('\n')[0]!.replace(/^Invalid TOML document: /, '');
      throw new TomlSyntaxError(e.line, e.column, reason);
    }
    throw e;
  }
}

/** The text parsed on its own, or null: not being TOML by itself is the answer here, not an error. */
function parsesAlone(text: string): TomlTable | null {
  try {
    return parse(text) as TomlTable;
  } catch {
    // not TOML on its own: that is the answer (see above)
    return null;
  }
}

export function isTable(v: unknown): v is TomlTable {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Date);
}

export interface TomlLineSpan {
  /** String offsets of the physical line, `end` past its line break. */
  start: number;
  end: number;
  /** The line without its line break. */
  text: string;
}

/** A parsed config.toml and its physical lines. Throws TomlSyntaxError when the text is not TOML. */
export class TomlText {
  readonly model: TomlTable;
  readonly lines: TomlLineSpan[];
  readonly eol: string;
  /** For each line, whether a statement (or a comment, or a blank) starts on it at the top level. */
  private readonly starts: boolean[];

  constructor(readonly text: string) {
    this.model = parseToml(text);
    this.eol = text.includes('\r\n') ? '\r\n' : '\n';
    const lines: TomlLineSpan[] = [];
    for (let start = 0; start < text.length; ) {
      const nl = text.indexOf('\n', start);
      const end = nl < 0 ? text.length : nl + 1;
      lines.push({ start, end, text: text.slice(start, end).replace(/\r?\n$/, '') });
      start = end;
    }
    this.lines = lines;
    // One parse per line (more for a statement over several lines): the run of lines since the last start is a
    // whole statement as soon as it parses on its own.
    this.starts = lines.map(() => false);
    let from = 0;
    for (let i = 0; i < lines.length; i++) {
      if (i === from) this.starts[i] = true;
      if (parsesAlone(text.slice(lines[from]!.start, lines[i]!.end)) !== null) from = i + 1;
    }
  }

  /** Whether line i starts a statement at the top level (not inside a multi-line string or array). */
  atTopLevel(i: number): boolean {
    return this.starts[i] === true;
  }

  /** The table header on line i, if that is what it is: its key path, and whether it is an array of tables. */
  header(i: number): { path: string[]; array: boolean } | null {
    const t = this.lines[i]!.text.trim();
    if (!t.startsWith('[') || !this.atTopLevel(i)) return null;
    const alone = parsesAlone(t);
    if (!alone) return null;
    const path: string[] = [];
    let v: unknown = alone;
    for (;;) {
      if (Array.isArray(v)) return v.length === 1 && isTable(v[0]) && Object.keys(v[0]).length === 0 ? { path, array: true } : null;
      if (!isTable(v)) return null;
      const keys = Object.keys(v);
      if (keys.length === 0) return { path, array: false };
      if (keys.length !== 1) return null;
      path.push(keys[0]!);
      v = v[keys[0]!];
    }
  }

  /** The value of `key = <value>` when line i is exactly that one-line statement at the top level. */
  keyValue(i: number, key: string): { value: unknown } | null {
    const t = this.lines[i]!.text;
    if (!t.trimStart().startsWith(key) || !this.atTopLevel(i)) return null;
    const alone = parsesAlone(t);
    if (!alone || Object.keys(alone).length !== 1 || !(key in alone)) return null;
    return { value: alone[key] };
  }

  /** Index of the first line at or after `from` that is the comment `marker` (trimmed, at the top level). */
  findComment(from: number, match: (trimmed: string) => boolean): number {
    for (let i = from; i < this.lines.length; i++) if (match(this.lines[i]!.text.trim()) && this.atTopLevel(i)) return i;
    return -1;
  }

  /** A block between two marker comments: the marker line indices, and the tables it holds parsed on their own. */
  block(isStart: (t: string) => boolean, isEnd: (t: string) => boolean): { start: number; end: number; model: TomlTable } | null {
    const start = this.findComment(0, isStart);
    if (start < 0) return null;
    const end = this.findComment(start + 1, isEnd);
    if (end < 0) return null;
    const inner = this.text.slice(this.lines[start]!.end, this.lines[end]!.start);
    const model = parsesAlone(inner);
    return model ? { start, end, model } : null;
  }
}

/** An edit of the text: replace [from, to) with `text`. */
export type TextEdit = [from: number, to: number, text: string];

export function applyEdits(text: string, edits: TextEdit[]): string {
  let out = text;
  for (const [a, b, r] of [...edits].sort((x, y) => y[0] - x[0])) out = out.slice(0, a) + r + out.slice(b);
  return out;
}

/** Values as a parser hands them to Codex, minus tables left empty (a table header implies its parents). */
function normal(v: unknown): unknown {
  if (v instanceof Date) return `date:${v.toISOString()}`;
  if (Array.isArray(v)) return v.map(normal);
  if (isTable(v)) {
    const out: TomlTable = {};
    for (const [k, x] of Object.entries(v)) {
      const n = normal(x);
      if (isTable(n) && Object.keys(n).length === 0) continue;
      out[k] = n;
    }
    return out;
  }
  return v;
}

function sameValues(a: unknown, b: unknown): boolean {
  return JSON.stringify(sortKeys(normal(a))) === JSON.stringify(sortKeys(normal(b)));
}

function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (isTable(v)) return Object.fromEntries(Object.keys(v).sort().map((k) => [k, sortKeys(v[k])]));
  return v;
}

/** A deep copy of the tables and arrays; leaves (dates included) shared. */
export function cloneTable(t: TomlTable): TomlTable {
  const copy = (v: unknown): unknown => (Array.isArray(v) ? v.map(copy) : isTable(v) ? cloneTable(v) : v);
  return Object.fromEntries(Object.entries(t).map(([k, v]) => [k, copy(v)]));
}

/**
 * `text` with `edits` applied, when the result parses and reads back as exactly `expected` (tables left empty
 * aside); otherwise why not, in one line. This is the check that keeps a text edit from changing anything else.
 */
export function verifiedEdit(text: string, edits: TextEdit[], expected: TomlTable): { text: string } | { refused: string } {
  const out = applyEdits(text, edits);
  let got: TomlTable;
  try {
    got = parseToml(out);
  } catch (e) {
    return { refused: `the edited file would not be TOML (${(e as Error).message})` };
  }
  if (!sameValues(got, expected)) return { refused: 'the edited file would not read back as intended' };
  return { text: out };
}

/** The table at `path` in a model, created (as plain tables) where missing; null when something else is in the way. */
export function tableAt(model: TomlTable, path: string[]): TomlTable | null {
  let t: TomlTable = model;
  for (const k of path) {
    if (t[k] === undefined) t[k] = {};
    const next = t[k];
    if (!isTable(next)) return null;
    t = next;
  }
  return t;
}

/** A TOML basic string (JSON's escapes are TOML's, for the strings sleds writes). */
export function tomlString(s: string): string {
  return JSON.stringify(s);
}
