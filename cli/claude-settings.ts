import { createHash, randomBytes } from 'node:crypto';
import {
  chmodSync,
  closeSync,
  constants as fsConstants,
  copyFileSync,
  existsSync,
  fsyncSync,
  lstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  realpathSync,
  renameSync,
  statSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';

/**
 * Claude Code's user settings.json, read and written the way a careful installer should: parse strictly, keep the
 * file's own style (indent, final newline, line endings), write atomically next to the real file (following a
 * symlink, keeping the mode), and back it up before the first change.
 */

export const PLUGIN_ID = 'sleds@sleds-local';
/** The plugin's id before it took the product's name; sleds install removes it so its hooks never run twice. */
export const LEGACY_PLUGIN_IDS = ['sled@sleds-local'];
export const MARKETPLACE_NAME = 'sleds-local';

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
export type JsonObject = { [k: string]: Json };

export class SettingsError extends Error {
  constructor(
    message: string,
    readonly fix: string,
  ) {
    super(message);
  }
}

export interface SettingsFile {
  /** The path as configured: <claude config dir>/settings.json. */
  path: string;
  exists: boolean;
  /** The file's bytes as read (null when it does not exist). */
  text: string | null;
  data: JsonObject;
  indent: string;
  trailingNewline: boolean;
  crlf: boolean;
}

export function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function sha256(text: string | null): string | null {
  return text === null ? null : createHash('sha256').update(text).digest('hex');
}

export function readSettings(path: string): SettingsFile {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { path, exists: false, text: null, data: {}, indent: '  ', trailingNewline: true, crlf: false };
    throw new SettingsError(`cannot read ${path} (${code ?? (e as Error).message})`, 'check its permissions, then run this again');
  }
  let data: unknown;
  const body = text.replace(/^\uFEFF/, '');
  if (body.trim() === '') data = {};
  else {
    try {
      data = JSON.parse(body);
    } catch (e) {
      throw new SettingsError(`${path} is not valid JSON (${(e as Error).message})`, 'fix it or move it away, then run this again');
    }
  }
  if (!isObject(data)) throw new SettingsError(`${path} does not hold a JSON object`, 'fix it or move it away, then run this again');
  const m = /\n([ \t]+)\S/.exec(body);
  const compact = !m && body.trim().length > 2 && !body.trim().includes('\n');
  return {
    path,
    exists: true,
    text,
    data,
    indent: m ? m[1]! : compact ? '' : '  ',
    trailingNewline: body.trim() === '' ? true : /\n$/.test(body),
    crlf: body.includes('\r\n'),
  };
}

export function serializeSettings(data: JsonObject, style: Pick<SettingsFile, 'indent' | 'trailingNewline' | 'crlf'>): string {
  let out = style.indent ? JSON.stringify(data, null, style.indent) : JSON.stringify(data);
  if (style.trailingNewline) out += '\n';
  if (style.crlf) out = out.replace(/\r?\n/g, '\r\n');
  return out;
}

/** Where writes to `path` must land: the target of a symlink (dotfile managers), else the path itself. */
function writeTarget(path: string): string {
  try {
    if (lstatSync(path).isSymbolicLink()) return realpathSync(path);
  } catch {
    // does not exist yet
  }
  return resolve(path);
}

/** Writes through a temp file in the same folder, fsync, rename. Keeps an existing file's mode. */
export function writeFileAtomic(path: string, content: string, newFileMode = 0o644): void {
  const target = writeTarget(path);
  const dir = dirname(target);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  let mode: number | null = null;
  try {
    mode = statSync(target).mode & 0o7777;
  } catch {
    // new file
  }
  const tmp = join(dir, `.${basename(target)}.sleds-${process.pid}-${randomBytes(4).toString('hex')}.tmp`);
  const fd = openSync(tmp, fsConstants.O_WRONLY | fsConstants.O_CREAT | fsConstants.O_EXCL, mode ?? newFileMode);
  try {
    writeSync(fd, content);
    fsyncSync(fd);
  } catch (e) {
    closeSync(fd);
    unlinkSync(tmp);
    throw e;
  }
  closeSync(fd);
  try {
    chmodSync(tmp, mode ?? newFileMode);
    renameSync(tmp, target);
  } catch (e) {
    try {
      unlinkSync(tmp);
    } catch {
      // already gone
    }
    throw e;
  }
}

/** Copies settings.json to settings.json.sleds-backup-<UTC timestamp> (never overwriting), returns its path. */
export function backupFile(path: string, now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
  for (let i = 0; ; i++) {
    const dest = `${path}.sleds-backup-${stamp}${i ? `-${i}` : ''}`;
    if (existsSync(dest)) continue;
    try {
      copyFileSync(path, dest, fsConstants.COPYFILE_EXCL);
      return dest;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
  }
}

export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((v, i) => deepEqual(v, b[i]));
  }
  if (isObject(a) && isObject(b)) {
    const ka = Object.keys(a);
    if (ka.length !== Object.keys(b).length) return false;
    return ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && deepEqual(a[k], b[k]));
  }
  return false;
}

export function clone<T extends Json>(v: T): T {
  return JSON.parse(JSON.stringify(v)) as T;
}

/** The same object with its top-level keys in `order`'s order where they appear there, the others after. */
export function orderKeysLike(data: JsonObject, order: string[]): JsonObject {
  const out: JsonObject = {};
  for (const k of order) if (Object.prototype.hasOwnProperty.call(data, k)) out[k] = data[k]!;
  for (const k of Object.keys(data)) if (!Object.prototype.hasOwnProperty.call(out, k)) out[k] = data[k]!;
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// The plugin keys, exactly as `claude plugin marketplace add <dir>` + `claude plugin install sleds@sleds-local` write
// them (checked against Claude Code 2.1.328).

export function marketplaceEntry(root: string): JsonObject {
  return { source: { source: 'directory', path: root } };
}

export function marketplacePath(data: JsonObject): string | null {
  const m = isObject(data.extraKnownMarketplaces) ? data.extraKnownMarketplaces[MARKETPLACE_NAME] : undefined;
  if (!isObject(m) || !isObject(m.source)) return null;
  return typeof m.source.path === 'string' ? m.source.path : null;
}

export function pluginEnabled(data: JsonObject): boolean | null {
  const e = isObject(data.enabledPlugins) ? data.enabledPlugins[PLUGIN_ID] : undefined;
  return e === undefined ? null : e === true;
}

export function samePath(a: string, b: string): boolean {
  if (resolve(a) === resolve(b)) return true;
  try {
    return realpathSync(a) === realpathSync(b);
  } catch {
    // A path that does not resolve (gone, or a dangling link) is not the same file.
    return false;
  }
}

/** Sets the two plugin keys; returns an error line if the containers are there but are not objects. */
export function setPluginKeys(data: JsonObject, root: string): string | null {
  for (const k of ['extraKnownMarketplaces', 'enabledPlugins']) {
    if (data[k] !== undefined && !isObject(data[k])) return `settings.json has a "${k}" that is not an object — fix it, then run sleds install again`;
  }
  const markets = (data.extraKnownMarketplaces ??= {}) as JsonObject;
  if (!deepEqual(markets[MARKETPLACE_NAME], marketplaceEntry(root))) markets[MARKETPLACE_NAME] = marketplaceEntry(root);
  const enabled = (data.enabledPlugins ??= {}) as JsonObject;
  enabled[PLUGIN_ID] = true;
  return null;
}

/** Drops the legacy plugin ids from enabledPlugins; the ids it dropped. */
export function dropLegacyPluginKeys(data: JsonObject): string[] {
  const enabled = data.enabledPlugins;
  if (!isObject(enabled)) return [];
  const dropped = LEGACY_PLUGIN_IDS.filter((id) => Object.prototype.hasOwnProperty.call(enabled, id));
  for (const id of dropped) delete enabled[id];
  return dropped;
}

/** Removes the two plugin keys; drops a container left empty unless `keepEmpty` says it was there before. */
export function removePluginKeys(data: JsonObject, keepEmpty: { enabledPlugins: boolean; extraKnownMarketplaces: boolean }): void {
  const drop = (container: 'enabledPlugins' | 'extraKnownMarketplaces', key: string): void => {
    const c = data[container];
    if (!isObject(c)) return;
    delete c[key];
    if (Object.keys(c).length === 0 && !keepEmpty[container]) delete data[container];
  };
  drop('enabledPlugins', PLUGIN_ID);
  drop('extraKnownMarketplaces', MARKETPLACE_NAME);
}

// ---------------------------------------------------------------------------------------------------------------
// The statusLine command.

/** POSIX shell single-quoting: 'it'\''s'. */
export function shQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

function shWord(w: string): string {
  return /^[A-Za-z0-9_=:,.-]+$/.test(w) ? w : shQuote(w);
}

/**
 * What runs sleds' statusline: the bundled hot-path entry `dist/statusline.cjs` when the build has it (one file,
 * node builtins only, like the hooks' dist/hook.cjs), else `dist/cli/main.js statusline`.
 */
export function statusLineRunner(cliMain: string): string[] {
  const bundle = join(dirname(dirname(cliMain)), 'statusline.cjs');
  return existsSync(bundle) ? [bundle] : [cliMain, 'statusline'];
}

export function statusLineCommand(nodePath: string, runner: string[], then: string | null): string {
  const base = [nodePath, ...runner].map(shWord).join(' ');
  return then ? `${base} --then ${shQuote(then)}` : base;
}

/**
 * Splits a simple shell command into words (single quotes, double quotes, backslashes). Returns null for anything
 * that is more than one simple command (operators, substitutions, unbalanced quotes): that is never ours.
 */
export function shellWords(cmd: string): string[] | null {
  const words: string[] = [];
  let cur = '';
  let inWord = false;
  for (let i = 0; i < cmd.length; i++) {
    const c = cmd[i]!;
    if (c === ' ' || c === '\t') {
      if (inWord) words.push(cur);
      cur = '';
      inWord = false;
      continue;
    }
    inWord = true;
    if (c === "'") {
      const end = cmd.indexOf("'", i + 1);
      if (end < 0) return null;
      cur += cmd.slice(i + 1, end);
      i = end;
    } else if (c === '"') {
      let j = i + 1;
      for (; j < cmd.length && cmd[j] !== '"'; j++) {
        const d = cmd[j]!;
        if (d === '$' || d === '`') return null;
        if (d === '\\' && j + 1 < cmd.length && '"\\$`'.includes(cmd[j + 1]!)) j++;
        cur += cmd[j];
      }
      if (j >= cmd.length) return null;
      i = j;
    } else if (c === '\\') {
      if (i + 1 >= cmd.length) return null;
      cur += cmd[++i];
    } else if (';&|<>()$`\n*?[]{}~#'.includes(c)) {
      return null;
    } else cur += c;
  }
  if (inWord) words.push(cur);
  return words;
}

/** Whether `path` is `rel` inside a sleds package (this one, or another copy: an older install, an npx cache). */
function isSledsFile(path: string, rel: string, cliMain: string | null): boolean {
  if (!path.endsWith(`/${rel}`)) return false;
  const root = path.slice(0, -rel.length - 1);
  if (cliMain && samePath(root, dirname(dirname(dirname(cliMain))))) return true;
  try {
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { name?: unknown };
    return pkg.name === 'sleds';
  } catch {
    // A copy that is gone (an old npx cache): judge by its path.
    return /(^|\/)sleds$/.test(root);
  }
}

export interface SledsStatusLine {
  /** What runs sleds, before any --then: [node, statusline.cjs], [node, main.js, statusline], [sleds, statusline]… */
  runner: string[];
  then: string | null;
}

const NODE = /(^|\/)node(js)?\d*$/;

/** Whether a statusLine command is sleds' own, and the command it chains with --then. */
export function parseSledsStatusLine(command: unknown, cliMain: string | null): SledsStatusLine | null {
  if (typeof command !== 'string') return null;
  const w = shellWords(command.trim());
  if (!w) return null;
  let then: string | null = null;
  let core = w;
  if (w.length >= 2 && w[w.length - 2] === '--then') {
    then = w[w.length - 1]!;
    core = w.slice(0, -2);
  }
  const [a, b, c] = core;
  const ours =
    (core.length === 2 && NODE.test(a!) && isSledsFile(b!, 'dist/statusline.cjs', cliMain)) ||
    (core.length === 3 && NODE.test(a!) && c === 'statusline' && isSledsFile(b!, 'dist/cli/main.js', cliMain)) ||
    (core.length === 2 && /(^|\/)sleds$/.test(a!) && b === 'statusline') ||
    (core[0] === 'npx' && core[core.length - 1] === 'statusline' && core.slice(1, -1).filter((x) => !x.startsWith('-')).join(' ') === 'sleds');
  return ours ? { runner: core, then } : null;
}

/** The statusLine object sleds writes. A `refreshInterval` the user had is kept (their chained command may want it). */
export function sledsStatusLine(nodePath: string, cliMain: string, then: string | null, previous: unknown): JsonObject {
  const out: JsonObject = { type: 'command', command: statusLineCommand(nodePath, statusLineRunner(cliMain), then), padding: 0 };
  if (isObject(previous) && typeof previous.refreshInterval === 'number') out.refreshInterval = previous.refreshInterval;
  return out;
}

/**
 * The files the plugin's hooks run, read from <marketplace>/plugin/hooks/hooks.json with ${CLAUDE_PLUGIN_ROOT}
 * standing for <marketplace>/plugin (a directory marketplace is read in place), and those that are missing.
 */
export function pluginHookFiles(marketRoot: string): { files: string[]; missing: string[]; error: string | null } {
  const pluginRoot = join(marketRoot, 'plugin');
  let text: string;
  try {
    text = readFileSync(join(pluginRoot, 'hooks', 'hooks.json'), 'utf8');
  } catch {
    return { files: [], missing: [], error: `${join(pluginRoot, 'hooks', 'hooks.json')} is missing` };
  }
  let hooks: unknown;
  try {
    hooks = JSON.parse(text);
  } catch (e) {
    return { files: [], missing: [], error: `${join(pluginRoot, 'hooks', 'hooks.json')} is not valid JSON (${(e as Error).message})` };
  }
  const files = new Set<string>();
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) v.forEach(walk);
    else if (isObject(v)) {
      if (typeof v.command === 'string') {
        for (const m of v.command.matchAll(/\$\{CLAUDE_PLUGIN_ROOT\}([^"'\s]*)/g)) files.add(resolve(pluginRoot + (m[1] ?? '')));
      }
      Object.values(v).forEach(walk);
    }
  };
  walk(hooks);
  const list = [...files];
  return { files: list, missing: list.filter((f) => !existsSync(f)), error: null };
}
