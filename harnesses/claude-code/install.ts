import { existsSync, readFileSync, unlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { claudeConfigDir } from '../../core/paths.js';
import { findHarnessBinary } from '../../musher/config/cli-settings.js';
import type { BinaryLookup } from '../../musher/find-binary.js';
import {
  SettingsError,
  backupFile,
  clone,
  deepEqual,
  isObject,
  orderKeysLike,
  readSettings,
  samePath,
  serializeSettings,
  sha256,
  writeFileAtomic,
  type JsonObject,
  type SettingsFile,
} from '../install-files.js';
import type { HarnessDoctorContext, HarnessInstallContext, HarnessInstaller, HarnessUninstallContext, InstallOutcome, InstallStep, UninstallOutcome } from '../install-port.js';
import type { InstallState } from '../install-state.js';
import { stateFile } from '../install-state.js';
import { ANSI, lastLine, runFile } from '../run-binary.js';
import {
  MARKETPLACE_NAME,
  PLUGIN_ID,
  dropLegacyPluginKeys,
  marketplaceEntry,
  marketplacePath,
  parseSledsStatusLine,
  pluginEnabled,
  pluginHookFiles,
  removePluginKeys,
  setPluginKeys,
  sledsStatusLine,
} from './settings.js';

/**
 * Claude Code, wired by `sleds install`: the plugin through `claude plugin marketplace add <package root>` +
 * `claude plugin install sleds@sleds-local` (or, without a working claude, the two settings keys those commands
 * write), the statusLine in <claude config dir>/settings.json (chaining any statusLine the user had with --then),
 * a backup of settings.json before the first change, and what to undo in install-state.json. Running it again
 * changes nothing. Uninstall is the reverse, leaving the user's other settings alone; settings.json comes back
 * byte for byte when nothing else in it changed meanwhile.
 *
 * The `claude` CLI is always an absolute path run with an argument array (no shell), with the user's own
 * environment (CLAUDE_CONFIG_DIR decides which config folder it writes).
 */

type Env = Record<string, string | undefined>;

export type ClaudeLookup = BinaryLookup;

/** claude for a command: SLEDS_CLAUDE_BIN, else config.yml's binaries.claude (and only it), else PATH, else the installers' places. */
export function findClaude(env: Env, home: string): BinaryLookup {
  return findHarnessBinary(env, home, 'claude');
}

export async function claudeVersion(bin: string, env: Env): Promise<string | null> {
  const r = await runFile(bin, ['--version'], env, 30_000);
  if (!r.ok) return null;
  const m = /\d+\.\d+\.\d+\S*/.exec(r.stdout);
  return m ? m[0] : lastLine(r.stdout) || null;
}

/** The JSON array in a command's stdout, skipping any notice lines printed before it. */
function parseJsonArray(text: string): unknown[] | null {
  const clean = text.replace(ANSI, '');
  const end = clean.lastIndexOf(']');
  for (let start = clean.indexOf('['); start >= 0 && start < end; start = clean.indexOf('\n[', start + 1) + 1 || -1) {
    try {
      const v: unknown = JSON.parse(clean.slice(start, end + 1));
      if (Array.isArray(v)) return v;
    } catch {
      // a notice that happens to hold a '[': try the next line that starts with one
    }
  }
  return null;
}

export interface InstalledPlugin {
  id: string;
  scope: string;
  enabled: boolean;
  readFromFolder: string | null;
}

export interface KnownMarketplace {
  name: string;
  path: string | null;
}

/** `claude plugin list --json` (read-only): our plugin's user-scope entry, or null; an error line if it failed. */
export async function findInstalledPlugin(bin: string, env: Env): Promise<{ plugin: InstalledPlugin | null; error: string | null }> {
  const r = await runFile(bin, ['plugin', 'list', '--json'], env);
  const list = r.ok ? parseJsonArray(r.stdout) : null;
  if (!list) return { plugin: null, error: `claude plugin list failed: ${r.error || 'unreadable output'}` };
  for (const p of list as Array<Record<string, unknown>>) {
    if (p?.id !== PLUGIN_ID) continue;
    if (p.scope !== undefined && p.scope !== 'user') continue;
    return {
      plugin: {
        id: PLUGIN_ID,
        scope: String(p.scope ?? 'user'),
        enabled: p.enabled === true,
        readFromFolder: typeof p.readFromFolder === 'string' ? p.readFromFolder : null,
      },
      error: null,
    };
  }
  return { plugin: null, error: null };
}

/** `claude plugin marketplace list --json` (read-only): the sleds-local entry, or null. */
export async function findMarketplace(bin: string, env: Env): Promise<{ marketplace: KnownMarketplace | null; error: string | null }> {
  const r = await runFile(bin, ['plugin', 'marketplace', 'list', '--json'], env);
  const list = r.ok ? parseJsonArray(r.stdout) : null;
  if (!list) return { marketplace: null, error: `claude plugin marketplace list failed: ${r.error || 'unreadable output'}` };
  for (const m of list as Array<Record<string, unknown>>) {
    if (m?.name !== MARKETPLACE_NAME) continue;
    const path = typeof m.path === 'string' ? m.path : typeof m.installLocation === 'string' ? m.installLocation : null;
    return { marketplace: { name: MARKETPLACE_NAME, path }, error: null };
  }
  return { marketplace: null, error: null };
}

// ---------------------------------------------------------------------------------------------------------------
// install

type ProcessEnv = NodeJS.ProcessEnv;

function errorMessage(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

function short(cmd: string): string {
  const one = cmd.replace(/\s+/g, ' ').trim();
  return one.length > 80 ? `${one.slice(0, 79)}…` : one;
}

/** The environment for `claude`, pointed at the config folder whose settings.json we work on. */
function claudeEnvFor(settingsPath: string, env: Env, home: string): ProcessEnv {
  const dir = dirname(settingsPath);
  const out: ProcessEnv = { ...env };
  if (samePath(dir, join(home, '.claude')) && !env.CLAUDE_CONFIG_DIR) return out;
  if (env.CLAUDE_CONFIG_DIR && samePath(dir, env.CLAUDE_CONFIG_DIR)) return out;
  if (samePath(dir, join(home, '.claude'))) delete out.CLAUDE_CONFIG_DIR;
  else out.CLAUDE_CONFIG_DIR = dir;
  return out;
}

/** The files of this package Claude Code loads the plugin from, and those missing (or why they cannot be told). */
function pluginFiles(root: string): { missing: string[]; error: string | null } {
  const needed = [join(root, '.claude-plugin', 'marketplace.json'), join(root, 'plugin', '.claude-plugin', 'plugin.json'), join(root, 'plugin', 'hooks', 'hooks.json')];
  const missing = needed.filter((p) => !existsSync(p));
  const hookFiles = pluginHookFiles(root);
  if (!missing.length && hookFiles.error) return { missing: [], error: hookFiles.error };
  return { missing: [...missing, ...hookFiles.missing], error: null };
}

async function installClaudeCode(ctx: HarnessInstallContext): Promise<InstallOutcome> {
  const { report: rep, env, home, paths, cliMain, packageRoot: root, sledsVersion: version, nodePath, state: slot } = ctx;
  const stop: InstallOutcome = { stop: true };

  // settings.json must be readable before anything is changed.
  const settingsPath = join(claudeConfigDir(env, home), 'settings.json');
  let before: SettingsFile;
  try {
    before = readSettings(settingsPath);
  } catch (e) {
    rep.fail('settings', errorMessage(e), e instanceof SettingsError ? e.fix : 'fix it, then run sleds install again');
    return stop;
  }

  // What to undo later. Written before the first change, so an interrupted install can still be undone.
  const prior = slot.prior;
  if (prior && !samePath(prior.settings.path, settingsPath)) {
    rep.fail('state', `sleds is already installed into ${prior.settings.path}, not ${settingsPath}`, `run 'sleds uninstall' first (it undoes ${prior.settings.path}), then install again`);
    return stop;
  }
  const now = ctx.now().toISOString();
  const curSL = before.data.statusLine;
  const curOurs = isObject(curSL) ? parseSledsStatusLine(curSL.command, cliMain) : null;
  const state: InstallState = prior
    ? (JSON.parse(JSON.stringify(prior)) as InstallState)
    : {
        version: 1,
        installedAt: now,
        updatedAt: now,
        sledsVersion: version,
        nodeVersion: process.versions.node,
        nodePath,
        cliMain,
        packageRoot: root,
        claude: null,
        settings: {
          path: settingsPath,
          existedBefore: before.exists,
          originalSha256: sha256(before.text),
          backupPath: null,
          backups: [],
          originalKeyOrder: Object.keys(before.data),
          hadContainers: { enabledPlugins: 'enabledPlugins' in before.data, extraKnownMarketplaces: 'extraKnownMarketplaces' in before.data },
        },
        statusLine: {
          // Our statusLine already there without a state file (it was deleted): what it chains is the original.
          original: curOurs
            ? curOurs.then
              ? { present: true, value: { type: 'command', command: curOurs.then } }
              : { present: false }
            : curSL === undefined
              ? { present: false }
              : { present: true, value: curSL },
          chained: null,
        },
        plugin: { method: 'pending', note: null },
      };
  Object.assign(state, { sledsVersion: version, nodeVersion: process.versions.node, nodePath, cliMain, packageRoot: root });
  // The user set a statusLine of their own since the last install: that is now the one to give back.
  if (prior && !curOurs) state.statusLine.original = curSL === undefined ? { present: false } : { present: true, value: curSL };

  let then: string | null = null;
  let statusNote: string;
  if (curOurs) {
    then = curOurs.then;
    statusNote = then ? `then your own: ${short(then)}` : '';
  } else if (isObject(curSL) && curSL.type === 'command' && typeof curSL.command === 'string' && curSL.command.trim()) {
    then = curSL.command;
    statusNote = `then your own: ${short(then)}`;
  } else if (curSL !== undefined) {
    statusNote = 'your previous statusLine was not a command; it is saved and uninstall puts it back';
  } else statusNote = '';
  state.statusLine.chained = then;
  const desiredSL = sledsStatusLine(nodePath, cliMain, then, curSL);

  const lookup = findClaude(env, home);
  const claudeEnv = claudeEnvFor(settingsPath, env, home);
  const claudeVer = lookup.bin ? await claudeVersion(lookup.bin, claudeEnv) : null;
  state.claude = lookup.bin ? { bin: lookup.bin, version: claudeVer } : null;

  slot.current = state;
  const persist = (): boolean => {
    try {
      slot.persist();
      return true;
    } catch (e) {
      rep.fail('state', `cannot write ${stateFile(paths)} (${errorMessage(e)})`, `check that ${paths.configDir} is writable, then run sleds install again`);
      return false;
    }
  };
  if (!persist()) return stop;

  let backupPath: string | null = null;
  // Only a file that was there before this install began holds anything of the user's: one that `claude plugin
  // install` created a moment ago is not backed up (and not called a backup).
  const backup = (): void => {
    if (backupPath || !before.exists || !existsSync(settingsPath)) return;
    backupPath = backupFile(settingsPath, ctx.now());
    if (state.settings.backups.length === 0 && state.settings.existedBefore) state.settings.backupPath = backupPath;
    state.settings.backups.push(backupPath);
    slot.persist();
  };
  /** A backup taken before a claude command that in the end changed nothing is not worth keeping. */
  const keepBackupOnlyIfChanged = (): void => {
    if (!backupPath) return;
    let same = false;
    try {
      same = readFileSync(backupPath, 'utf8') === readFileSync(settingsPath, 'utf8');
    } catch {
      // either file unreadable: not the same, so the backup is kept
      same = false;
    }
    if (same) {
      unlinkSync(backupPath);
      state.settings.backups = state.settings.backups.filter((b) => b !== backupPath);
      if (state.settings.backupPath === backupPath) state.settings.backupPath = null;
      backupPath = null;
      slot.persist();
    } else rep.info('backup', `backed up ${settingsPath} to ${backupPath}`, { path: backupPath });
  };

  // The plugin, through claude when there is one.
  let method: 'claude' | 'direct' = 'direct';
  let pluginChanged = false;
  let claudeProblem: string | null = null;
  if (lookup.bin) {
    try {
      const r = await wirePluginWithClaude(lookup.bin, claudeEnv, root, settingsPath, backup);
      if (r.ok) {
        method = 'claude';
        pluginChanged = r.changed;
        const how = `claude ${claudeVer ?? '(version unknown)'} at ${lookup.bin}`;
        rep.ok(
          'plugin',
          r.changed ? `plugin ${PLUGIN_ID} installed and enabled with 'claude plugin' (${how})` : `plugin ${PLUGIN_ID} already installed and enabled (${how})`,
          { method, changed: r.changed, marketplace: root },
        );
      } else claudeProblem = r.error;
    } catch (e) {
      claudeProblem = errorMessage(e);
    }
  } else claudeProblem = `claude not found (${lookup.how})`;

  // settings.json: the statusLine, and the plugin keys when claude could not write them.
  let after: SettingsFile;
  try {
    after = readSettings(settingsPath);
  } catch (e) {
    rep.fail('settings', errorMessage(e), e instanceof SettingsError ? e.fix : 'fix it, then run sleds install again');
    return stop;
  }
  if (!before.exists && after.exists && method === 'claude') {
    rep.info('settings', `${settingsPath} was created by claude plugin install (nothing of yours to back up)`, { path: settingsPath, createdBy: 'claude plugin install' });
  }
  const next = clone(after.data);
  if (method === 'direct') {
    const err = setPluginKeys(next, root);
    if (err) {
      rep.fail('plugin', err, 'fix it, then run sleds install again');
      return stop;
    }
  }
  for (const id of dropLegacyPluginKeys(next)) rep.info('plugin', `removed the plugin's old name ${id} from settings.json`, { legacy: id });
  const slChanged = !deepEqual(next.statusLine, desiredSL);
  if (slChanged) next.statusLine = desiredSL;
  const marketBefore = isObject(after.data.extraKnownMarketplaces) ? after.data.extraKnownMarketplaces[MARKETPLACE_NAME] : undefined;
  const directChanged = method === 'direct' && (pluginEnabled(after.data) !== true || !deepEqual(marketBefore, marketplaceEntry(root)));
  if (!deepEqual(next, after.data)) {
    try {
      backup();
      writeFileAtomic(settingsPath, serializeSettings(next, after));
    } catch (e) {
      rep.fail('settings', `cannot write ${settingsPath} (${errorMessage(e)})`, 'check its folder is writable, then run sleds install again');
      return stop;
    }
  }
  if (method === 'direct') {
    pluginChanged = directChanged;
    const what = directChanged ? `plugin ${PLUGIN_ID} enabled by writing settings.json directly` : `plugin ${PLUGIN_ID} already enabled in settings.json`;
    rep.warn(
      'plugin',
      `${what} (${claudeProblem}); Claude Code loads it from ${root} at its next start`,
      lookup.bin ? `check with 'claude plugin list', then run sleds install again` : `to register it with claude too, install Claude Code (or set SLEDS_CLAUDE_BIN) and run sleds install again`,
      { method, changed: directChanged, marketplace: root, claudeProblem },
    );
  }
  rep.ok('statusline', `${slChanged ? 'statusline now runs sleds' : 'statusline already runs sleds'}${statusNote ? `, ${statusNote}` : ''}`, {
    changed: slChanged,
    command: desiredSL.command,
    chained: then,
  });

  keepBackupOnlyIfChanged();
  state.plugin = { method, note: method === 'direct' ? claudeProblem : null };
  persist();
  const closing: InstallStep[] = pluginChanged
    ? [{ id: 'restart', status: 'info', message: 'Claude Code sessions already open load the plugin after a restart (or /reload-plugins)' }]
    : [];
  return { summary: { settings: settingsPath, state: stateFile(paths), backup: state.settings.backupPath }, closing };
}

async function wirePluginWithClaude(
  bin: string,
  env: ProcessEnv,
  root: string,
  settingsPath: string,
  beforeChange: () => void,
): Promise<{ ok: true; changed: boolean } | { ok: false; error: string }> {
  const p = await findInstalledPlugin(bin, env);
  if (p.error) return { ok: false, error: p.error };
  const m = await findMarketplace(bin, env);
  if (m.error) return { ok: false, error: m.error };
  const cur = readSettings(settingsPath).data;
  const settingsMarket = marketplacePath(cur);
  const marketOk = !!m.marketplace?.path && samePath(m.marketplace.path, root) && !!settingsMarket && samePath(settingsMarket, root);
  const pluginOk = !!p.plugin?.enabled && pluginEnabled(cur) === true;
  if (marketOk && pluginOk) return { ok: true, changed: false };

  beforeChange();
  if (!marketOk) {
    const r = await runFile(bin, ['plugin', 'marketplace', 'add', root], env);
    if (!r.ok) return { ok: false, error: `'claude plugin marketplace add' failed: ${r.error}` };
  }
  if (!p.plugin) {
    const r = await runFile(bin, ['plugin', 'install', PLUGIN_ID], env);
    if (!r.ok) return { ok: false, error: `'claude plugin install ${PLUGIN_ID}' failed: ${r.error}` };
  } else if (!pluginOk) {
    const r = await runFile(bin, ['plugin', 'enable', PLUGIN_ID], env);
    if (!r.ok) return { ok: false, error: `'claude plugin enable ${PLUGIN_ID}' failed: ${r.error}` };
  }
  const check = await findInstalledPlugin(bin, env);
  const after = readSettings(settingsPath).data;
  if (!check.plugin?.enabled || pluginEnabled(after) !== true || !samePath(marketplacePath(after) ?? '', root)) {
    return { ok: false, error: `'claude plugin install' reported success but ${PLUGIN_ID} is not enabled from ${root}` };
  }
  return { ok: true, changed: true };
}

// ---------------------------------------------------------------------------------------------------------------
// uninstall

async function uninstallClaudeCode(ctx: HarnessUninstallContext): Promise<UninstallOutcome> {
  const { report: rep, env, home, cliMain, state } = ctx;
  const settingsPath = state?.settings.path ?? join(claudeConfigDir(env, home), 'settings.json');
  const claudeEnv = claudeEnvFor(settingsPath, env, home);
  const kept = (state?.settings.backups ?? []).filter((b) => existsSync(b));
  const outcome: UninstallOutcome = {
    summary: { settings: settingsPath },
    whenClean: kept.length ? [{ id: 'backup', status: 'info', message: `your settings.json backup${kept.length > 1 ? 's stay' : ' stays'} at ${kept.join(', ')}`, detail: { backups: kept } }] : [],
  };

  try {
    readSettings(settingsPath);
  } catch (e) {
    rep.fail('settings', errorMessage(e), e instanceof SettingsError ? e.fix : 'fix it, then run sleds uninstall again');
    return outcome;
  }

  // The plugin: through claude when there is one (it also clears its own plugin cache and lists).
  const lookup = findClaude(env, home);
  const done: string[] = [];
  let claudeProblem: string | null = null;
  if (lookup.bin) {
    const p = await findInstalledPlugin(lookup.bin, claudeEnv);
    const m = await findMarketplace(lookup.bin, claudeEnv);
    claudeProblem = p.error ?? m.error;
    if (p.plugin) {
      const r = await runFile(lookup.bin, ['plugin', 'uninstall', PLUGIN_ID], claudeEnv);
      if (r.ok) done.push(`uninstalled with 'claude plugin'`);
      else claudeProblem ??= `'claude plugin uninstall ${PLUGIN_ID}' failed: ${r.error}`;
    }
    if (m.marketplace) {
      const r = await runFile(lookup.bin, ['plugin', 'marketplace', 'remove', MARKETPLACE_NAME], claudeEnv);
      if (r.ok) done.push(`marketplace ${MARKETPLACE_NAME} removed`);
      else claudeProblem ??= `'claude plugin marketplace remove ${MARKETPLACE_NAME}' failed: ${r.error}`;
    }
  }

  // settings.json: whatever plugin keys are left, and the statusLine.
  let cur: SettingsFile;
  try {
    cur = readSettings(settingsPath);
  } catch (e) {
    rep.fail('settings', errorMessage(e), e instanceof SettingsError ? e.fix : 'fix it, then run sleds uninstall again');
    return outcome;
  }
  const next: JsonObject = clone(cur.data);
  const keysLeft = pluginEnabled(next) !== null || marketplacePath(next) !== null;
  removePluginKeys(next, state ? state.settings.hadContainers : { enabledPlugins: true, extraKnownMarketplaces: true });
  if (keysLeft) done.push(`its keys removed from settings.json`);
  if (!lookup.bin && state?.plugin.method === 'claude') {
    claudeProblem = `claude not found (${lookup.how}), so Claude Code's own plugin list may still name ${PLUGIN_ID}`;
  }
  if (claudeProblem) {
    rep.warn(
      'plugin',
      `plugin ${PLUGIN_ID}: ${done.length ? `${done.join(', ')}; ` : ''}${claudeProblem}`,
      `check with 'claude plugin list' and run 'claude plugin uninstall ${PLUGIN_ID}' if it is still listed`,
    );
  } else if (done.length) rep.ok('plugin', `plugin ${PLUGIN_ID}: ${done.join(', ')}`);
  else rep.ok('plugin', `plugin ${PLUGIN_ID} was not installed`);

  const sl = next.statusLine;
  const ours = isObject(sl) ? parseSledsStatusLine(sl.command, cliMain) : null;
  if (ours) {
    let restored: unknown;
    if (state) restored = state.statusLine.original.present ? state.statusLine.original.value : undefined;
    else restored = ours.then ? { type: 'command', command: ours.then } : undefined;
    if (restored === undefined) {
      delete next.statusLine;
      rep.ok('statusline', 'statusline removed (there was none before sleds)');
    } else {
      next.statusLine = restored as JsonObject;
      const cmd = isObject(restored) && typeof restored.command === 'string' ? `: ${short(restored.command)}` : '';
      rep.ok('statusline', `statusline given back to your own${cmd}`);
    }
  } else if (sl !== undefined) rep.ok('statusline', `statusline is not sleds' (left as it is)`);
  else rep.ok('statusline', 'no statusline to undo');

  try {
    rep.add(restoreSettings(cur, next, state));
  } catch (e) {
    rep.fail('settings', `cannot write ${settingsPath} (${errorMessage(e)})`, 'check its folder is writable, then run sleds uninstall again');
  }
  return outcome;
}

/**
 * Writes the settings sleds no longer has a hand in. If they equal what the user had before sleds (nothing else
 * changed meanwhile), the original bytes come back from the backup; a settings.json that sleds created goes away.
 */
function restoreSettings(cur: SettingsFile, next: JsonObject, state: InstallState | null): InstallStep {
  const path = cur.path;
  if (state?.settings.existedBefore && state.settings.backupPath && existsSync(state.settings.backupPath)) {
    const original = readFileSync(state.settings.backupPath, 'utf8');
    let parsed: unknown = null;
    try {
      parsed = sha256(original) === state.settings.originalSha256 ? JSON.parse(original.replace(/^\uFEFF/, '') || '{}') : null;
    } catch {
      // a backup that is not JSON is not ours to merge back: restored as it is
      parsed = null;
    }
    if (parsed !== null && deepEqual(parsed, next)) {
      if (cur.text !== original) writeFileAtomic(path, original);
      return { id: 'settings', status: 'ok', message: `${path} is back to exactly what it was before sleds` };
    }
  }
  if (state && !state.settings.existedBefore && Object.keys(next).length === 0) {
    if (cur.exists) unlinkSync(path);
    return { id: 'settings', status: 'ok', message: `${path} removed (sleds created it)` };
  }
  if (deepEqual(next, cur.data)) return { id: 'settings', status: 'ok', message: `${path} holds nothing of sleds` };
  const ordered = state ? orderKeysLike(next, state.settings.originalKeyOrder) : next;
  writeFileAtomic(path, serializeSettings(ordered, cur));
  return { id: 'settings', status: 'ok', message: `${path}: sleds' keys removed, your other settings untouched` };
}

// ---------------------------------------------------------------------------------------------------------------
// doctor

async function doctorClaudeCode(ctx: HarnessDoctorContext): Promise<void> {
  const { report: rep, env, home, cliMain, packageRoot: root } = ctx;
  const lookup = findClaude(env, home);
  if (lookup.bin) {
    const v = await claudeVersion(lookup.bin, env);
    if (v) rep.ok('claude', `claude ${v} (${lookup.bin})`, { version: v, path: lookup.bin });
    else rep.fail('claude', `claude at ${lookup.bin} did not answer --version`, `run '${lookup.bin} --version' to see why, or reinstall Claude Code`, { path: lookup.bin });
  } else rep.fail('claude', `claude not found (${lookup.how})`, 'install Claude Code, or set binaries.claude in config.yml to the claude binary (SLEDS_CLAUDE_BIN for one command)');

  const settingsPath = join(claudeConfigDir(env, home), 'settings.json');
  let settings: SettingsFile | null = null;
  try {
    settings = readSettings(settingsPath);
    if (!settings.exists) rep.fail('settings', `${settingsPath} does not exist`, 'run sleds install');
  } catch (e) {
    rep.fail('settings', errorMessage(e), e instanceof SettingsError ? e.fix : 'fix it');
  }
  if (!settings?.exists) return;

  // plugin
  const enabled = pluginEnabled(settings.data);
  if (enabled === true) rep.ok('plugin', `plugin ${PLUGIN_ID} enabled`);
  else if (enabled === false) rep.fail('plugin', `plugin ${PLUGIN_ID} is disabled`, `run 'claude plugin enable ${PLUGIN_ID}' (or sleds install)`);
  else rep.fail('plugin', `plugin ${PLUGIN_ID} is not enabled`, 'run sleds install');

  // marketplace
  const market = marketplacePath(settings.data);
  const hooks = market === null ? null : pluginHookFiles(market);
  if (market === null) rep.fail('marketplace', `marketplace ${MARKETPLACE_NAME} is not declared in ${settingsPath}`, 'run sleds install');
  else if (!existsSync(join(market, 'plugin', 'hooks', 'hooks.json'))) {
    rep.fail('marketplace', `marketplace ${MARKETPLACE_NAME} points at ${market}, which holds no plugin/hooks/hooks.json`, 'run sleds install from the sleds you want to use');
  } else if (hooks!.error) {
    rep.fail('marketplace', hooks!.error, 'reinstall sleds, then run sleds install again');
  } else if (hooks!.missing.length) {
    rep.fail('marketplace', `the plugin's hooks run ${hooks!.missing[0]}, which is missing`, `run 'npm run build' in ${market}`);
  } else if (root && !samePath(market, root)) {
    rep.warn('marketplace', `marketplace ${MARKETPLACE_NAME} → ${market}, another sleds than this one (${root})`, 'run sleds install from this copy to use it instead', { path: market });
  } else rep.ok('marketplace', `marketplace ${MARKETPLACE_NAME} → ${market}`, { path: market });

  // statusLine
  const sl = settings.data.statusLine;
  const command = isObject(sl) && typeof sl.command === 'string' ? sl.command : null;
  const ours = parseSledsStatusLine(command, cliMain);
  if (ours) {
    const missing = ours.runner.filter((p) => p.startsWith('/') && !existsSync(p));
    const chain = ours.then ? `, then runs: ${ours.then}` : '';
    if (missing.length) rep.fail('statusline', `statusLine runs sleds through ${missing[0]}, which no longer exists`, 'run sleds install again', { command, chained: ours.then });
    else rep.ok('statusline', `statusLine runs sleds${chain}`, { command, chained: ours.then });
  } else if (sl === undefined) rep.fail('statusline', 'no statusLine is set', 'run sleds install');
  else {
    const what = command ? `something else (${command.length > 80 ? `${command.slice(0, 79)}…` : command})` : 'no command';
    rep.fail('statusline', `statusLine runs ${what}`, 'run sleds install (it keeps yours and runs it after sleds)', { command });
  }
}

/** Claude Code's half of install, uninstall and doctor, for the harness registry. */
export const claudeCodeInstaller: HarnessInstaller = {
  id: 'claude-code',
  packageFiles: pluginFiles,
  install: installClaudeCode,
  uninstall: uninstallClaudeCode,
  doctor: doctorClaudeCode,
};
