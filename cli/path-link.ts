import { accessSync, chmodSync, constants, lstatSync, mkdirSync, readlinkSync, realpathSync, statSync, symlinkSync, unlinkSync } from 'node:fs';
import { delimiter, isAbsolute, join, resolve } from 'node:path';
import type { Step } from './install-report.js';
import { shellLine } from '../core/shell-quote.js';

/**
 * The `sleds` command on the user's PATH: a symlink `~/.local/bin/sleds` → this package's dist/cli/main.js (it has
 * the node shebang; node resolves the link, so the package root is found from the real file). install makes it,
 * doctor checks it, uninstall removes it — only when it is still our link: a file, or a link to anything else, is
 * someone else's and is left alone (and said so).
 */

type Env = Record<string, string | undefined>;

export const LINK_NAME = 'sleds';
/** What to add to a shell profile when ~/.local/bin is not on the PATH. */
export const PATH_LINE = 'export PATH="$HOME/.local/bin:$PATH"';
const PATH_FIX = `add this line to your shell's profile (~/.bashrc or ~/.zshrc) and open a new terminal: ${PATH_LINE}`;

export function linkDir(home: string): string {
  return join(home, '.local', 'bin');
}

function real(p: string): string | null {
  try {
    return realpathSync(p);
  } catch {
    // A path that does not resolve: no target.
    return null;
  }
}

function onPath(dir: string, env: Env): boolean {
  const want = real(dir) ?? resolve(dir);
  return (env.PATH ?? '').split(delimiter).some((d) => d !== '' && isAbsolute(d) && (real(d) ?? resolve(d)) === want);
}

/** The first `sleds` the shell would run, as PATH orders them; null when there is none. */
export function sledsOnPath(env: Env): string | null {
  for (const d of (env.PATH ?? '').split(delimiter)) {
    if (d === '' || !isAbsolute(d)) continue;
    const p = join(d, LINK_NAME);
    try {
      if (statSync(p).isFile()) {
        accessSync(p, constants.X_OK);
        return p;
      }
    } catch {
      // not here
    }
  }
  return null;
}

type Found = { kind: 'none' } | { kind: 'ours' } | { kind: 'link'; target: string } | { kind: 'other' };

function inspect(path: string, cliMain: string): Found {
  let st;
  try {
    st = lstatSync(path);
  } catch {
    // Nothing at that path.
    return { kind: 'none' };
  }
  if (!st.isSymbolicLink()) return { kind: 'other' };
  const target = readlinkSync(path);
  return real(path) === real(cliMain) || target === cliMain ? { kind: 'ours' } : { kind: 'link', target };
}

/** dist/cli/main.js as tsc writes it is not executable; a link to it must be, or the shell says "permission denied". */
function makeExecutable(file: string): void {
  const mode = statSync(file).mode & 0o777;
  const want = mode | ((mode & 0o444) >> 2);
  if (want !== mode) chmodSync(file, want);
}

export interface LinkResult {
  step: Step;
  /** The link made (or found) by this install, for uninstall; null when none of ours is there. */
  link: { path: string; target: string } | null;
}

/**
 * Makes `~/.local/bin/sleds` → `cliMain`. `previous` is the link an earlier install made (ours even if it points at
 * an older copy of sleds); anything else already at that path is left as it is.
 */
export function linkCommand(env: Env, home: string, cliMain: string, previous: { path: string; target: string } | null): LinkResult {
  const dir = linkDir(home);
  const path = join(dir, LINK_NAME);
  const visible = onPath(dir, env);
  const found = inspect(path, cliMain);
  const fromEarlierInstall = found.kind === 'link' && previous !== null && previous.path === path && previous.target === found.target;
  if (found.kind === 'other' || (found.kind === 'link' && !fromEarlierInstall)) {
    return {
      step: { id: 'command', status: 'warn', message: `${path} is not sleds' link (left as it is)`, fix: `remove it or rename it, then run 'sleds install' again`, detail: { path, onPath: visible } },
      link: null,
    };
  }
  try {
    makeExecutable(cliMain);
    if (found.kind !== 'ours') {
      mkdirSync(dir, { recursive: true });
      if (fromEarlierInstall) unlinkSync(path);
      symlinkSync(cliMain, path);
    }
  } catch (e) {
    return {
      step: { id: 'command', status: 'warn', message: `could not link the sleds command at ${path} (${(e as Error).message})`, fix: `run it as 'node ${cliMain}', or link it by hand: ln -s ${cliMain} ${path}`, detail: { path, onPath: visible } },
      link: null,
    };
  }
  const link = { path, target: cliMain };
  const what = `sleds command ${found.kind === 'ours' ? 'already linked' : 'linked'}: ${path} → ${cliMain}`;
  const detail = { path, target: cliMain, onPath: visible };
  if (!visible) return { step: { id: 'command', status: 'warn', message: `${what}, but ~/.local/bin is not on your PATH`, fix: PATH_FIX, detail }, link };
  // Another sleds earlier on the PATH would run instead of this one.
  const first = sledsOnPath(env);
  if (first && real(first) !== real(cliMain)) {
    return { step: { id: 'command', status: 'warn', message: `${what}, but ${first} comes first on your PATH and runs instead`, fix: `remove ${first}, or put ~/.local/bin before its folder in PATH`, detail }, link };
  }
  return { step: { id: 'command', status: 'ok', message: what, detail }, link };
}

/** Removes the link install made, if it is still ours (pointing where install pointed it, or at this sleds). */
export function unlinkCommand(home: string, cliMain: string, recorded: { path: string; target: string } | null): Step {
  const path = recorded?.path ?? join(linkDir(home), LINK_NAME);
  const found = inspect(path, cliMain);
  const ours = found.kind === 'ours' || (found.kind === 'link' && recorded !== null && found.target === recorded.target);
  if (found.kind === 'none') return { id: 'command', status: 'ok', message: recorded ? `sleds command already gone (${path})` : 'no sleds command to remove' };
  if (!ours) return { id: 'command', status: 'ok', message: `${path} is not sleds' link (left as it is)` };
  try {
    unlinkSync(path);
  } catch (e) {
    return { id: 'command', status: 'fail', message: `cannot remove ${path} (${(e as Error).message})`, fix: `remove it by hand: rm ${path}` };
  }
  return { id: 'command', status: 'ok', message: `sleds command removed (${path})` };
}

/** doctor: is `sleds` a command, and is it this sleds? */
export function checkCommand(env: Env, home: string, cliMain: string): Step {
  const first = sledsOnPath(env);
  const mine = real(cliMain);
  if (first) {
    const target = real(first);
    if (target === mine) return { id: 'command', status: 'ok', message: `sleds on PATH: ${first} → ${target}`, detail: { path: first, target } };
    return { id: 'command', status: 'warn', message: `sleds on PATH is ${first} (${target ?? 'unreadable'}), not this sleds (${mine ?? cliMain})`, fix: `run ${shellLine(['node', cliMain, 'install'])} to link this one, or remove ${first}`, detail: { path: first, target } };
  }
  const path = join(linkDir(home), LINK_NAME);
  if (inspect(path, cliMain).kind === 'ours') {
    if (onPath(linkDir(home), env)) {
      return { id: 'command', status: 'warn', message: `sleds is linked at ${path}, but ${cliMain} is not executable`, fix: `run ${shellLine(['node', cliMain, 'install'])} again (it makes it executable)`, detail: { path } };
    }
    return { id: 'command', status: 'warn', message: `sleds is linked at ${path}, but ~/.local/bin is not on your PATH`, fix: PATH_FIX, detail: { path } };
  }
  // Not on the PATH: the fix names this sleds by its path (a bare `sleds install` is the command that is missing).
  return { id: 'command', status: 'warn', message: 'sleds is not on your PATH', fix: `run ${shellLine(['node', cliMain, 'install'])} (it links sleds into ~/.local/bin)`, detail: { path: null } };
}
