import { formatAge } from '../core/format.js';
import type { Task } from '../core/task/task.js';
import type { Band } from '../core/estimate/band.js';
import type { SignedReceipt } from '../core/receipt/receipt.js';
import { formatBand } from '../core/estimate/format.js';
import { askMusher, reportRefusal } from './musher-call.js';
import { fail } from './fail.js';

/** `sleds tasks [--json]` and `sleds task <id> [worth <level> | type <label> | done] [--json]`. */

/** One line: id, state, worth, type, age, title. */
export function taskLine(t: Task, now: number): string {
  const worth = t.worth ?? 'no worth';
  return [t.id, t.state.padEnd(6), worth.padEnd(8), (t.type ?? '-').padEnd(10), `${formatAge(now - t.createdAt)} ago`.padEnd(9), t.title].join('  ');
}

export async function runTasks(args: string[], json: boolean): Promise<number> {
  const positional = args.filter((a) => !a.startsWith('--'));
  if (positional.length > 0) {
    return fail(`tasks takes no '${positional[0]}' — 'sleds task <id>' shows one`, 2);
  }
  const res = await askMusher('tasks', {});
  if (!res) return 1;
  if (!res.ok) return reportRefusal(res, json);
  const list = res.body;
  if (json) {
    process.stdout.write(`${JSON.stringify(list, null, 2)}\n`);
    return 0;
  }
  if (list.tasks.length === 0) {
    process.stdout.write('No tasks yet: the first prompt of a session starts one, or /sled task <title>.\n');
    return 0;
  }
  process.stdout.write(`${list.tasks.map((t) => taskLine(t, list.now)).join('\n')}\n`);
  return 0;
}

export async function runTask(args: string[], json: boolean): Promise<number> {
  const [id, field, ...rest] = args.filter((a) => !a.startsWith('--'));
  if (!id) {
    return fail(`which task? e.g. sleds task k3m9x2qa ('sleds tasks' lists them)`, 2);
  }
  if (field === undefined) {
    const res = await askMusher('task', { params: { id } });
    if (!res) return 1;
    if (!res.ok) return reportRefusal(res, json);
    if (json) {
      process.stdout.write(`${JSON.stringify(res.body, null, 2)}\n`);
      return 0;
    }
    printTask(res.body);
    return 0;
  }
  if (field === 'done') {
    const res = await askMusher('taskDone', { params: { id }, body: {} });
    if (!res) return 1;
    if (!res.ok) return reportRefusal(res, json);
    const r = res.body;
    process.stdout.write(json ? `${JSON.stringify(r, null, 2)}\n` : `task ${r.receipt.body.taskId} done: receipt ${r.receipt.body.id}: ${r.line}\n`);
    return 0;
  }
  if (field !== 'worth' && field !== 'type') {
    return fail(`task ${id} takes worth <level>, type <label> or done, not '${field}'`, 2);
  }
  const value = rest.join(' ').trim();
  if (!value) {
    return fail(`${field} what? e.g. sleds task ${id} ${field === 'worth' ? 'worth high' : 'type bugfix'}`, 2);
  }
  const res = await askMusher('taskUpdate', { params: { id }, body: { [field]: value === 'none' ? null : value } });
  if (!res) return 1;
  if (!res.ok) return reportRefusal(res, json);
  if (json) {
    process.stdout.write(`${JSON.stringify(res.body, null, 2)}\n`);
    return 0;
  }
  // worth / type: the task as the update left it (its answer carries the task alone).
  printTask(res.body);
  return 0;
}

function printTask(shown: { task: Task; band?: Band | null; sessions?: string[]; receipt?: SignedReceipt | null; receiptLine?: string | null }): void {
  const { task: t, band = null, sessions = [], receipt = null, receiptLine = null } = shown;
  process.stdout.write(
    [
      `task ${t.id}: ${t.title}`,
      `  state ${t.state} · worth ${t.worth ?? 'not set'} · type ${t.type ?? 'not set'} · from ${t.source}${t.sourceRef ? ` (${t.sourceRef})` : ''}`,
      `  repository ${t.repo ?? 'unknown'} · ${t.turns} prompt(s)${sessions.length ? ` · sessions ${sessions.map((s) => s.slice(0, 8)).join(', ')}` : ''}`,
      `  band ${band ? formatBand(band) : 'none yet'}`,
      ...(receiptLine && receipt ? [`  receipt ${receipt.body.id}: ${receiptLine}`] : []),
    ].join('\n') + '\n',
  );
}
