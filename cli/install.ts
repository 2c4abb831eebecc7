import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { resolvePaths, type SledsPaths } from '../core/paths.js';
import { packageRoot } from '../musher/package-root.js';
import { deepEqual } from '../harnesses/install-files.js';
import type { InstallStateSlot, InstallStep } from '../harnesses/install-port.js';
import { HARNESS_INSTALLERS } from '../harnesses/installers.js';
import { readState, removeState, stateFile, writeState, type InstallState } from '../harnesses/install-state.js';
import { ensureStarted, stopMusherQuietly } from './musher-lifecycle.js';
import { linkCommand, unlinkCommand } from './path-link.js';
import { Reporter } from './install-report.js';
import { fail } from './fail.js';

/**
 * `sleds install` / `sleds uninstall`: this package checked, each harness wired in turn by its installer
 * (harnesses/installers.ts; what each one does is in harnesses/<id>/install.ts), `sleds` linked onto the PATH,
 * musher started; install-state.json says what to undo. Running install again changes nothing; uninstall is the
 * reverse, and running it again is harmless.
 */

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
    // not there (yet): compared by its resolved spelling
    return resolve(p);
  }
}

function sansTimes(s: InstallState): unknown {
  return { ...s, updatedAt: '' };
}

const now = (): Date => new Date();

/** install-state.json for one install: written only when it changed, with its updatedAt then. */
function stateSlot(paths: SledsPaths, prior: InstallState | null): InstallStateSlot {
  let written: InstallState | null = prior;
  const slot: InstallStateSlot = {
    prior,
    current: null,
    persist() {
      const state = slot.current;
      if (!state) return;
      if (written && deepEqual(sansTimes(state), sansTimes(written)) && existsSync(stateFile(paths))) return;
      state.updatedAt = now().toISOString();
      writeState(paths, state);
      written = JSON.parse(JSON.stringify(state)) as InstallState;
    },
  };
  return slot;
}

// ---------------------------------------------------------------------------------------------------------------

/** `cliMainArg` is the compiled CLI the harnesses will run; `musherEntry` the CLI that starts musher (this one). */
export async function runInstall(cliMainArg: string, args: string[], musherEntry: string = cliMainArg): Promise<number> {
  const opts = parseArgs('install', args);
  if (!opts) return 2;
  const rep = new Reporter(opts.json);
  const env = process.env;
  const home = homedir();
  const paths = resolvePaths(env, home);

  // 1. This package: what the harnesses will load.
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
  const missing = existsSync(cliMain) ? [] : [cliMain];
  for (const installer of HARNESS_INSTALLERS) {
    const files = installer.packageFiles(root);
    if (files.error && !missing.length) {
      rep.fail('package', files.error, 'reinstall sleds');
      return rep.finish();
    }
    missing.push(...files.missing);
  }
  if (missing.length) {
    rep.fail('package', `this sleds package is incomplete: ${missing[0]} is missing`, `run 'npm run build' in ${root} (or reinstall sleds)`);
    return rep.finish();
  }
  if (/\/_npx\//.test(root)) {
    rep.warn('package', `sleds ${version} runs from npx's cache (${root}), which npm may clear`, `install it for good ('npm install -g sleds'), then run 'sleds install' again`, { root, cliMain, version });
  } else rep.ok('package', `sleds ${version} at ${root}`, { root, cliMain, version });

  // 2. Each harness, in turn. The first begins the install state, written before its first change so that an
  // interrupted install can still be undone.
  const prior = readState(paths);
  if (prior.error) rep.warn('state', `${prior.error}; starting a new one`, `delete ${stateFile(paths)} if this keeps happening`);
  const slot = stateSlot(paths, prior.state);
  const ctx = { env, home, paths, cliMain, report: rep, now, packageRoot: root, sledsVersion: version, nodePath: process.execPath, state: slot };
  const closing: InstallStep[] = [];
  let summary: Record<string, unknown> = {};
  for (const installer of HARNESS_INSTALLERS) {
    const outcome = await installer.install(ctx);
    summary = { ...summary, ...outcome.summary };
    closing.push(...(outcome.closing ?? []));
    if (outcome.stop) return rep.finish();
  }
  const state = slot.current;

  // 3. `sleds` as a command in the user's own projects (pickup, estimate, pick run there).
  if (state) {
    const linked = linkCommand(env, home, cliMain, state.command ?? null);
    rep.add(linked.step);
    if (linked.link || state.command) {
      state.command = linked.link ?? state.command;
      try {
        slot.persist();
      } catch (e) {
        rep.fail('state', `cannot write ${stateFile(paths)} (${errorMessage(e)})`, `check that ${paths.configDir} is writable, then run sleds install again`);
      }
    }
  }

  // 4. musher.
  const m = await ensureStarted(musherEntry);
  if (m) rep.ok('musher', m.alreadyRunning ? `musher already running (pid ${m.pid})` : `musher started (pid ${m.pid})`, { pid: m.pid });
  else rep.fail('musher', 'musher did not start within 10 s', `see ${paths.logFile}, or run 'sleds musher' to watch it start`);

  for (const step of closing) rep.add(step);
  return rep.finish(summary);
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

  // 1. Each harness, in turn.
  const ctx = { env, home, paths, cliMain, report: rep, now, packageRoot: state?.packageRoot ?? dirname(dirname(dirname(cliMain))), state };
  const whenClean: InstallStep[] = [];
  let summary: Record<string, unknown> = {};
  for (const installer of HARNESS_INSTALLERS) {
    const outcome = await installer.uninstall(ctx);
    summary = { ...summary, ...outcome.summary };
    whenClean.push(...(outcome.whenClean ?? []));
  }

  // 2. The `sleds` command, if the link is still ours.
  rep.add(unlinkCommand(home, cliMain, state?.command ?? null));

  // 3. musher.
  const stopped = await stopMusherQuietly();
  if (!stopped.wasRunning) rep.ok('musher', 'musher was not running');
  else if (stopped.stopped) rep.ok('musher', `musher stopped (pid ${stopped.pid})`);
  else rep.fail('musher', `musher (pid ${stopped.pid}) did not stop within 10 s`, `kill ${stopped.pid}`);

  // 4. The state file, once everything it describes is undone.
  if (!rep.failed) {
    try {
      if (removeState(paths)) rep.ok('state', `forgot the install state (${stateFile(paths)})`);
    } catch (e) {
      rep.fail('state', `cannot delete ${stateFile(paths)} (${errorMessage(e)})`, 'delete it by hand');
    }
    for (const step of whenClean) rep.add(step);
  } else rep.info('state', `kept ${stateFile(paths)} so that 'sleds uninstall' can finish the job once the above is fixed`);
  return rep.finish(summary);
}
