import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { deepEqual, isObject, samePath, shQuote, shellWords, type JsonObject } from '../install-files.js';

/**
 * Claude Code's user settings.json, as sleds install sees it: the plugin keys, the statusLine command, the
 * plugin's hook files. Reading and writing the file itself is harnesses/install-files.ts.
 */

export const PLUGIN_ID = 'sleds@sleds-local';
/** The plugin's id before it took the product's name; sleds install removes it so its hooks never run twice. */
export const LEGACY_PLUGIN_IDS = ['sled@sleds-local'];
export const MARKETPLACE_NAME = 'sleds-local';

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
