import { execFileSync, spawnSync } from 'node:child_process';
import { homedir } from 'node:os';
import { resolvePaths } from '../core/paths.js';
import { ROUTE_ID } from '../core/routes/route-file.js';
import { findCliBinary } from '../musher/config/cli-settings.js';
import { defaultRunsDir, latestRunDir, nodeDirOf, nodesWithRuns, readRunFile, RunRecord, runFile, WindowRecord, type WindowRecord as Window } from '../musher/engine/run-files.js';
import { fail } from './fail.js';

/**
 * `sleds attach <route>/<node> | <node> [--json]`: watch a node work. The node's latest run folder (the engine's runs
 * dir, read here, read-only) says how it runs: in a window of the engine's tmux server (then this attaches to that
 * window), in a terminal of its own, or headless (then it prints the `tail -f` that follows its stream). `--json`
 * prints { node, runner, window, log } and attaches to nothing.
 */

const USAGE = 'attach takes a node — e.g. sleds attach eng-503/schema (or sleds attach schema when one route has it)';

interface Found {
  node: string;
  runDir: string;
}

function findNode(runsDir: string, target: string): Found | { error: string } {
  const parts = target.split('/');
  if (parts.length > 2 || parts.some((p) => !ROUTE_ID.test(p))) return { error: `'${target.slice(0, 80)}' is not a node — ${USAGE}` };
  const known = nodesWithRuns(runsDir);
  const matches = parts.length === 2 ? known.filter((n) => n === target) : known.filter((n) => n.endsWith(`/${target}`));
  const runDir = matches.length === 1 ? latestRunDir(nodeDirOf(runsDir, ...(matches[0]!.split('/') as [string, string]))) : null;
  if (matches.length === 1 && runDir !== null) return { node: matches[0]!, runDir };
  if (matches.length > 1) return { error: `'${target}' is a node of ${matches.length} routes: ${matches.join(', ')} — name one, e.g. sleds attach ${matches[0]}` };
  const others = known.filter((n) => n !== target);
  return { error: `no run of '${target}' here — ${others.length > 0 ? `nodes that have run: ${others.join(', ')}` : 'no node has run yet (sleds engine starts them)'}` };
}

/** Whether the window is still the run's (the same pane: a restarted server reuses window ids). */
function windowStands(tmux: string, w: Window): boolean {
  try {
    const pid = execFileSync(tmux, ['-S', w.socket, 'display-message', '-p', '-t', w.windowId, '#{pane_pid}'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 5_000 }).trim();
    return Number(pid) === w.panePid;
  } catch {
    // No server, or no such window: it closed (tmux says which on its stderr, ignored here).
    return false;
  }
}

export async function runAttach(args: string[], json: boolean): Promise<number> {
  const words = args.filter((a) => !a.startsWith('--'));
  if (words.length !== 1) return fail(USAGE, 2);
  const home = homedir();
  const runsDir = defaultRunsDir(resolvePaths(process.env, home).dataDir);
  const found = findNode(runsDir, words[0]!);
  if ('error' in found) return fail(found.error);
  const { node, runDir } = found;
  const log = runFile(runDir, 'stdout');
  const runner = readRunFile(runDir, 'run', RunRecord)?.runner ?? 'headless';
  const report = (window: Window | null, text: string): number => {
    const body = { node, runner, window: window ? { session: window.session, windowId: window.windowId, socket: window.socket } : null, log };
    process.stdout.write(json ? `${JSON.stringify(body, null, 2)}\n` : `${text}\n`);
    return 0;
  };
  const follow = `follow its stream with: tail -f ${log}`;
  if (runner === 'headless') return report(null, `${node} runs headless, with no window to attach to — ${follow}`);
  if (runner === 'terminal') return report(null, `${node} runs in a terminal window of its own (engine.terminal.command) — ${follow}`);
  const window = readRunFile(runDir, 'window', WindowRecord);
  const tmux = findCliBinary(process.env, home, 'tmux');
  if (window === null || !tmux.bin) return report(null, `${node} ran in tmux, but ${window === null ? 'its window was never recorded' : `tmux was not found (${tmux.how})`} — ${follow}`);
  if (!windowStands(tmux.bin, window)) return report(null, `${node}'s window has closed — ${follow}`);
  if (json) return report(window, '');
  const server = ['-S', window.socket];
  execFileSync(tmux.bin, [...server, 'select-window', '-t', window.windowId], { stdio: 'ignore' });
  // Inside another tmux the engine's server is a separate one: attaching nests it (its prefix key is the outer one's twice).
  const env = { ...process.env };
  delete env.TMUX;
  const r = spawnSync(tmux.bin, [...server, 'attach-session', '-t', window.session], { stdio: 'inherit', env });
  if (r.error) return fail(`tmux attach: ${r.error.message}`);
  return r.status ?? 1;
}
