import { createHash } from 'node:crypto';
import { existsSync, readFileSync, realpathSync, statSync, unlinkSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import {
  backupFile,
  clone,
  deepEqual,
  isObject,
  readSettings,
  SettingsError,
  serializeSettings,
  sha256,
  shellWords,
  shQuote,
  writeFileAtomic,
  type Json,
  type JsonObject,
  type SettingsFile,
} from './claude-settings.js';
import { lastLine, runFile } from './install-claude.js';
import { findCliBinary } from '../musher/config/cli-settings.js';
import type { Reporter } from './install-report.js';
import type { CodexState, InstallState } from './install-state.js';
import { doctorCodexMcp, installCodexMcp, withoutCodexMcp } from './install-codex-mcp.js';

/**
 * Codex CLI, wired like Claude Code (shared/facts/codex-cli.md §1):
 *
 * - hooks in $CODEX_HOME/hooks.json (the same JSON form as Claude Code's), each running the same hook client as the
 *   Claude plugin: `'<node>' '<root>/dist/hook.cjs' <Event> --harness codex`. The user's own hooks stay; sleds adds
 *   one group per event after theirs.
 * - the trust entries Codex needs before it runs a hook at all (untrusted hooks are skipped without a word):
 *   `[hooks.state."<realpath CODEX_HOME>/hooks.json:<event_snake>:<group>:<handler>"] trusted_hash = "sha256:…"` in
 *   $CODEX_HOME/config.toml, in one block between two marker comments at the end of the file.
 * - backups of both files before the first change, and what was changed in install-state.json (`codex`), so that
 *   uninstall gives both files back byte for byte when nothing else changed in them.
 *
 * There is no TOML library here: config.toml is scanned (not parsed into values) just enough to find table headers,
 * `hooks.state` definitions and our block, and is only ever appended to or edited line by line, so the user's
 * formatting and comments stay as they are.
 */

type Env = Record<string, string | undefined>;

// ---------------------------------------------------------------------------------------------------------------
// The hooks sleds wires into Codex.

export interface CodexHookSpec {
  event: string;
  /** Seconds. SessionEnd is capped by Codex at 3 s (it warns on every start when asked for more). */
  timeout: number;
}

/**
 * The events sleds listens to in Codex: the Claude plugin's, minus what Codex does not have (Notification,
 * StopFailure). In `codex exec`, UserPromptSubmit comes before any model request and can block it.
 */
export const CODEX_HOOKS: readonly CodexHookSpec[] = [
  { event: 'SessionStart', timeout: 10 },
  { event: 'UserPromptSubmit', timeout: 10 },
  { event: 'PostToolUse', timeout: 10 },
  { event: 'PreCompact', timeout: 10 },
  { event: 'Stop', timeout: 10 },
  { event: 'SessionEnd', timeout: 3 },
];

/** Events whose timeout Codex 0.169 defaults to 1 s and caps at 3 s (measured with app-server hooks/list). */
const SHORT_TIMEOUT_EVENTS = new Set(['SessionEnd', 'Interrupt']);

/** What a Codex user types instead of `/sled …`: the TUI answers any unknown `/word` itself, before hooks run. */
export const CODEX_USAGE = "in Codex, type 'sled status' or 'sled 5' without the slash (Codex rejects unknown /commands before any hook sees them)";

/** $CODEX_HOME, else ~/.codex (as given: not resolved). */
export function codexHomeDir(env: Env, home: string): string {
  return env.CODEX_HOME ? resolve(env.CODEX_HOME) : join(home, '.codex');
}

/** The directory as Codex itself names it in trust keys: it canonicalises CODEX_HOME (symlinks, `./`, trailing /). */
export function canonicalCodexHome(dir: string): string {
  try {
    return realpathSync(dir);
  } catch {
    // Not there yet: canonicalise the nearest existing parent.
    const parent = dirname(dir);
    if (parent === dir) return dir;
    return join(canonicalCodexHome(parent), basename(dir));
  }
}

export function codexHookCommand(nodePath: string, root: string, event: string): string {
  return `${shQuote(nodePath)} ${shQuote(join(root, 'dist', 'hook.cjs'))} ${event} --harness codex`;
}

const NODE = /(^|\/)node(js)?\d*$/;

/** Whether `path` is `rel` inside a sleds package (this one or another copy). */
function isSledsFile(path: string, rel: string, root: string | null): boolean {
  if (!path.endsWith(`/${rel}`)) return false;
  const pkgRoot = path.slice(0, -rel.length - 1);
  if (root && samePathLoose(pkgRoot, root)) return true;
  try {
    return (JSON.parse(readFileSync(join(pkgRoot, 'package.json'), 'utf8')) as { name?: unknown }).name === 'sleds';
  } catch {
    // No readable package.json: judge by the folder's name.
    return /(^|\/)sleds$/.test(pkgRoot);
  }
}

function samePathLoose(a: string, b: string): boolean {
  if (resolve(a) === resolve(b)) return true;
  try {
    return realpathSync(a) === realpathSync(b);
  } catch {
    // A path that does not resolve (gone, or a dangling link) is not the same file.
    return false;
  }
}

export interface SledsCodexHook {
  event: string;
  /** The files the command runs (node, hook.cjs / main.js), for a doctor check. */
  files: string[];
}

/** Whether a hook command is sleds' own Codex hook: `<node> <sleds>/dist/hook.cjs <Event> --harness codex` (or main.js hook). */
export function parseSledsCodexHook(command: unknown, root: string | null): SledsCodexHook | null {
  if (typeof command !== 'string') return null;
  const w = shellWords(command.trim());
  if (!w || w.length < 4) return null;
  const h = w.indexOf('--harness');
  if (h < 0 || w[h + 1] !== 'codex' || h + 2 !== w.length) return null;
  const core = w.slice(0, h);
  if (core.length === 3 && NODE.test(core[0]!) && isSledsFile(core[1]!, 'dist/hook.cjs', root)) return { event: core[2]!, files: core.slice(0, 2) };
  if (core.length === 4 && NODE.test(core[0]!) && core[2] === 'hook' && isSledsFile(core[1]!, 'dist/cli/main.js', root)) return { event: core[3]!, files: core.slice(0, 2) };
  if (core.length === 3 && /(^|\/)sleds$/.test(core[0]!) && core[1] === 'hook') return { event: core[2]!, files: [] };
  return null;
}

// ---------------------------------------------------------------------------------------------------------------
// Trust: the hash recipe (facts §1, checked against `codex app-server` hooks/list on 0.169.0).

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
// Finding Codex.

export interface CodexLookup {
  bin: string | null;
  /** Where the binary came from, or why there is none. */
  how: string;
  /** $CODEX_HOME or ~/.codex, as configured. */
  home: string;
  homeExists: boolean;
  /** A codex binary, or an existing Codex home: worth wiring. */
  present: boolean;
}


/** SLEDS_CODEX_BIN if set, else config.yml's binaries.codex (and only it), else `codex` on PATH; and the Codex home. */
export function findCodex(env: Env, home: string): CodexLookup {
  const dir = codexHomeDir(env, home);
  const homeExists = (() => {
    try {
      return statSync(dir).isDirectory();
    } catch {
      // No such folder (or not readable): Codex has no home yet.
      return false;
    }
  })();
  const { bin, how } = findCliBinary(env, home, 'codex');
  return { bin, how, home: dir, homeExists, present: bin !== null || homeExists };
}

export async function codexVersion(bin: string, env: Env): Promise<string | null> {
  const r = await runFile(bin, ['--version'], env, 30_000);
  if (!r.ok) return null;
  const m = /\d+\.\d+\.\d+\S*/.exec(r.stdout);
  return m ? m[0] : lastLine(r.stdout) || null;
}

// ---------------------------------------------------------------------------------------------------------------
// config.toml, scanned line by line.

export class TomlScanError extends Error {}

export interface TomlLine {
  /** Byte offsets (string indices) of the logical line: a multi-line value makes it span several lines. */
  start: number;
  end: number;
  kind: 'header' | 'kv' | 'other';
  /** header: the table path; kv: the key path relative to its table. */
  path?: string[];
  arrayTable?: boolean;
  /** kv: the raw value text. */
  value?: string;
  /** kv: the table path it belongs to. */
  table?: string[];
}

/** Splits a TOML document into logical lines (headers, key/values, comments and blanks). Throws TomlScanError. */
export function scanToml(text: string): TomlLine[] {
  const lines: TomlLine[] = [];
  let i = 0;
  const n = text.length;
  let table: string[] = [];
  const fail = (what: string): never => {
    const line = text.slice(0, i).split('\n').length;
    throw new TomlScanError(`line ${line}: ${what}`);
  };
  const skipWs = () => {
    while (i < n && (text[i] === ' ' || text[i] === '\t')) i++;
  };
  const toEol = () => {
    while (i < n && text[i] !== '\n') i++;
    if (i < n) i++;
  };
  const restOfLine = () => {
    skipWs();
    if (i < n && text[i] === '#') toEol();
    else if (i < n && text[i] === '\r' && text[i + 1] === '\n') i += 2;
    else if (i < n && text[i] === '\n') i++;
    else if (i < n) fail('unexpected text after a value');
  };
  const basic = (): string => {
    // at the opening "
    i++;
    let out = '';
    while (i < n && text[i] !== '"') {
      if (text[i] === '\n') fail('unterminated string');
      if (text[i] === '\\') {
        const c = text[i + 1];
        const simple: Record<string, string> = { '"': '"', '\\': '\\', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', e: '\u001b' };
        if (c !== undefined && c in simple) {
          out += simple[c];
          i += 2;
        } else if (c === 'u' || c === 'U') {
          const len = c === 'u' ? 4 : 8;
          const hex = text.slice(i + 2, i + 2 + len);
          if (!/^[0-9a-fA-F]+$/.test(hex) || hex.length !== len) fail('bad unicode escape');
          out += String.fromCodePoint(parseInt(hex, 16));
          i += 2 + len;
        } else if (c === 'x') {
          const hex = text.slice(i + 2, i + 4);
          if (!/^[0-9a-fA-F]{2}$/.test(hex)) fail('bad \\x escape');
          out += String.fromCharCode(parseInt(hex, 16));
          i += 4;
        } else fail('bad escape');
      } else out += text[i++];
    }
    if (i >= n) fail('unterminated string');
    i++;
    return out;
  };
  const literal = (): string => {
    i++;
    const start = i;
    while (i < n && text[i] !== "'") {
      if (text[i] === '\n') fail('unterminated string');
      i++;
    }
    if (i >= n) fail('unterminated string');
    return text.slice(start, i++);
  };
  const key = (stop: string): string[] => {
    const parts: string[] = [];
    for (;;) {
      skipWs();
      const c = text[i];
      if (c === '"') parts.push(basic());
      else if (c === "'") parts.push(literal());
      else {
        const m = /^[A-Za-z0-9_-]+/.exec(text.slice(i, i + 256));
        if (!m) fail('bad key');
        parts.push(m![0]);
        i += m![0].length;
      }
      skipWs();
      if (text[i] === '.') {
        i++;
        continue;
      }
      if (!stop.includes(text[i] ?? '')) fail(`expected ${stop[0]}`);
      return parts;
    }
  };
  const multiline = (q: string) => {
    i += 3;
    for (;;) {
      if (i >= n) fail('unterminated multi-line string');
      if (q === '"' && text[i] === '\\') {
        i += 2;
        continue;
      }
      if (text.startsWith(q.repeat(3), i)) {
        i += 3;
        let extra = 0;
        while (extra < 2 && text[i] === q) {
          i++;
          extra++;
        }
        return;
      }
      i++;
    }
  };
  const value = () => {
    skipWs();
    const c = text[i];
    if (c === '"') {
      if (text.startsWith('"""', i)) multiline('"');
      else basic();
    } else if (c === "'") {
      if (text.startsWith("'''", i)) multiline("'");
      else literal();
    } else if (c === '[' || c === '{') {
      const close = c === '[' ? ']' : '}';
      i++;
      for (;;) {
        while (i < n && /[\s,]/.test(text[i]!)) i++;
        if (i >= n) fail(`unterminated ${c}`);
        if (text[i] === '#') {
          toEol();
          continue;
        }
        if (text[i] === close) {
          i++;
          return;
        }
        if (c === '{') {
          key('=');
          i++;
        }
        value();
      }
    } else {
      const m = /^[^\s,\]}#]+/.exec(text.slice(i, i + 512));
      if (!m) fail('missing value');
      i += m![0].length;
      // A date-time may use a space instead of the T: 1979-05-27 07:32:00Z.
      const t = /^ \d{2}:\d{2}[^\s,\]}#]*/.exec(text.slice(i, i + 64));
      if (/^\d{4}-\d{2}-\d{2}$/.test(m![0]) && t) i += t[0].length;
    }
  };

  while (i < n) {
    const start = i;
    skipWs();
    const c = text[i];
    if (c === undefined || c === '\n' || c === '#' || (c === '\r' && text[i + 1] === '\n')) {
      toEol();
      lines.push({ start, end: i, kind: 'other' });
    } else if (c === '[') {
      const arrayTable = text[i + 1] === '[';
      i += arrayTable ? 2 : 1;
      const path = key(']');
      i++;
      if (arrayTable) {
        if (text[i] !== ']') fail('expected ]]');
        i++;
      }
      restOfLine();
      table = path;
      lines.push({ start, end: i, kind: 'header', path, arrayTable });
    } else {
      const path = key('=');
      i++;
      skipWs();
      const vStart = i;
      value();
      const v = text.slice(vStart, i);
      restOfLine();
      lines.push({ start, end: i, kind: 'kv', path, value: v, table });
    }
  }
  return lines;
}

const BLOCK_START = "# >>> sleds: Codex trusts sleds' hooks (written by 'sleds install'; 'sleds uninstall' removes it) >>>";
const BLOCK_END = '# <<< sleds <<<';

export interface HookStateTable {
  key: string;
  /** Index in lines of its header, and one past its last line (the next header, or our block's end marker). */
  header: number;
  end: number;
  /** Index of its `trusted_hash = …` line, if any, and that value when it is a plain string. */
  hashLine: number | null;
  hash: string | null;
  /** Whether it lies inside sleds' marked block. */
  inBlock: boolean;
}

export interface ConfigScan {
  lines: TomlLine[];
  tables: HookStateTable[];
  /** sleds' block: indices of the start and end marker lines. */
  block: { start: number; end: number } | null;
  /** A definition of hooks.state that sleds cannot append next to (dotted keys, inline tables, arrays of tables). */
  blocker: string | null;
}

function stringValue(raw: string | undefined): string | null {
  if (!raw) return null;
  const t = raw.trim();
  if (/^"[^"\\]*"$/.test(t) || /^'[^']*'$/.test(t)) return t.slice(1, -1);
  if (t.startsWith('"') && !t.startsWith('"""')) {
    try {
      return JSON.parse(t) as string;
    } catch {
      // Not a TOML basic string sleds can read: no value.
      return null;
    }
  }
  return null;
}

export function scanConfig(text: string): ConfigScan {
  const lines = scanToml(text);
  const lineText = (l: TomlLine) => text.slice(l.start, l.end).trim();
  let block: ConfigScan['block'] = null;
  const s = lines.findIndex((l) => l.kind === 'other' && lineText(l).startsWith('# >>> sleds'));
  if (s >= 0) {
    const e = lines.findIndex((l, j) => j > s && l.kind === 'other' && lineText(l).startsWith('# <<< sleds'));
    if (e > s) block = { start: s, end: e };
  }
  const tables: HookStateTable[] = [];
  let blocker: string | null = null;
  lines.forEach((l, j) => {
    if (l.kind === 'header') {
      const p = l.path!;
      if (p[0] === 'hooks' && l.arrayTable && (p.length === 1 || p[1] === 'state')) blocker ??= `[[${p.join('.')}]]`;
      if (p.length === 3 && p[0] === 'hooks' && p[1] === 'state' && !l.arrayTable) {
        let end = j + 1;
        while (end < lines.length && lines[end]!.kind !== 'header' && !(block && end === block.end)) end++;
        let hashLine: number | null = null;
        for (let k = j + 1; k < end; k++) if (lines[k]!.kind === 'kv' && deepEqual(lines[k]!.path, ['trusted_hash'])) hashLine = k;
        tables.push({
          key: p[2]!,
          header: j,
          end,
          hashLine,
          hash: hashLine === null ? null : stringValue(lines[hashLine]!.value),
          inBlock: block !== null && j > block.start && j < block.end,
        });
      }
    } else if (l.kind === 'kv') {
      // `hooks = {…}`, `state = …` under [hooks], `hooks.state.… = …` or `"<key>".trusted_hash = …` under [hooks.state]:
      // tables defined that way cannot take a [hooks.state."<key>"] header next to them.
      const full = [...l.table!, ...l.path!];
      const inStateTable = l.table!.length >= 3 && l.table![0] === 'hooks' && l.table![1] === 'state';
      if (full[0] === 'hooks' && !inStateTable && (full.length === 1 || full[1] === 'state')) blocker ??= `${full.join('.')} = …`;
    }
  });
  return { lines, tables, block, blocker };
}

// ---------------------------------------------------------------------------------------------------------------
// hooks.json

interface WiredHook {
  event: string;
  command: string;
  timeout: number;
  group: number;
  handler: number;
}

/** sleds' handlers in a hooks.json object: where they are and what they run. */
export function findSledsCodexHooks(data: JsonObject, root: string | null): Array<WiredHook & { parsed: SledsCodexHook; matcher?: string; statusMessage?: string; async?: boolean }> {
  const out: Array<WiredHook & { parsed: SledsCodexHook; matcher?: string; statusMessage?: string; async?: boolean }> = [];
  const hooks = data.hooks;
  if (!isObject(hooks)) return out;
  for (const [event, groups] of Object.entries(hooks)) {
    if (!Array.isArray(groups)) continue;
    groups.forEach((g, gi) => {
      if (!isObject(g) || !Array.isArray(g.hooks)) return;
      g.hooks.forEach((h, hi) => {
        if (!isObject(h)) return;
        const parsed = parseSledsCodexHook(h.command, root);
        if (!parsed) return;
        out.push({
          event,
          command: String(h.command),
          timeout: typeof h.timeout === 'number' ? h.timeout : NaN,
          group: gi,
          handler: hi,
          parsed,
          ...(typeof g.matcher === 'string' ? { matcher: g.matcher } : {}),
          ...(typeof h.statusMessage === 'string' ? { statusMessage: h.statusMessage } : {}),
          ...(typeof h.async === 'boolean' ? { async: h.async } : {}),
        });
      });
    });
  }
  return out;
}

function ourGroup(command: string, timeout: number): JsonObject {
  return { hooks: [{ type: 'command', command, timeout }] };
}

/** Removes sleds' handlers (and groups left empty by that); drops an event list or `hooks` left empty unless kept. */
function removeSledsHooks(data: JsonObject, root: string | null, keep: { hooksKey: boolean; events: string[] }): boolean {
  const hooks = data.hooks;
  if (!isObject(hooks)) return false;
  let changed = false;
  for (const event of Object.keys(hooks)) {
    const groups = hooks[event];
    if (!Array.isArray(groups)) continue;
    const next: Json[] = [];
    for (const g of groups) {
      if (!isObject(g) || !Array.isArray(g.hooks)) {
        next.push(g);
        continue;
      }
      const handlers = g.hooks.filter((h) => !(isObject(h) && parseSledsCodexHook(h.command, root)));
      if (handlers.length === g.hooks.length) next.push(g);
      else {
        changed = true;
        if (handlers.length) next.push({ ...g, hooks: handlers });
      }
    }
    if (next.length === 0 && !keep.events.includes(event)) delete hooks[event];
    else hooks[event] = next;
  }
  if (Object.keys(hooks).length === 0 && !keep.hooksKey) delete data.hooks;
  return changed;
}

// ---------------------------------------------------------------------------------------------------------------
// install

export interface CodexInstallContext {
  rep: Reporter;
  env: Env;
  home: string;
  /** This sleds package's root (realpath). */
  root: string;
  nodePath: string;
  /** The install state being built; `state.codex` is set here. */
  state: InstallState;
  /** Writes the state file when it changed. */
  persist(): void;
}

function errorMessage(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

function eol(text: string): string {
  return text.includes('\r\n') ? '\r\n' : '\n';
}

/** The desired handlers, each with where it sits in `data` after merging (data is changed in place). */
function mergeHooks(data: JsonObject, nodePath: string, root: string, hooksJsonPath: string): { wired: CodexState['hooks']; changed: boolean; error: string | null } {
  if (data.hooks !== undefined && !isObject(data.hooks)) return { wired: [], changed: false, error: `${hooksJsonPath} has a "hooks" that is not an object` };
  const hooks = (data.hooks ??= {}) as JsonObject;
  let changed = false;
  const wired: CodexState['hooks'] = [];
  for (const spec of CODEX_HOOKS) {
    const command = codexHookCommand(nodePath, root, spec.event);
    if (hooks[spec.event] !== undefined && !Array.isArray(hooks[spec.event])) return { wired: [], changed: false, error: `${hooksJsonPath}: "hooks.${spec.event}" is not a list` };
    const groups = (hooks[spec.event] ??= []) as Json[];
    // Ours already there (maybe from another node or sleds copy): bring the first one up to date, drop the others.
    let at = -1;
    for (let gi = 0; gi < groups.length; gi++) {
      const g = groups[gi];
      if (!isObject(g) || !Array.isArray(g.hooks)) continue;
      const mine = g.hooks.findIndex((h) => isObject(h) && parseSledsCodexHook(h.command, root)?.event === spec.event);
      if (mine < 0) continue;
      if (at < 0 && g.hooks.length === 1 && g.matcher === undefined) {
        at = gi;
        if (!deepEqual(g, ourGroup(command, spec.timeout))) {
          groups[gi] = ourGroup(command, spec.timeout);
          changed = true;
        }
      } else {
        g.hooks.splice(mine, 1);
        if (g.hooks.length === 0) groups.splice(gi--, 1);
        changed = true;
      }
    }
    if (at < 0) {
      groups.push(ourGroup(command, spec.timeout));
      at = groups.length - 1;
      changed = true;
    }
    wired.push({
      event: spec.event,
      command,
      timeout: spec.timeout,
      key: codexTrustKey(hooksJsonPath, spec.event, at, 0),
      hash: codexTrustHash(spec.event, undefined, { type: 'command', command, timeout: spec.timeout }),
    });
  }
  return { wired, changed, error: null };
}

function readText(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
}

/** The trust block for `entries`, in the file's line endings. */
function trustBlock(entries: Array<{ key: string; hash: string }>, nl: string): string {
  const out = [BLOCK_START];
  for (const e of entries) out.push(`[hooks.state.${JSON.stringify(e.key)}]`, `trusted_hash = ${JSON.stringify(e.hash)}`, '');
  out.push(BLOCK_END);
  return out.join(nl) + nl;
}

interface TrustPlan {
  text: string;
  edited: CodexState['configToml']['edited'];
  /** Keys trusted by a table sleds did not write (left alone). */
  foreign: string[];
}

/** config.toml with sleds' block holding exactly `wanted` (minus what foreign tables already trust). */
export function planTrust(text: string, wanted: Array<{ key: string; hash: string }>, priorEdited: CodexState['configToml']['edited']): TrustPlan | { blocker: string } {
  const scan = scanConfig(text);
  const nl = eol(text);
  const edited = priorEdited.map((e) => ({ ...e }));
  const foreign: string[] = [];
  const inBlock: Array<{ key: string; hash: string }> = [];
  // Edits of foreign tables' trusted_hash lines, as [start, end, replacement] on the original text.
  const edits: Array<[number, number, string]> = [];
  for (const w of wanted) {
    const outside = scan.tables.filter((t) => t.key === w.key && !t.inBlock);
    if (outside.length === 0) {
      inBlock.push(w);
      continue;
    }
    const t = outside[outside.length - 1]!;
    foreign.push(w.key);
    if (t.hash === w.hash) continue;
    const line = `trusted_hash = ${JSON.stringify(w.hash)}${nl}`;
    if (t.hashLine !== null) {
      const l = scan.lines[t.hashLine]!;
      if (!edited.some((e) => e.key === w.key)) edited.push({ key: w.key, line: text.slice(l.start, l.end) });
      edits.push([l.start, l.end, line]);
    } else {
      const h = scan.lines[t.header]!;
      if (!edited.some((e) => e.key === w.key)) edited.push({ key: w.key, line: null });
      let insertAt = h.end;
      let prefix = '';
      if (!text.slice(h.start, h.end).endsWith('\n')) prefix = nl;
      edits.push([insertAt, insertAt, prefix + line]);
    }
  }
  if (scan.blocker && inBlock.length) return { blocker: scan.blocker };
  // Our block: replaced in place, appended, or removed when nothing is left for it.
  if (scan.block) {
    const from = scan.lines[scan.block.start]!.start;
    const to = scan.lines[scan.block.end]!.end;
    const endsNl = /\n$/.test(text.slice(from, to));
    const body = inBlock.length ? trustBlock(inBlock, nl) : '';
    edits.push([from, to, endsNl || !body ? body : body.slice(0, -nl.length)]);
  } else if (inBlock.length) {
    const sep = text.length === 0 ? '' : text.endsWith('\n') ? nl : nl + nl;
    edits.push([text.length, text.length, sep + trustBlock(inBlock, nl)]);
  }
  edits.sort((a, b) => b[0] - a[0]);
  let out = text;
  for (const [a, b, r] of edits) out = out.slice(0, a) + r + out.slice(b);
  return { text: out, edited, foreign };
}

/** config.toml without sleds' block, with the trusted_hash lines sleds changed given back. */
export function removeTrust(text: string, state: CodexState | null): string {
  const scan = scanConfig(text);
  const edits: Array<[number, number, string]> = [];
  const ours = new Map((state?.hooks ?? []).map((h) => [h.key, h.hash]));
  if (scan.block) {
    let from = scan.lines[scan.block.start]!.start;
    const to = scan.lines[scan.block.end]!.end;
    // The blank line sleds put before its block.
    const before = text.slice(0, from);
    if (/\n\r?\n$/.test(before)) from -= before.endsWith('\r\n') ? 2 : 1;
    edits.push([from, to, '']);
  } else {
    // The markers are gone (something rewrote the file): drop tables that hold nothing but sleds' own hash.
    for (const t of scan.tables) {
      if (ours.get(t.key) === undefined || t.hash !== ours.get(t.key)) continue;
      if (state?.configToml.edited.some((e) => e.key === t.key)) continue;
      const inner = scan.lines.slice(t.header + 1, t.end).filter((l) => l.kind === 'kv');
      if (inner.length !== 1) continue;
      edits.push([scan.lines[t.header]!.start, scan.lines[t.end - 1]!.end, '']);
    }
  }
  for (const e of state?.configToml.edited ?? []) {
    const t = scan.tables.filter((x) => x.key === e.key && !x.inBlock).pop();
    if (!t || t.hashLine === null || t.hash !== ours.get(e.key)) continue;
    const l = scan.lines[t.hashLine]!;
    edits.push([l.start, l.end, e.line ?? '']);
  }
  edits.sort((a, b) => b[0] - a[0]);
  let out = text;
  for (const [a, b, r] of edits) out = out.slice(0, a) + r + out.slice(b);
  return out;
}

function newFileState(path: string, text: string | null): Omit<CodexState['configToml'], 'edited'> {
  return { path, existedBefore: text !== null, originalSha256: sha256(text), backupPath: null, backups: [] };
}

/**
 * Wires sleds into Codex when Codex is there (a binary, or its home folder). Reports one line per part and sets
 * `ctx.state.codex`. Never throws.
 */
export async function installCodex(ctx: CodexInstallContext): Promise<void> {
  const { rep, env, home, root, nodePath, state } = ctx;
  const lookup = findCodex(env, home);
  const prior = state.codex ?? null;
  if (!lookup.present) {
    rep.info('codex', `Codex CLI not found (${lookup.how}, no ${lookup.home}): not wired`, { found: false });
    state.codex ??= null;
    persistQuietly(ctx);
    return;
  }
  const codexHome = canonicalCodexHome(lookup.home);
  if (prior && !samePathLoose(prior.home, codexHome) && prior.home !== codexHome) {
    rep.fail('codex', `sleds is already wired into Codex at ${prior.home}, not ${codexHome}`, `run 'sleds uninstall' first (it undoes ${prior.home}), then install again`);
    return;
  }
  const version = lookup.bin ? await codexVersion(lookup.bin, env) : null;
  const hookBundle = join(root, 'dist', 'hook.cjs');
  if (!existsSync(hookBundle)) {
    rep.fail('codex', `${hookBundle} is missing`, `run 'npm run build' in ${root} (or reinstall sleds)`);
    return;
  }
  rep.ok(
    'codex',
    lookup.bin ? `codex ${version ?? '(version unknown)'} at ${lookup.bin}; home ${codexHome}` : `Codex home ${codexHome} (no codex binary: ${lookup.how})`,
    { bin: lookup.bin, version, home: codexHome },
  );

  const hooksPath = join(codexHome, 'hooks.json');
  const configPath = join(codexHome, 'config.toml');
  let hooksFile: SettingsFile;
  let configText: string | null;
  try {
    hooksFile = readSettings(hooksPath);
  } catch (e) {
    rep.fail('codex-hooks', errorMessage(e), e instanceof SettingsError ? e.fix : 'fix it, then run sleds install again');
    return;
  }
  try {
    configText = readText(configPath);
    if (configText !== null) scanConfig(configText);
  } catch (e) {
    const why = e instanceof TomlScanError ? `is not TOML sleds can read (${e.message})` : `cannot be read (${errorMessage(e)})`;
    rep.fail('codex-hooks', `${configPath} ${why}`, 'fix it, then run sleds install again');
    return;
  }

  const cs: CodexState = prior
    ? (JSON.parse(JSON.stringify(prior)) as CodexState)
    : {
        home: codexHome,
        bin: lookup.bin,
        version,
        hooksJson: {
          ...newFileState(hooksPath, hooksFile.text),
          hadHooksKey: hooksFile.data.hooks !== undefined,
          hadEvents: isObject(hooksFile.data.hooks) ? Object.keys(hooksFile.data.hooks) : [],
        },
        configToml: { ...newFileState(configPath, configText), edited: [] },
        hooks: [],
      };
  Object.assign(cs, { bin: lookup.bin, version });
  state.codex = cs;
  persistQuietly(ctx);

  // Both files are worked out first; the trust entries are written before the hooks, so that a Codex starting in
  // between never meets sleds' hooks untrusted (its TUI would ask the user to review them).
  const next = clone(hooksFile.data);
  const merged = mergeHooks(next, nodePath, root, hooksPath);
  if (merged.error) {
    rep.fail('codex-hooks', merged.error, 'fix it, then run sleds install again');
    return;
  }
  const text = configText ?? '';
  const plan = planTrust(
    text,
    merged.wired.map((h) => ({ key: h.key, hash: h.hash })),
    cs.configToml.edited,
  );
  cs.hooks = merged.wired;
  persistQuietly(ctx);

  // config.toml: the trust entries.
  const trustChanged = !('blocker' in plan) && plan.text !== text;
  if (trustChanged) {
    try {
      if (configText !== null) {
        const b = backupFile(configPath);
        if (cs.configToml.backups.length === 0 && cs.configToml.existedBefore) cs.configToml.backupPath = b;
        cs.configToml.backups.push(b);
      }
      cs.configToml.edited = plan.edited;
      ctx.persist();
      writeFileAtomic(configPath, plan.text, 0o600);
    } catch (e) {
      rep.fail('codex-trust', `cannot write ${configPath} (${errorMessage(e)})`, 'check its folder is writable, then run sleds install again');
      return;
    }
  }

  // hooks.json
  if (merged.changed) {
    try {
      if (hooksFile.exists) {
        const b = backupFile(hooksPath);
        if (cs.hooksJson.backups.length === 0 && cs.hooksJson.existedBefore) cs.hooksJson.backupPath = b;
        cs.hooksJson.backups.push(b);
        ctx.persist();
      }
      writeFileAtomic(hooksPath, serializeSettings(next, hooksFile));
    } catch (e) {
      rep.fail('codex-hooks', `cannot write ${hooksPath} (${errorMessage(e)})`, 'check its folder is writable, then run sleds install again');
      return;
    }
  }
  const events = CODEX_HOOKS.map((h) => h.event).join(', ');
  rep.ok('codex-hooks', merged.changed ? `Codex hooks wired in ${hooksPath} (${events})` : `Codex hooks already wired in ${hooksPath}`, {
    changed: merged.changed,
    path: hooksPath,
    events: CODEX_HOOKS.map((h) => h.event),
  });
  if ('blocker' in plan) {
    rep.warn(
      'codex-trust',
      `${configPath} defines hooks.state as ${plan.blocker}, which sleds does not edit, so Codex will not run sleds' hooks until you trust them`,
      "open codex, choose 'Trust all' in the hooks review (or /hooks), or write the entries as [hooks.state.\"…\"] tables and run sleds install again",
      { path: configPath },
    );
  } else {
    rep.ok('codex-trust', trustChanged ? `Codex trusts sleds' hooks (${configPath})` : `Codex already trusts sleds' hooks`, {
      changed: trustChanged,
      path: configPath,
      foreign: plan.foreign,
    });
  }
  installCodexMcp(rep, configPath, { nodePath, root, env });
  persistQuietly(ctx);
  rep.info('codex-usage', CODEX_USAGE);
}

/** A state file that cannot be written was reported by install.ts before Codex's turn came. */
function persistQuietly(ctx: CodexInstallContext): void {
  try {
    ctx.persist();
  } catch {
    // see above
  }
}

// ---------------------------------------------------------------------------------------------------------------
// uninstall

export interface CodexUninstallContext {
  rep: Reporter;
  env: Env;
  home: string;
  root: string | null;
  state: InstallState | null;
}

export async function uninstallCodex(ctx: CodexUninstallContext): Promise<void> {
  const { rep, env, home, root } = ctx;
  const cs = ctx.state?.codex ?? null;
  const dir = cs?.home ?? canonicalCodexHome(codexHomeDir(env, home));
  const hooksPath = cs?.hooksJson.path ?? join(dir, 'hooks.json');
  const configPath = cs?.configToml.path ?? join(dir, 'config.toml');
  if (!cs && !existsSync(hooksPath) && !existsSync(configPath)) return;

  // hooks.json
  let hooksFile: SettingsFile | null = null;
  try {
    hooksFile = readSettings(hooksPath);
  } catch (e) {
    rep.fail('codex-hooks', errorMessage(e), e instanceof SettingsError ? e.fix : 'fix it, then run sleds uninstall again');
  }
  if (hooksFile) {
    const next = clone(hooksFile.data);
    // Without a state, an event list left empty was sleds' alone.
    const removed = removeSledsHooks(next, root, { hooksKey: cs?.hooksJson.hadHooksKey ?? true, events: cs?.hooksJson.hadEvents ?? [] });
    try {
      const msg = restoreJson(hooksFile, next, cs?.hooksJson ?? null);
      if (removed || msg.changed) rep.ok('codex-hooks', `Codex hooks removed: ${msg.message}`);
      else if (hooksFile.exists) rep.ok('codex-hooks', `${hooksPath} holds no sleds hooks`);
    } catch (e) {
      rep.fail('codex-hooks', `cannot write ${hooksPath} (${errorMessage(e)})`, 'check its folder is writable, then run sleds uninstall again');
    }
  }

  // config.toml
  let text: string | null = null;
  try {
    text = readText(configPath);
  } catch (e) {
    rep.fail('codex-trust', `cannot read ${configPath} (${errorMessage(e)})`, 'check its permissions, then run sleds uninstall again');
    return;
  }
  if (text === null) return;
  let stripped: string;
  try {
    stripped = removeTrust(withoutCodexMcp(rep, text), cs);
  } catch (e) {
    rep.fail('codex-trust', `${configPath} is not TOML sleds can read (${errorMessage(e)})`, `remove the block between '${BLOCK_START.slice(0, 11)}' and '${BLOCK_END}' by hand`);
    return;
  }
  try {
    const f = cs?.configToml ?? null;
    let out = stripped;
    let message = `sleds' trust entries removed from ${configPath}`;
    if (f?.existedBefore && f.backupPath && existsSync(f.backupPath)) {
      const original = readFileSync(f.backupPath, 'utf8');
      if (sha256(original) === f.originalSha256 && original.replace(/\s+$/, '') === stripped.replace(/\s+$/, '')) {
        out = original;
        message = `${configPath} is back to exactly what it was before sleds`;
      }
    }
    if (out === text) {
      if (stripped !== text || cs) rep.ok('codex-trust', `${configPath} holds no sleds trust entries`);
      return;
    }
    if (f && !f.existedBefore && out.trim() === '') {
      unlinkSync(configPath);
      rep.ok('codex-trust', `${configPath} removed (sleds created it)`);
      return;
    }
    writeFileAtomic(configPath, out);
    rep.ok('codex-trust', message);
  } catch (e) {
    rep.fail('codex-trust', `cannot write ${configPath} (${errorMessage(e)})`, 'check its folder is writable, then run sleds uninstall again');
  }
}

function restoreJson(cur: SettingsFile, next: JsonObject, f: CodexState['hooksJson'] | null): { changed: boolean; message: string } {
  const path = cur.path;
  if (f?.existedBefore && f.backupPath && existsSync(f.backupPath)) {
    const original = readFileSync(f.backupPath, 'utf8');
    let parsed: unknown = null;
    try {
      parsed = sha256(original) === f.originalSha256 ? JSON.parse(original.replace(/^\uFEFF/, '') || '{}') : null;
    } catch {
      // A backup that does not parse is not restored: sleds' entries are taken out of the file as it is instead.
      parsed = null;
    }
    if (parsed !== null && deepEqual(parsed, next)) {
      if (cur.text !== original) {
        writeFileAtomic(path, original);
        return { changed: true, message: `${path} is back to exactly what it was before sleds` };
      }
      return { changed: false, message: `${path} is as it was before sleds` };
    }
  }
  if (f && !f.existedBefore && Object.keys(next).length === 0) {
    if (cur.exists) {
      unlinkSync(path);
      return { changed: true, message: `${path} removed (sleds created it)` };
    }
    return { changed: false, message: `${path} is gone` };
  }
  if (deepEqual(next, cur.data)) return { changed: false, message: `${path} holds nothing of sleds` };
  writeFileAtomic(path, serializeSettings(next, cur));
  return { changed: true, message: `sleds' hooks taken out of ${path}, yours untouched` };
}

// ---------------------------------------------------------------------------------------------------------------
// doctor

export async function doctorCodex(rep: Reporter, env: Env, home: string, root: string | null): Promise<void> {
  const lookup = findCodex(env, home);
  if (!lookup.present) {
    rep.info('codex', `Codex CLI not found (${lookup.how}, no ${lookup.home}): not wired`, { found: false });
    return;
  }
  const codexHome = canonicalCodexHome(lookup.home);
  if (lookup.bin) {
    const v = await codexVersion(lookup.bin, env);
    if (v) rep.ok('codex', `codex ${v} (${lookup.bin}); home ${codexHome}`, { version: v, path: lookup.bin, home: codexHome });
    else rep.fail('codex', `codex at ${lookup.bin} did not answer --version`, `run '${lookup.bin} --version' to see why, or reinstall Codex`, { path: lookup.bin, home: codexHome });
  } else rep.warn('codex', `Codex home ${codexHome}, but no codex binary (${lookup.how})`, 'install Codex, or set binaries.codex in config.yml to the codex binary (SLEDS_CODEX_BIN for one command)', { home: codexHome });

  const hooksPath = join(codexHome, 'hooks.json');
  let data: JsonObject;
  try {
    const f = readSettings(hooksPath);
    data = f.data;
  } catch (e) {
    rep.fail('codex-hooks', errorMessage(e), e instanceof SettingsError ? e.fix : 'fix it');
    return;
  }
  const found = findSledsCodexHooks(data, root);
  const missingEvents = CODEX_HOOKS.filter((s) => !found.some((f) => f.event === s.event && f.parsed.event === s.event)).map((s) => s.event);
  const missingFiles = [...new Set(found.flatMap((f) => f.parsed.files))].filter((p) => p.startsWith('/') && !existsSync(p));
  if (found.length === 0) {
    rep.fail('codex-hooks', `no sleds hooks in ${hooksPath}`, 'run sleds install');
    return;
  }
  if (missingFiles.length) rep.fail('codex-hooks', `Codex hooks run ${missingFiles[0]}, which no longer exists`, 'run sleds install again', { path: hooksPath });
  else if (missingEvents.length) rep.fail('codex-hooks', `Codex hooks miss ${missingEvents.join(', ')} in ${hooksPath}`, 'run sleds install again', { path: hooksPath });
  else rep.ok('codex-hooks', `Codex hooks wired in ${hooksPath}`, { path: hooksPath, events: CODEX_HOOKS.map((s) => s.event) });

  const configPath = join(codexHome, 'config.toml');
  let scan: ConfigScan | null = null;
  try {
    const text = readText(configPath);
    scan = scanConfig(text ?? '');
  } catch (e) {
    rep.fail('codex-trust', `${configPath} cannot be read (${errorMessage(e)})`, 'fix it, then run sleds install again');
    return;
  }
  const untrusted = found.filter((f) => {
    const key = codexTrustKey(hooksPath, f.event, f.group, f.handler);
    const want = codexTrustHash(f.event, f.matcher, {
      type: 'command',
      command: f.command,
      ...(Number.isFinite(f.timeout) ? { timeout: f.timeout } : {}),
      ...(f.async !== undefined ? { async: f.async } : {}),
      ...(f.statusMessage !== undefined ? { statusMessage: f.statusMessage } : {}),
    });
    return !scan!.tables.some((t) => t.key === key && t.hash === want);
  });
  if (untrusted.length === 0) rep.ok('codex-trust', `Codex trusts sleds' hooks (${configPath})`, { path: configPath });
  else {
    rep.fail(
      'codex-trust',
      `Codex does not trust sleds' ${untrusted.map((u) => u.event).join(', ')} hook${untrusted.length > 1 ? 's' : ''}, so it skips ${untrusted.length > 1 ? 'them' : 'it'} without a word`,
      "run sleds install again (or trust them in codex: 'Trust all' in the hooks review, or /hooks)",
      { path: configPath, untrusted: untrusted.map((u) => u.event) },
    );
  }
  doctorCodexMcp(rep, configPath);
  rep.info('codex-usage', CODEX_USAGE);
}
