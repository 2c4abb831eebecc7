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
 * The files an installer touches, read and written the way a careful installer should: a JSON config parsed
 * strictly, kept in its own style (indent, final newline, line endings), written atomically next to the real file
 * (following a symlink, keeping the mode) and backed up before the first change; and the shell words of a hook or
 * statusLine command, to tell sleds' own from the user's.
 */

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

export function samePath(a: string, b: string): boolean {
  if (resolve(a) === resolve(b)) return true;
  try {
    return realpathSync(a) === realpathSync(b);
  } catch {
    // one of them is not there: not the same path
    return false;
  }
}

/** POSIX shell single-quoting: 'it'\''s'. */
export function shQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
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

