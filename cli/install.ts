import { existsSync, readFileSync, realpathSync, unlinkSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { claudeConfigDir, resolvePaths, type SledsPaths } from '../core/paths.js';
import { packageRoot } from '../musher/package-root.js';
import {
  MARKETPLACE_NAME,
  PLUGIN_ID,
  SettingsError,
  backupFile,
  clone,
  deepEqual,
  dropLegacyPluginKeys,
  isObject,
  marketplaceEntry,
  marketplacePath,
  orderKeysLike,
  parseSledsStatusLine,
  pluginEnabled,
  pluginHookFiles,
  readSettings,
  removePluginKeys,
  samePath,
  serializeSettings,
  setPluginKeys,
  sha256,
  sledsStatusLine,
  writeFileAtomic,
  type JsonObject,
  type SettingsFile,
} from './claude-settings.js';
import { claudeVersion, findClaude, findInstalledPlugin, findMarketplace, runFile } from './install-claude.js';
import { installCodex, uninstallCodex } from './install-codex.js';
import { ensureStarted, stopMusherQuietly } from './musher-lifecycle.js';
import { linkCommand, unlinkCommand } from './path-link.js';
import { Reporter, type Step } from './install-report.js';
import { readState, removeState, stateFile, writeState, type InstallState } from './install-state.js';
import { fail } from './fail.js';

/**
 * `sleds install` / `sleds uninstall`.
 *
 * install: the plugin through `claude plugin marketplace add <package root>` + `claude plugin install
 * sled@sleds-local` (or, without a working claude, the two settings keys those commands write), the statusLine
 * in <claude config dir>/settings.json (chaining any statusLine the user had with --then), a backup of
 * settings.json before the first change, install-state.json to undo it all, and musher started.
 * Running it again changes nothing.
 *
 * uninstall: the reverse, leaving the user's other settings alone; settings.json comes back byte for byte when
 * nothing else in it changed meanwhile. Running it again is harmless.
 */

type Env = NodeJS.ProcessEnv;

function parseArgs(command: string, args: string[]): { json: boolean } | null {
  const unknown = args.filter((a) => a !== '--json');
  if (unknown.length) {
    fail(`${command} takes only --json (got '${unknown[0]}') — run 'sleds help'`, 2);
    return null;
  }
  return { json: args.includes('--json') };
}

function errorMessage(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

function realOrResolved(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    // The path does not exist (yet): compare it as written.
    return resolve(p);
  }
}

/** The environment for `claude`, pointed at the config folder whose settings.json we work on. */
function claudeEnvFor(settingsPath: string, env: Env, home: string): Env {
  const dir = dirname(settingsPath);
  const out: Env = { ...env };
  if (samePath(dir, join(home, '.claude')) && !env.CLAUDE_CONFIG_DIR) return out;
  if (env.CLAUDE_CONFIG_DIR && samePath(dir, env.CLAUDE_CONFIG_DIR)) return out;
  if (samePath(dir, join(home, '.claude'))) delete out.CLAUDE_CONFIG_DIR;
  else out.CLAUDE_CONFIG_DIR = dir;
  return out;
}

function short(cmd: string): string {
  const one = cmd.replace(/\s+/g, ' ').trim();
  return one.length > 80 ? `${one.slice(0, 79)}…` : one;
}

function sansTimes(s: InstallState): unknown {
  return { ...s, updatedAt: '' };
}

// ---------------------------------------------------------------------------------------------------------------

export async function runInstall(cliMainArg: string, args: string[]): Promise<number> {
  const opts = parseArgs('install', args);
  if (!opts) return 2;
  const rep = new Reporter(opts.json);
  const env = process.env;
  const home = homedir();
  const paths = resolvePaths(env, home);

  // 1. This package: the marketplace Claude Code will read the plugin from.
  let root: string;
  let version: string;
  const cliMain = realOrResolved(cliMainArg);
  try {
    root = realpathSync(packageRoot());
    version = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version;
  } catch (e) {
    rep.fail('package', `cannot find this sleds package (${errorMessage(e)})`, 'reinstall sleds');
    return rep.finish();
  }
  const needed = [join(root, '.claude-plugin', 'marketplace.json'), join(root, 'plugin', '.claude-plugin', 'plugin.json'), join(root, 'plugin', 'hooks', 'hooks.json'), cliMain];
  const missing = needed.filter((p) => !existsSync(p));
  const hookFiles = pluginHookFiles(root);
  if (!missing.length && hookFiles.error) {
    rep.fail('package', hookFiles.error, 'reinstall sleds');
    return rep.finish();
  }
  missing.push(...hookFiles.missing);
  if (missing.length) {
    rep.fail('package', `this sleds package is incomplete: ${missing[0]} is missing`, `run 'npm run build' in ${root} (or reinstall sleds)`);
    return rep.finish();
  }
  if (/\/_npx\//.test(root)) {
    rep.warn('package', `sleds ${version} runs from npx's cache (${root}), which npm may clear`, `install it for good ('npm install -g sleds'), then run 'sleds install' again`, { root, cliMain, version });
  } else rep.ok('package', `sleds ${version} at ${root}`, { root, cliMain, version });

  // 2. settings.json must be readable before anything is changed.
  const settingsPath = join(claudeConfigDir(env, home), 'settings.json');
  let before: SettingsFile;
  try {
    before = readSettings(settingsPath);
  } catch (e) {
    rep.fail('settings', errorMessage(e), e instanceof SettingsError ? e.fix : 'fix it, then run sleds install again');
    return rep.finish();
  }

  // 3. What to undo later. Written before the first change, so an interrupted install can still be undone.
  const prior = readState(paths);
  if (prior.error) rep.warn('state', `${prior.error}; starting a new one`, `delete ${stateFile(paths)} if this keeps happening`);
  if (prior.state && !samePath(prior.state.settings.path, settingsPath)) {
    rep.fail(
      'state',
      `sleds is already installed into ${prior.state.settings.path}, not ${settingsPath}`,
      `run 'sleds uninstall' first (it undoes ${prior.state.settings.path}), then install again`,
    );
    return rep.finish();
  }
  const now = new Date().toISOString();
  const curSL = before.data.statusLine;
  const curOurs = isObject(curSL) ? parseSledsStatusLine(curSL.command, cliMain) : null;
  const state: InstallState = prior.state
    ? (JSON.parse(JSON.stringify(prior.state)) as InstallState)
    : {
        version: 1,
        installedAt: now,
        updatedAt: now,
        sledsVersion: version,
        nodeVersion: process.versions.node,
        nodePath: process.execPath,
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
  Object.assign(state, { sledsVersion: version, nodeVersion: process.versions.node, nodePath: process.execPath, cliMain, packageRoot: root });
  // The user set a statusLine of their own since the last install: that is now the one to give back.
  if (prior.state && !curOurs) state.statusLine.original = curSL === undefined ? { present: false } : { present: true, value: curSL };

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
  const desiredSL = sledsStatusLine(process.execPath, cliMain, then, curSL);

  const lookup = findClaude(env, home);
  const claudeEnv = claudeEnvFor(settingsPath, env, home);
  const claudeVer = lookup.bin ? await claudeVersion(lookup.bin, claudeEnv) : null;
  state.claude = lookup.bin ? { bin: lookup.bin, version: claudeVer } : null;

  let written: InstallState | null = prior.state;
  const persist = (): void => {
    if (written && deepEqual(sansTimes(state), sansTimes(written)) && existsSync(stateFile(paths))) return;
    state.updatedAt = new Date().toISOString();
    writeState(paths, state);
    written = JSON.parse(JSON.stringify(state)) as InstallState;
  };
  try {
    persist();
  } catch (e) {
    rep.fail('state', `cannot write ${stateFile(paths)} (${errorMessage(e)})`, `check that ${paths.configDir} is writable, then run sleds install again`);
    return rep.finish();
  }

  let backupPath: string | null = null;
  // Only a file that was there before this install began holds anything of the user's: one that `claude plugin
  // install` created a moment ago is not backed up (and not called a backup).
  const backup = (): void => {
    if (backupPath || !before.exists || !existsSync(settingsPath)) return;
    backupPath = backupFile(settingsPath);
    if (state.settings.backups.length === 0 && state.settings.existedBefore) state.settings.backupPath = backupPath;
    state.settings.backups.push(backupPath);
    persist();
  };
  /** A backup taken before a claude command that in the end changed nothing is not worth keeping. */
  const keepBackupOnlyIfChanged = (): void => {
    if (!backupPath) return;
    let same = false;
    try {
      same = readFileSync(backupPath, 'utf8') === readFileSync(settingsPath, 'utf8');
    } catch {
      // Either file unreadable: keep the backup, to be safe.
      same = false;
    }
    if (same) {
      unlinkSync(backupPath);
      state.settings.backups = state.settings.backups.filter((b) => b !== backupPath);
      if (state.settings.backupPath === backupPath) state.settings.backupPath = null;
      backupPath = null;
      persist();
    } else rep.info('backup', `backed up ${settingsPath} to ${backupPath}`, { path: backupPath });
  };

  // 4. The plugin, through claude when there is one.
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

  // 5. settings.json: the statusLine, and the plugin keys when claude could not write them.
  let after: SettingsFile;
  try {
    after = readSettings(settingsPath);
  } catch (e) {
    rep.fail('settings', errorMessage(e), e instanceof SettingsError ? e.fix : 'fix it, then run sleds install again');
    return rep.finish();
  }
  if (!before.exists && after.exists && method === 'claude') {
    rep.info('settings', `${settingsPath} was created by claude plugin install (nothing of yours to back up)`, { path: settingsPath, createdBy: 'claude plugin install' });
  }
  const next = clone(after.data);
  if (method === 'direct') {
    const err = setPluginKeys(next, root);
    if (err) {
      rep.fail('plugin', err, 'fix it, then run sleds install again');
      return rep.finish();
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
      return rep.finish();
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
  rep.ok(
    'statusline',
    `${slChanged ? 'statusline now runs sleds' : 'statusline already runs sleds'}${statusNote ? `, ${statusNote}` : ''}`,
    { changed: slChanged, command: desiredSL.command, chained: then },
  );

  keepBackupOnlyIfChanged();
  state.plugin = { method, note: method === 'direct' ? claudeProblem : null };
  try {
    persist();
  } catch (e) {
    rep.fail('state', `cannot write ${stateFile(paths)} (${errorMessage(e)})`, `check that ${paths.configDir} is writable, then run sleds install again`);
  }

  // --- Codex (cli/install-codex.ts): hooks in $CODEX_HOME/hooks.json and their trust entries in config.toml. ---
  await installCodex({ rep, env, home, root, nodePath: process.execPath, state, persist });
  // --- end Codex ---

  // 6. `sleds` as a command in the user's own projects (pickup, estimate, pick run there).
  const linked = linkCommand(env, home, cliMain, state.command ?? null);
  rep.add(linked.step);
  if (linked.link || state.command) {
    state.command = linked.link ?? state.command;
    try {
      persist();
    } catch (e) {
      rep.fail('state', `cannot write ${stateFile(paths)} (${errorMessage(e)})`, `check that ${paths.configDir} is writable, then run sleds install again`);
    }
  }

  // 7. musher.
  const m = await ensureStarted(cliMain);
  if (m) rep.ok('musher', m.alreadyRunning ? `musher already running (pid ${m.pid})` : `musher started (pid ${m.pid})`, { pid: m.pid });
  else rep.fail('musher', 'musher did not start within 10 s', `see ${paths.logFile}, or run 'sleds musher' to watch it start`);

  if (pluginChanged) rep.info('restart', 'Claude Code sessions already open load the plugin after a restart (or /reload-plugins)');
  return rep.finish({ settings: settingsPath, state: stateFile(paths), backup: state.settings.backupPath });
}

async function wirePluginWithClaude(
  bin: string,
  env: Env,
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

export async function runUninstall(cliMainArg: string, args: string[]): Promise<number> {
  const opts = parseArgs('uninstall', args);
  if (!opts) return 2;
  const rep = new Reporter(opts.json);
  const env = process.env;
  const home = homedir();
  const paths: SledsPaths = resolvePaths(env, home);
  const cliMain = realOrResolved(cliMainArg);

  const { state, error } = readState(paths);
  if (error) rep.warn('state', `${error}; undoing what can be recognised without it`, `delete ${stateFile(paths)} afterwards`);
  const settingsPath = state?.settings.path ?? join(claudeConfigDir(env, home), 'settings.json');
  const claudeEnv = claudeEnvFor(settingsPath, env, home);
  let settingsOk = true;

  try {
    readSettings(settingsPath);
  } catch (e) {
    settingsOk = false;
    rep.fail('settings', errorMessage(e), e instanceof SettingsError ? e.fix : 'fix it, then run sleds uninstall again');
  }

  if (settingsOk) {
    // 1. The plugin: through claude when there is one (it also clears its own plugin cache and lists).
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

    // 2. settings.json: whatever plugin keys are left, and the statusLine.
    let cur: SettingsFile | null = null;
    try {
      cur = readSettings(settingsPath);
    } catch (e) {
      rep.fail('settings', errorMessage(e), e instanceof SettingsError ? e.fix : 'fix it, then run sleds uninstall again');
    }
    if (cur) {
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
    }
  }

  // --- Codex (cli/install-codex.ts) ---
  await uninstallCodex({ rep, env, home, root: state?.packageRoot ?? dirname(dirname(dirname(cliMain))), state });
  // --- end Codex ---

  // 3. The `sleds` command, if the link is still ours.
  rep.add(unlinkCommand(home, cliMain, state?.command ?? null));

  // 4. musher.
  const stopped = await stopMusherQuietly();
  if (!stopped.wasRunning) rep.ok('musher', 'musher was not running');
  else if (stopped.stopped) rep.ok('musher', `musher stopped (pid ${stopped.pid})`);
  else rep.fail('musher', `musher (pid ${stopped.pid}) did not stop within 10 s`, `kill ${stopped.pid}`);

  // 5. The state file, once everything it describes is undone.
  if (!rep.failed) {
    try {
      if (removeState(paths)) rep.ok('state', `forgot the install state (${stateFile(paths)})`);
    } catch (e) {
      rep.fail('state', `cannot delete ${stateFile(paths)} (${errorMessage(e)})`, 'delete it by hand');
    }
    const kept = (state?.settings.backups ?? []).filter((b) => existsSync(b));
    if (kept.length) rep.info('backup', `your settings.json backup${kept.length > 1 ? 's stay' : ' stays'} at ${kept.join(', ')}`, { backups: kept });
  } else rep.info('state', `kept ${stateFile(paths)} so that 'sleds uninstall' can finish the job once the above is fixed`);
  return rep.finish({ settings: settingsPath });
}

/**
 * Writes the settings sleds no longer has a hand in. If they equal what the user had before sleds (nothing else
 * changed meanwhile), the original bytes come back from the backup; a settings.json that sleds created goes away.
 */
function restoreSettings(cur: SettingsFile, next: JsonObject, state: InstallState | null): Step {
  const path = cur.path;
  if (state?.settings.existedBefore && state.settings.backupPath && existsSync(state.settings.backupPath)) {
    const original = readFileSync(state.settings.backupPath, 'utf8');
    let parsed: unknown = null;
    try {
      parsed = sha256(original) === state.settings.originalSha256 ? JSON.parse(original.replace(/^\uFEFF/, '') || '{}') : null;
    } catch {
      // A backup that does not parse is not restored: sleds' entries are taken out of the file as it is instead.
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
