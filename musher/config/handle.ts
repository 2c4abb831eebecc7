import { readFileSync } from 'node:fs';
import { homedir, userInfo } from 'node:os';
import { parseDocument } from 'yaml';
import { HandleSchema } from '../../core/handoff/header.js';
import { resolvePaths } from '../../core/paths.js';
import { writePrivateFileSync } from '../fs-atomic.js';
import { configFilePath } from './load.js';

/**
 * Who this seat is: its handle, as `.sleds/roster.yml` and hand-offs spell it. One function for every process (the
 * CLI, musher's hand-offs, walls, gateway): SLEDS_SEAT (an override, for tests and one-off commands), else
 * `handle:` in the user's config.yml (what `sleds keys init --handle` writes), else the OS user; lower-cased.
 * Read each time it is asked (a small file), so a handle set while musher runs is used at its next hand-off.
 *
 * `handle:` is read on its own, not through loadConfig: a typo elsewhere in config.yml puts the upstreams and
 * binaries back on their defaults, but must not quietly make this seat somebody else.
 */

type Env = Record<string, string | undefined>;

export type HandleSource = 'SLEDS_SEAT' | 'config.yml' | 'OS user';

export interface SeatIdentity {
  /** null when none of the three is a valid handle. */
  handle: string | null;
  source: HandleSource | null;
  /** config.yml's path (whether or not it exists). */
  file: string;
  /** One line when config.yml names a handle that is not one. */
  problem: string | null;
}

export function isHandle(raw: string): boolean {
  return HandleSchema.safeParse(raw).success;
}

function osUser(): string | null {
  try {
    return userInfo().username;
  } catch {
    return null; // no passwd entry
  }
}

function valid(raw: string | null | undefined): string | null {
  const h = (raw ?? '').trim().toLowerCase();
  return h !== '' && isHandle(h) ? h : null;
}

/** `handle:` in config.yml: the value, '' when it names none, or a problem. */
function configuredHandle(file: string): { value: string | null; problem: string | null } {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    // No config.yml (or unreadable): it names no handle, which is not a problem.
    return { value: null, problem: null };
  }
  const doc = parseDocument(text);
  if (doc.errors.length > 0) return { value: null, problem: `${file} does not parse, so its handle: is not read` };
  const raw: unknown = doc.get('handle');
  if (raw === undefined || raw === null) return { value: null, problem: null };
  const h = typeof raw === 'string' || typeof raw === 'number' ? valid(String(raw)) : null;
  return h ? { value: h, problem: null } : { value: null, problem: `${file}: handle: ${JSON.stringify(raw)} is not a handle (letters, digits, '.', '_' or '-')` };
}

export function seatIdentity(env: Env = process.env, home: string = homedir(), user: string | null = osUser()): SeatIdentity {
  const file = configFilePath(resolvePaths(env, home).configDir);
  const fromEnv = valid(env.SLEDS_SEAT);
  const cfg = configuredHandle(file);
  if (fromEnv) return { handle: fromEnv, source: 'SLEDS_SEAT', file, problem: cfg.problem };
  if (cfg.value) return { handle: cfg.value, source: 'config.yml', file, problem: null };
  const fromOs = valid(user);
  return { handle: fromOs, source: fromOs ? 'OS user' : null, file, problem: cfg.problem };
}

/** This seat's handle (see seatIdentity); null when there is none. */
export function seatHandle(env: Env = process.env, home: string = homedir()): string | null {
  return seatIdentity(env, home).handle;
}

/**
 * Sets `handle:` in config.yml, keeping the rest of the file (its comments, order and other keys) as it is.
 * Throws a one-line Error when the file does not parse (the user must fix it first).
 */
export function writeHandle(env: Env, home: string, handle: string): string {
  const file = configFilePath(resolvePaths(env, home).configDir);
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw new Error(`cannot read ${file} (${(e as Error).message})`);
  }
  const doc = parseDocument(text);
  if (doc.errors.length > 0) throw new Error(`${file} does not parse (${doc.errors[0]!.message.split('\n')[0]}) — fix it, then run this again`);
  const data: unknown = doc.toJS();
  if (data !== null && data !== undefined && (typeof data !== 'object' || Array.isArray(data))) throw new Error(`${file} is not a mapping — fix it, then run this again`);
  let out: string;
  const line = /^handle:.*$/m;
  if (doc.get('handle') !== undefined && line.test(text)) out = text.replace(line, `handle: ${handle}`); // in place, comments and all
  else out = `${text}${text === '' || text.endsWith('\n') ? '' : '\n'}handle: ${handle}\n`;
  writePrivateFileSync(file, out);
  return file;
}
