import { existsSync, readdirSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { claudeConfigDir, resolvePaths } from '../core/paths.js';
import { packageRoot } from '../musher/package-root.js';
import { loadConfig } from '../musher/config/load.js';
import { seatIdentity } from '../musher/config/handle.js';
import { FAILED_DIR } from '../musher/ingest/spool-drain.js';
import { describeCredentials, readClaudeCredentials } from '../musher/quota/credentials.js';
import { musherClient } from '../protocol/client/client.js';
import { HARNESS_INSTALLERS } from '../harnesses/installers.js';
import { readState, stateFile } from '../harnesses/install-state.js';
import { musherHealth } from './musher-lifecycle.js';
import { Reporter } from './install-report.js';
import { checkCommand } from './path-link.js';

/**
 * `sleds doctor [--json]`: what is wired and what is not, one line each, every failing line with what to do.
 * Reads only; changes nothing. Exit 0 when all is well, 1 otherwise.
 */

const MIN_NODE = 20;

function errorMessage(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

export async function runDoctor(cliMain: string, json: boolean): Promise<number> {
  const rep = new Reporter(json);
  const env = process.env;
  const home = homedir();
  const paths = resolvePaths(env, home);

  // node
  const nodeMajor = Number(process.versions.node.split('.')[0]);
  if (nodeMajor >= MIN_NODE) rep.ok('node', `node ${process.versions.node} (${process.execPath})`, { version: process.versions.node, path: process.execPath });
  else rep.fail('node', `node ${process.versions.node} is too old`, `sleds needs node ${MIN_NODE} or newer — upgrade node, then run sleds install again`);

  // this package's build
  let root: string | null = null;
  try {
    root = packageRoot();
  } catch (e) {
    rep.fail('build', errorMessage(e), 'reinstall sleds');
  }
  if (root) {
    const built = join(root, 'dist', 'cli', 'main.js');
    if (existsSync(built)) rep.ok('build', `${built} is built`, { path: built });
    else rep.fail('build', `${built} is missing`, `run 'npm run build' in ${root}`);
  }

  // `sleds` as a command (the user's projects run pickup, estimate, pick by name)
  rep.add(checkCommand(env, home, cliMain));

  // each harness: found? wired? (harnesses/<id>/install.ts)
  for (const installer of HARNESS_INSTALLERS) await installer.doctor({ env, home, paths, cliMain, report: rep, now: () => new Date(), packageRoot: root });

  // install state
  const st = readState(paths);
  if (st.error) rep.warn('state', st.error, `run sleds install again to rewrite it`);
  else if (st.state) rep.info('state', `installed ${st.state.installedAt.slice(0, 10)} (plugin via ${st.state.plugin.method === 'claude' ? "'claude plugin'" : 'settings keys'}); state in ${stateFile(paths)}`, { method: st.state.plugin.method });
  else rep.info('state', `no install state (${stateFile(paths)}): sleds install was not run for this config`);

  // musher
  const health = await musherHealth(paths.socketFile);
  if (health) rep.ok('musher', `musher running (pid ${health.pid}) on ${paths.socketFile}`, { pid: health.pid, socket: paths.socketFile });
  else rep.fail('musher', `musher is not running (no answer on ${paths.socketFile})`, `start it with 'sleds musher start' (see ${paths.logFile} if it will not start)`);
  try {
    const st2 = statSync(paths.socketFile);
    const mode = st2.mode & 0o777;
    if (!st2.isSocket()) rep.fail('socket', `${paths.socketFile} is not a socket`, `stop musher, delete ${paths.socketFile}, then 'sleds musher start'`);
    else if (mode === 0o600) rep.ok('socket', `socket mode 0600`);
    else rep.fail('socket', `socket mode is 0${mode.toString(8)}, not 0600`, `restart musher: 'sleds musher stop' then 'sleds musher start'`);
  } catch {
    if (health) rep.fail('socket', `${paths.socketFile} is missing`, `restart musher: 'sleds musher stop' then 'sleds musher start'`);
  }

  // Claude's usage endpoint (per-model weekly bars, credits): what the poller says, or why it cannot poll.
  if (health) {
    const res = await musherClient({ socketPath: paths.socketFile, timeoutMs: 2000 }).call('usagePoller', {});
    if (res.ok) {
      const line = res.body.line;
      if (/: ok,|polled by another musher/.test(line)) rep.ok('usage endpoint', line);
      // The poller's line already says what to do when there is something to do.
      else rep.warn('usage endpoint', line, line.includes(' — ') ? undefined : 'see the log; the 5-hour and weekly bars still come from the statusline');
    } else {
      const why = res.kind === 'refused' ? res.error : res.reason;
      rep.warn('usage endpoint', `could not ask musher: ${why}`, `see ${paths.logFile}`);
    }
  } else {
    const creds = await readClaudeCredentials({ claudeConfigDir: claudeConfigDir(env, home), configDirFromEnv: Boolean(env.CLAUDE_CONFIG_DIR), now: () => Date.now() });
    if (creds.ok) rep.ok('usage endpoint', describeCredentials(creds, Date.now()));
    else rep.warn('usage endpoint', describeCredentials(creds, Date.now()));
  }

  // config.yml: what musher takes its upstreams, binaries and retention from
  const cfg = loadConfig(paths.configDir, home);
  if (cfg.error) rep.warn('config', cfg.error, `fix that line, then restart musher: 'sleds musher stop' then 'sleds musher start'`, { path: cfg.file });
  else if (cfg.warnings.length > 0) rep.warn('config', cfg.warnings.join('; '), 'remove or correct the key (known: upstreams, binaries, retention, handle, engine)', { path: cfg.file });
  else rep.info('config', existsSync(cfg.file) ? `config: ${cfg.file}` : `config: none (${cfg.file}); the built-in upstreams, binaries from PATH`, { path: cfg.file });

  // who this seat is (hand-offs and the roster name it by this)
  const who = seatIdentity(env, home);
  const setIt = "set another with 'sleds keys init --handle <name>'";
  if (who.problem) rep.warn('handle', `${who.problem}; using ${who.handle ?? 'no handle'}${who.source ? ` (${who.source})` : ''}`, `fix it, or run 'sleds keys init --handle <name>'`, { handle: who.handle, source: who.source, file: who.file });
  else if (!who.handle) rep.warn('handle', 'this seat has no handle (your OS user name is not one)', "run 'sleds keys init --handle <your roster handle>'", { handle: null, source: null, file: who.file });
  else if (who.source === 'config.yml') rep.ok('handle', `handle: ${who.handle} (handle: in ${who.file})`, { handle: who.handle, source: who.source, file: who.file });
  else if (who.source === 'SLEDS_SEAT') rep.info('handle', `handle: ${who.handle} (SLEDS_SEAT, which overrides handle: in config.yml)`, { handle: who.handle, source: who.source, file: who.file });
  else rep.info('handle', `handle: ${who.handle} (your OS user; ${setIt})`, { handle: who.handle, source: who.source, file: who.file });

  // spool
  const files = (dir: string): number => {
    try {
      return readdirSync(dir, { withFileTypes: true }).filter((d) => d.isFile() && !d.name.startsWith('.')).length;
    } catch {
      // A spool folder that does not exist holds no files.
      return 0;
    }
  };
  const waiting = files(paths.spoolDir);
  const failed = files(join(paths.spoolDir, FAILED_DIR));
  if (failed > 0) rep.warn('spool failed', `${failed} spooled event${failed > 1 ? 's' : ''} could not be taken in and ${failed > 1 ? 'are' : 'is'} kept in ${join(paths.spoolDir, FAILED_DIR)}`, "musher tries them again at its next start; the log says why each failed", { failed });
  if (waiting === 0) rep.ok('spool', 'spool is empty', { waiting, dir: paths.spoolDir });
  else if (health) rep.warn('spool', `${waiting} event${waiting > 1 ? 's wait' : ' waits'} in ${paths.spoolDir}`, 'musher takes them in as it goes; if the number stays, see the log', { waiting, dir: paths.spoolDir });
  else rep.warn('spool', `${waiting} event${waiting > 1 ? 's wait' : ' waits'} in ${paths.spoolDir}`, 'they are taken in when musher starts', { waiting, dir: paths.spoolDir });

  // log
  rep.info('log', `log: ${paths.logFile}${existsSync(paths.logFile) ? '' : ' (not written yet)'}`, { path: paths.logFile });

  return rep.finish();
}
