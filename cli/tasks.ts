import { formatAge } from '../core/format.js';
import type { Task } from '../core/task/task.js';
import type { Band } from '../core/estimate/band.js';
import { formatBand } from '../core/estimate/format.js';
import type { SignedReceipt } from '../core/receipt/receipt.js';
import type { TaskList } from '../musher/tasks/api.js';
import { callMusher, reportRefusal } from './musher-call.js';
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
  const res = await callMusher('GET', '/v1/tasks');
  if (!res) return 1;
  const list = res.body as unknown as TaskList;
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
  let res;
  if (field === undefined) res = await callMusher('GET', `/v1/tasks/${encodeURIComponent(id)}`);
  else if (field === 'worth' || field === 'type') {
    const value = rest.join(' ').trim();
    if (!value) {
      return fail(`${field} what? e.g. sleds task ${id} ${field === 'worth' ? 'worth high' : 'type bugfix'}`, 2);
    }
    res = await callMusher('POST', `/v1/tasks/${encodeURIComponent(id)}`, { [field]: value === 'none' ? null : value });
  } else if (field === 'done') res = await callMusher('POST', `/v1/tasks/${encodeURIComponent(id)}/done`, {});
  else {
    return fail(`task ${id} takes worth <level>, type <label> or done, not '${field}'`, 2);
  }
  if (!res) return 1;
  if (res.status >= 300) return reportRefusal(res, json);
  if (json) {
    process.stdout.write(`${JSON.stringify(res.body, null, 2)}\n`);
    return 0;
  }
  if (field === 'done') {
    const r = res.body as { receipt: SignedReceipt; line: string };
    process.stdout.write(`task ${r.receipt.body.taskId} done: receipt ${r.receipt.body.id}: ${r.line}\n`);
    return 0;
  }
  const t = res.body.task as Task;
  const band = (res.body.band as Band | null | undefined) ?? null;
  const receiptLine = (res.body.receiptLine as string | null | undefined) ?? null;
  const sessions = (res.body.sessions as string[] | undefined) ?? [];
  process.stdout.write(
    [
      `task ${t.id}: ${t.title}`,
      `  state ${t.state} · worth ${t.worth ?? 'not set'} · type ${t.type ?? 'not set'} · from ${t.source}${t.sourceRef ? ` (${t.sourceRef})` : ''}`,
      `  repository ${t.repo ?? 'unknown'} · ${t.turns} prompt(s)${sessions.length ? ` · sessions ${sessions.map((s) => s.slice(0, 8)).join(', ')}` : ''}`,
      `  band ${band ? formatBand(band) : 'none yet'}`,
      ...(receiptLine ? [`  receipt ${(res.body.receipt as SignedReceipt).body.id}: ${receiptLine}`] : []),
    ].join('\n') + '\n',
  );
  return 0;
}
