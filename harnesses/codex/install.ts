import { existsSync, readFileSync, realpathSync, statSync, unlinkSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { findCliBinary } from '../../musher/config/cli-settings.js';
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
} from '../install-files.js';
import type { HarnessInstaller, ReportSink } from '../install-port.js';
import type { CodexState, InstallState } from '../install-state.js';
import { lastLine, runFile } from '../run-binary.js';
import { TomlSyntaxError, TomlText } from './config-toml.js';
import { doctorCodexMcp, installCodexMcp, withoutCodexMcp } from './mcp-config.js';
import { BLOCK_END, BLOCK_START, codexTrustHash, codexTrustKey, planTrust, readTrust, removeTrust } from './trust.js';

/**
 * Codex CLI, wired like Claude Code (shared/facts/codex-cli.md §1):
 *
 * - hooks in $CODEX_HOME/hooks.json (the same JSON form as Claude Code's), each running the same hook client as the
 *   Claude plugin: `'<node>' '<root>/dist/hook.cjs' <Event> --harness codex`. The user's own hooks stay; sleds adds
 *   one group per event after theirs.
 * - the trust entries Codex needs before it runs a hook at all (trust.ts), and the sleds MCP server
 *   (mcp-config.ts), in $CODEX_HOME/config.toml: read with smol-toml, edited as text in blocks of sleds' own
 *   (config-toml.ts says why and how).
 * - backups of both files before the first change, and what was changed in install-state.json (`codex`), so that
 *   uninstall gives both files back byte for byte when nothing else changed in them.
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
    // no readable package.json: judged by the folder's name
    return /(^|\/)sleds$/.test(pkgRoot);
  }
}

function samePathLoose(a: string, b: string): boolean {
  if (resolve(a) === resolve(b)) return true;
  try {
    return realpathSync(a) === realpathSync(b);
  } catch {
    // one of them is not there: not the same path
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
      // no Codex home: Codex is not set up here
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

interface CodexInstallContext {
  rep: ReportSink;
  env: Env;
  home: string;
  /** This sleds package's root (realpath). */
  root: string;
  nodePath: string;
  /** The install state being built; `state.codex` is set here. */
  state: InstallState;
  /** Writes the state file when it changed. */
  persist(): void;
  now(): Date;
}

function errorMessage(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
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

function newFileState(path: string, text: string | null): Omit<CodexState['configToml'], 'edited'> {
  return { path, existedBefore: text !== null, originalSha256: sha256(text), backupPath: null, backups: [] };
}

/**
 * Wires sleds into Codex when Codex is there (a binary, or its home folder). Reports one line per part and sets
 * `ctx.state.codex`. Never throws.
 */
async function installCodex(ctx: CodexInstallContext): Promise<void> {
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
    // Refused before anything is written: Codex itself would not start on it.
    if (configText !== null) new TomlText(configText);
  } catch (e) {
    const why = e instanceof TomlSyntaxError ? `is not TOML (${e.message})` : `cannot be read (${errorMessage(e)})`;
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
        const b = backupFile(configPath, ctx.now());
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
        const b = backupFile(hooksPath, ctx.now());
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
      `${configPath}: ${plan.blocker}, so Codex will not run sleds' hooks until you trust them`,
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

interface CodexUninstallContext {
  rep: ReportSink;
  env: Env;
  home: string;
  root: string | null;
  state: InstallState | null;
}

async function uninstallCodex(ctx: CodexUninstallContext): Promise<void> {
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
    if (e instanceof TomlSyntaxError) rep.fail('codex-trust', `${configPath} is not TOML (${e.message})`, 'fix it, then run sleds uninstall again');
    else rep.fail('codex-trust', `${configPath} cannot be edited safely: ${errorMessage(e)}`, `remove the block between '${BLOCK_START.slice(0, 11)}' and '${BLOCK_END}' by hand`);
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
      // a backup that is not JSON is not ours to merge back: restored as it is
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

async function doctorCodex(rep: ReportSink, env: Env, home: string, root: string | null): Promise<void> {
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
  let trusted: ReturnType<typeof readTrust>;
  try {
    trusted = readTrust(readText(configPath) ?? '');
  } catch (e) {
    const why = e instanceof TomlSyntaxError ? `is not TOML (${e.message})` : `cannot be read (${errorMessage(e)})`;
    rep.fail('codex-trust', `${configPath} ${why}`, 'fix it, then run sleds install again');
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
    return !trusted.some((t) => t.key === key && t.hash === want);
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

/** Codex CLI's half of install, uninstall and doctor, for the harness registry. */
export const codexInstaller: HarnessInstaller = {
  id: 'codex',
  // Its hooks run dist/hook.cjs, checked once Codex is found (a package without Codex needs nothing more).
  packageFiles: () => ({ missing: [], error: null }),
  async install(ctx) {
    const state = ctx.state.current;
    // The state is begun by the installer before this one; without it there is nothing to record Codex's part in.
    if (!state) return {};
    await installCodex({ rep: ctx.report, env: ctx.env, home: ctx.home, root: ctx.packageRoot, nodePath: ctx.nodePath, state, persist: () => ctx.state.persist(), now: ctx.now });
    return {};
  },
  async uninstall(ctx) {
    await uninstallCodex({ rep: ctx.report, env: ctx.env, home: ctx.home, root: ctx.packageRoot, state: ctx.state });
    return {};
  },
  doctor: (ctx) => doctorCodex(ctx.report, ctx.env, ctx.home, ctx.packageRoot),
};
