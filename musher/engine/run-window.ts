import { watch } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import type { HarnessEvent } from '../../harnesses/events.js';
import { harnessById } from '../../harnesses/registry.js';
import { formatClock, oneLine } from '../../core/format.js';
import { spawnHarness } from './runner.js';
import { LineFollower, readEvents } from './run-handle.js';
import { EnvRecord, readRunFile, RunRecord, runFile, startTicksOf, writeRunFile } from './run-files.js';

/**
 * `sleds engine run-window <runDir>`: what a tmux window or a terminal runs for a node. It starts the harness exactly
 * as the headless runner does (musher/engine/runner.ts spawnHarness: detached, stdin the prompt file, stdout the run's
 * stream file, proc.json), so the engine follows, reattaches and recovers the run the same way, and prints the stream's
 * events as they come, one line each, for the person watching. The screen is only a view: the engine never reads it.
 * The harness's environment comes from env.json (0600), never argv. Exits with the harness's code.
 */

const n = (x: number): string => x.toLocaleString('en-US');

/** One line for a person watching, or null for what carries nothing to show. */
export function renderEvent(e: HarnessEvent): string | null {
  switch (e.kind) {
    case 'turn_started':
      return `started${e.sessionId ? ` · session ${oneLine(e.sessionId, 80)}` : ''}${e.model ? ` · ${oneLine(e.model, 80)}` : ''}`;
    case 'tool_call':
      return `tool ${oneLine(e.name, 80)}`;
    case 'question':
      return `asks: ${oneLine(e.text)}`;
    case 'usage':
      return `usage ${n(e.inputTokens)} in · ${n(e.outputTokens)} out · ${n(e.cacheReadTokens)} cache read · ${n(e.cacheWriteTokens)} cache write`;
    case 'rate_limited':
      return `limit reached${e.window ? ` (${oneLine(e.window, 40)})` : ''}${e.resetsAtMs !== null ? ` · resets ${formatClock(e.resetsAtMs)}` : ''}`;
    case 'turn_completed':
      return `${e.ok ? 'done' : 'failed'}${e.text ? `: ${oneLine(e.text)}` : ''}`;
    case 'error':
      return `error: ${oneLine(e.message)}`;
    case 'ignored':
      return null;
  }
}

function say(line: string): void {
  process.stdout.write(`${line}\n`);
}

export async function runWindow(args: string[]): Promise<number> {
  const given = args[0];
  if (!given || !isAbsolute(given)) {
    process.stderr.write('sleds: engine run-window takes a run folder (an absolute path) — the engine starts it, not a person\n');
    return 2;
  }
  const runDir = resolve(given);
  const run = readRunFile(runDir, 'run', RunRecord);
  const env = readRunFile(runDir, 'env', EnvRecord);
  if (run === null || env === null) {
    process.stderr.write(`sleds: ${runDir} holds no run to start (run.json and env.json) — it was started already, or not by the engine\n`);
    return 1;
  }
  writeRunFile(runDir, 'wrapper', { pid: process.pid, startTicks: startTicksOf(process.pid) });
  const found = harnessById(run.harness);
  const { child, proc } = spawnHarness(runDir, run.argv, run.cwd, env);
  say(`sleds engine · ${run.label} · ${found.ok ? found.adapter.displayName : run.harness} (pid ${proc.pid}) in ${run.cwd}`);
  say('this window shows the run; the engine follows its stream, and closing the window does not stop it');
  if (!found.ok) say(`(its events cannot be shown here: ${found.error})`);

  const follower = new LineFollower(runFile(runDir, 'stdout'));
  const show = (done: boolean) => {
    if (!found.ok) return;
    for (const e of readEvents(found.adapter, follower, done)) {
      const line = renderEvent(e);
      if (line !== null) say(line);
    }
  };
  const watcher = watch(runDir, () => show(false));
  watcher.on('error', () => undefined);
  show(false);

  const exit = await new Promise<{ code: number | null; signal: string | null }>((done) => {
    child.on('exit', (code, signal) => done({ code, signal }));
    child.on('error', (e) => {
      say(`error: ${e.message}`);
      done({ code: 127, signal: null });
    });
  });
  watcher.close();
  show(true);
  writeRunFile(runDir, 'exit', exit);
  say(`— ${run.label} ended (${exit.signal ? `signal ${exit.signal}` : `exit ${exit.code ?? '?'}`})`);
  return exit.code ?? 1;
}
