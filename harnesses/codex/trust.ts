import { createHash } from 'node:crypto';
import type { CodexState } from '../install-state.js';
import { cloneTable, isTable, tableAt, TomlText, tomlString, verifiedEdit, type TextEdit, type TomlTable } from './config-toml.js';

/**
 * The trust Codex needs before it runs a hook at all (untrusted hooks are skipped without a word; facts
 * codex-cli §1): `[hooks.state."<realpath CODEX_HOME>/hooks.json:<event_snake>:<group>:<handler>"]
 * trusted_hash = "sha256:…"` in $CODEX_HOME/config.toml, in one block between two marker comments at the end of
 * the file. A table of the user's at a key sleds uses has its trusted_hash line changed in place (and given back
 * by uninstall). How the file is read and edited: config-toml.ts.
 */

/** Events whose timeout Codex 0.169 defaults to 1 s and caps at 3 s (measured with app-server hooks/list). */
const SHORT_TIMEOUT_EVENTS = new Set(['SessionEnd', 'Interrupt']);


/** "UserPromptSubmit" → "user_prompt_submit". */
export function eventSnake(event: string): string {
  return event.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();
}

export interface CodexHandler {
  type: string;
  command: string;
  timeout?: number;
  async?: boolean;
  statusMessage?: string;
}

/** The timeout Codex runs (and hashes) a handler with. */
export function effectiveTimeout(event: string, timeout: number | undefined): number {
  if (SHORT_TIMEOUT_EVENTS.has(event)) return Math.min(timeout ?? 1, 3);
  return timeout ?? 600;
}

function sortedJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(sortedJson).join(',')}]`;
  if (v && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o)
      .filter((k) => o[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${sortedJson(o[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v);
}

/**
 * `sha256:<hex>` of the compact, recursively key-sorted JSON of
 * {event_name, matcher?, hooks:[{type, command, timeout, async, statusMessage?}]} for ONE handler, with the timeout
 * Codex actually uses (default 600 s; SessionEnd and Interrupt: default 1, at most 3).
 */
export function codexTrustHash(event: string, matcher: string | undefined, handler: CodexHandler): string {
  const canonical = {
    event_name: eventSnake(event),
    ...(matcher !== undefined ? { matcher } : {}),
    hooks: [
      {
        type: handler.type,
        command: handler.command,
        timeout: effectiveTimeout(event, handler.timeout),
        async: handler.async ?? false,
        ...(handler.statusMessage !== undefined ? { statusMessage: handler.statusMessage } : {}),
      },
    ],
  };
  return `sha256:${createHash('sha256').update(sortedJson(canonical)).digest('hex')}`;
}

export function codexTrustKey(hooksJsonPath: string, event: string, group: number, handler: number): string {
  return `${hooksJsonPath}:${eventSnake(event)}:${group}:${handler}`;
}

// ---------------------------------------------------------------------------------------------------------------
// config.toml

export const BLOCK_START = "# >>> sleds: Codex trusts sleds' hooks (written by 'sleds install'; 'sleds uninstall' removes it) >>>";
export const BLOCK_END = '# <<< sleds <<<';
const isStart = (t: string): boolean => t.startsWith('# >>> sleds');
const isEnd = (t: string): boolean => t.startsWith('# <<< sleds');

export interface TrustEntry {
  key: string;
  hash: string;
}

/** A hooks.state entry as Codex reads it, and whether it lies inside sleds' marked block. */
export interface TrustTable {
  key: string;
  hash: string | null;
  inBlock: boolean;
}

function stateTable(model: TomlTable): TomlTable | null {
  const hooks = model.hooks;
  return isTable(hooks) && isTable(hooks.state) ? hooks.state : null;
}

function hashOf(v: unknown): string | null {
  return isTable(v) && typeof v.trusted_hash === 'string' ? v.trusted_hash : null;
}

/** What config.toml trusts (parsed: exactly what Codex reads). Throws TomlSyntaxError when it is not TOML. */
export function readTrust(text: string): TrustTable[] {
  const doc = new TomlText(text);
  const inBlock = new Set(Object.keys(stateTable(doc.block(isStart, isEnd)?.model ?? {}) ?? {}));
  return Object.entries(stateTable(doc.model) ?? {}).map(([key, v]) => ({ key, hash: hashOf(v), inBlock: inBlock.has(key) }));
}

/** Where a table of the user's at hooks.state.<key> is written as a `[hooks.state."<key>"]` header. */
interface UserTable {
  header: number;
  /** Its `trusted_hash = …` line, when it has one on a line of its own. */
  hashLine: number | null;
  /** One past its last line. */
  end: number;
}

function userTables(doc: TomlText, block: { start: number; end: number } | null): Map<string, UserTable> {
  const headers: Array<{ line: number; path: string[]; array: boolean }> = [];
  doc.lines.forEach((_l, i) => {
    const h = doc.header(i);
    if (h) headers.push({ line: i, ...h });
  });
  const out = new Map<string, UserTable>();
  headers.forEach((h, n) => {
    const inBlock = block !== null && h.line > block.start && h.line < block.end;
    if (inBlock || h.array || h.path.length !== 3 || h.path[0] !== 'hooks' || h.path[1] !== 'state') return;
    let end = headers[n + 1]?.line ?? doc.lines.length;
    if (block && block.start > h.line && block.start < end) end = block.start;
    let hashLine: number | null = null;
    for (let k = h.line + 1; k < end; k++) if (doc.keyValue(k, 'trusted_hash')) hashLine = k;
    out.set(h.path[2]!, { header: h.line, hashLine, end });
  });
  return out;
}

function trustBlock(entries: TrustEntry[], nl: string): string {
  const out = [BLOCK_START];
  for (const e of entries) out.push(`[hooks.state.${tomlString(e.key)}]`, `trusted_hash = ${tomlString(e.hash)}`, '');
  out.push(BLOCK_END);
  return out.join(nl) + nl;
}

interface TrustPlan {
  text: string;
  edited: CodexState['configToml']['edited'];
  /** Keys trusted by a table sleds did not write (left alone, or their hash line changed). */
  foreign: string[];
}

/**
 * config.toml with sleds' block holding exactly `wanted` (minus what the user's own tables already trust, whose
 * hash is changed in place). `blocker` when sleds cannot write it without changing what else the file says.
 * Throws TomlSyntaxError when the file is not TOML.
 */
export function planTrust(text: string, wanted: TrustEntry[], priorEdited: CodexState['configToml']['edited']): TrustPlan | { blocker: string } {
  const doc = new TomlText(text);
  const nl = doc.eol;
  if (doc.model.hooks !== undefined && !isTable(doc.model.hooks)) return { blocker: 'hooks is not a table' };
  if (isTable(doc.model.hooks) && doc.model.hooks.state !== undefined && !isTable(doc.model.hooks.state)) {
    return { blocker: 'hooks.state is an array of tables ([[hooks.state]]), which sleds does not edit' };
  }
  const block = doc.block(isStart, isEnd);
  const blockKeys = Object.keys(stateTable(block?.model ?? {}) ?? {});
  const state = stateTable(doc.model) ?? {};
  const theirs = userTables(doc, block);
  const expected = cloneTable(doc.model);
  const expectedState = tableAt(expected, ['hooks', 'state'])!;
  for (const k of blockKeys) delete expectedState[k];

  const edited = priorEdited.map((e) => ({ ...e }));
  const foreign: string[] = [];
  const inBlock: TrustEntry[] = [];
  const edits: TextEdit[] = [];
  for (const w of wanted) {
    if (state[w.key] === undefined || blockKeys.includes(w.key)) {
      inBlock.push(w);
      expectedState[w.key] = { trusted_hash: w.hash };
      continue;
    }
    foreign.push(w.key);
    if (hashOf(state[w.key]) === w.hash) continue;
    const t = theirs.get(w.key);
    if (!t) return { blocker: `hooks.state."${w.key}" is written as dotted keys or an inline table, which sleds does not edit` };
    (expectedState[w.key] as TomlTable).trusted_hash = w.hash;
    if (t.hashLine !== null) {
      const l = doc.lines[t.hashLine]!;
      if (!edited.some((e) => e.key === w.key)) edited.push({ key: w.key, line: text.slice(l.start, l.end) });
      edits.push([l.start, l.end, `trusted_hash = ${tomlString(w.hash)}${text.slice(l.start, l.end).endsWith('\n') ? nl : ''}`]);
    } else {
      const h = doc.lines[t.header]!;
      if (!edited.some((e) => e.key === w.key)) edited.push({ key: w.key, line: null });
      edits.push([h.end, h.end, `${text.slice(h.start, h.end).endsWith('\n') ? '' : nl}trusted_hash = ${tomlString(w.hash)}${nl}`]);
    }
  }
  // Our block: replaced in place, appended, or removed when nothing is left for it.
  if (block) {
    const from = doc.lines[block.start]!.start;
    const to = doc.lines[block.end]!.end;
    const endsNl = text.slice(from, to).endsWith('\n');
    const body = inBlock.length ? trustBlock(inBlock, nl) : '';
    edits.push([from, to, endsNl || !body ? body : body.slice(0, -nl.length)]);
  } else if (inBlock.length) {
    const sep = text.length === 0 ? '' : text.endsWith('\n') ? nl : nl + nl;
    edits.push([text.length, text.length, sep + trustBlock(inBlock, nl)]);
  }
  const out = verifiedEdit(text, edits, expected);
  if ('refused' in out) {
    // Most often `hooks = { … }` or `state = { … }`: an inline table cannot take a [hooks.state."…"] table.
    return { blocker: `hooks.state is written in a form sleds cannot add its [hooks.state."…"] tables to, such as an inline table (${out.refused})` };
  }
  return { text: out.text, edited, foreign };
}

/**
 * config.toml without sleds' block, with the trusted_hash lines sleds changed given back. Throws TomlSyntaxError
 * when the file is not TOML, and an Error when the result would not read back as the user's values alone.
 */
export function removeTrust(text: string, state: CodexState | null): string {
  const doc = new TomlText(text);
  const block = doc.block(isStart, isEnd);
  const theirs = userTables(doc, block);
  const current = stateTable(doc.model) ?? {};
  const expected = cloneTable(doc.model);
  const expectedState = tableAt(expected, ['hooks', 'state']);
  const edits: TextEdit[] = [];
  const ours = new Map((state?.hooks ?? []).map((h) => [h.key, h.hash]));
  if (block) {
    let from = doc.lines[block.start]!.start;
    const to = doc.lines[block.end]!.end;
    // The blank line sleds put before its block.
    const before = text.slice(0, from);
    if (/\n\r?\n$/.test(before)) from -= before.endsWith('\r\n') ? 2 : 1;
    edits.push([from, to, '']);
    for (const k of Object.keys(stateTable(block.model) ?? {})) delete expectedState?.[k];
  } else {
    // The markers are gone (something rewrote the file): drop tables that hold nothing but sleds' own hash.
    for (const [key, t] of theirs) {
      const v = current[key];
      if (ours.get(key) === undefined || hashOf(v) !== ours.get(key) || !isTable(v) || Object.keys(v).length !== 1) continue;
      if (state?.configToml.edited.some((e) => e.key === key)) continue;
      edits.push([doc.lines[t.header]!.start, doc.lines[t.end - 1]!.end, '']);
      delete expectedState?.[key];
    }
  }
  for (const e of state?.configToml.edited ?? []) {
    const t = theirs.get(e.key);
    if (!t || t.hashLine === null || hashOf(current[e.key]) !== ours.get(e.key)) continue;
    const l = doc.lines[t.hashLine]!;
    edits.push([l.start, l.end, e.line ?? '']);
    const table = expectedState?.[e.key];
    if (!isTable(table)) continue;
    if (e.line === null) delete table.trusted_hash;
    else table.trusted_hash = new TomlText(e.line).model.trusted_hash;
  }
  const out = verifiedEdit(text, edits, expected);
  if ('refused' in out) throw new Error(`sleds' trust entries cannot be taken out without changing other values (${out.refused})`);
  return out.text;
}
