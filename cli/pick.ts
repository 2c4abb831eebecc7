import { homedir } from 'node:os';
import { join } from 'node:path';
import { resolvePaths } from '../core/paths.js';
import type { DispatchAnswer, HarnessCommand } from '../core/picker/row.js';
import { rowSentence } from '../core/picker/words.js';
import { openWatched, type Watched } from './dispatch-watch.js';
import { askMusher, reportRefusal } from './musher-call.js';
import { findCliBinary } from '../musher/config/cli-settings.js';
import { fail } from './fail.js';

/** `sleds pick <task> [--json]`: the dispatcher's picker. The ink view is loaded only here, and only without --json. */

/** In tmux, a Dispatch or Switch opens its command in a new window there (argv, no shell), watched for its first
 *  seconds. Null outside tmux. */
function openInTmux(cmd: HarnessCommand): Promise<Watched | null> {
  if (!process.env.TMUX) return Promise.resolve(null);
  return openWatched(cmd, {
    tmux: findCliBinary(process.env, homedir(), 'tmux').bin ?? 'tmux',
    dir: join(resolvePaths(process.env, homedir()).stateDir, 'dispatch'),
    now: () => Date.now(),
    sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
  });
}

export async function runPick(args: string[], json: boolean): Promise<number> {
  const [id, rowArg, extra] = args.filter((a) => !a.startsWith('--'));
  const rowIndex = rowArg === undefined ? null : Number(rowArg);
  if (!id || extra !== undefined || (rowIndex !== null && !(Number.isInteger(rowIndex) && rowIndex > 0))) {
    return fail(`pick takes a task and, to take one of its rows, the row's number — e.g. sleds pick k3m9x2qa 2 ('sleds tasks' lists them)`, 2);
  }
  const res = await askMusher('picker', { params: { id } }, 15_000);
  if (!res) return 1;
  if (!res.ok) return reportRefusal(res, json);
  if (json && rowIndex === null) {
    process.stdout.write(`${JSON.stringify(res.body, null, 2)}\n`);
    return 0;
  }
  const answer = res.body;
  const take = async (row: { index: number }): Promise<DispatchAnswer> => {
    const r = await askMusher('dispatch', { params: { id: answer.task.id }, body: { row: row.index } }, 15_000);
    if (!r) return { ok: false, line: 'musher is not running' };
    if (!r.ok) return { ok: false, line: r.error };
    const d = r.body;
    if (d.ok && d.command) {
      const opened = await openInTmux(d.command);
      if (opened) return { ...d, ok: opened.ok, line: `${d.line}\n${opened.line}` };
    }
    return d;
  };
  if (rowIndex !== null) {
    // `sleds pick <task> <row>`: take that row without the view.
    const d = await take({ index: rowIndex });
    // --json: the answer as musher gave it, or (it did not happen) the one-line error every command gives.
    process.stdout.write(json ? `${JSON.stringify(d.ok ? d : { error: d.line }, null, 2)}\n` : `${d.line}\n`);
    return d.ok ? 0 : 1;
  }
  if (!process.stdin.isTTY || !process.stdout.isTTY) {
    // No terminal to drive: the rows in words, and how to take one.
    process.stdout.write(`${answer.text}\n\n${answer.rows.map((r) => `${String(r.index).padStart(2)}  ${rowSentence(r)}`).join('\n')}\n`);
    return 0;
  }
  const { showPickView } = await import('./pick-view.js');
  const color = !process.env.NO_COLOR;
  const last = await showPickView({ answer, color, onTake: take });
  return last && !last.ok ? 1 : 0;
}
