import { execFile } from 'node:child_process';
import { homedir } from 'node:os';
import { DispatchAnswer, PickerAnswer, type HarnessCommand } from '../core/picker/row.js';
import { rowSentence } from '../core/picker/words.js';
import { tmuxArg } from '../core/resume-plan.js';
import { callMusher, reportRefusal } from './musher-call.js';
import { findCliBinary } from '../musher/config/cli-settings.js';
import { fail } from './fail.js';

/** `sleds pick <task> [--json]`: the dispatcher's picker. The ink view is loaded only here, and only without --json. */

/** In tmux, a Dispatch or Switch opens its command in a new window there (argv, no shell). One line on what happened. */
function openInTmux(cmd: HarnessCommand): Promise<string | null> {
  if (!process.env.TMUX) return Promise.resolve(null);
  const tmux = findCliBinary(process.env, homedir(), 'tmux').bin ?? 'tmux';
  const cwd = cmd.cwd ? ['-c', tmuxArg(cmd.cwd.replace(/#/g, '##'))] : [];
  return new Promise((resolve) => {
    execFile(tmux, ['new-window', ...cwd, '--', ...cmd.argv.map(tmuxArg)], { timeout: 10_000 }, (err, _out, stderr) => {
      resolve(err ? `tmux could not open a window: ${(stderr.trim().split('\n')[0] ?? '') || err.message}` : 'opened in a new tmux window');
    });
  });
}

export async function runPick(args: string[], json: boolean): Promise<number> {
  const [id, extra] = args.filter((a) => !a.startsWith('--'));
  if (!id || extra !== undefined) {
    return fail(`pick takes one task, e.g. sleds pick k3m9x2qa ('sleds tasks' lists them)`, 2);
  }
  const res = await callMusher('GET', `/v1/tasks/${encodeURIComponent(id)}/picker`, null, 15_000);
  if (!res) return 1;
  if (res.status >= 300) return reportRefusal(res, json);
  if (json) {
    process.stdout.write(`${JSON.stringify(res.body, null, 2)}\n`);
    return 0;
  }
  const answer = PickerAnswer.parse(res.body);
  const take = async (row: { index: number }): Promise<DispatchAnswer> => {
    const r = await callMusher('POST', `/v1/tasks/${encodeURIComponent(answer.task.id)}/dispatch`, { row: row.index }, 15_000);
    if (!r) return { ok: false, line: 'musher is not running' };
    if (r.status >= 300) return { ok: false, line: String(r.body.error ?? `musher answered HTTP ${r.status}`) };
    const d = DispatchAnswer.parse(r.body);
    if (d.ok && d.command) {
      const opened = await openInTmux(d.command);
      if (opened) return { ...d, line: `${d.line}\n${opened}` };
    }
    return d;
  };
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
