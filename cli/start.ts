import { askMusher, reportRefusal } from './musher-call.js';
import { fail } from './fail.js';

/** `sleds start <route>/<node>` (or `<node>` when one route has it): the node may start in an approve-mode route. */
export async function runStart(args: string[], json: boolean): Promise<number> {
  const words = args.filter((a) => !a.startsWith('--'));
  if (words.length !== 1) return fail('start takes one node — e.g. sleds start eng-503/schema', 2);
  const load = await askMusher('routeLoad', { body: { cwd: process.cwd() } }, 30_000);
  if (!load) return 1;
  // Outside a repository the stored routes still stand: only a file that does not pass stops here.
  if (!load.ok && load.status === 422) return reportRefusal(load, json);
  const res = await askMusher('routeStart', { body: { node: words[0]! } });
  if (!res) return 1;
  if (!res.ok) return reportRefusal(res, json);
  const b = res.body;
  const text = b.ready ? `${b.key}/${b.node} will start: the engine takes it on its next round` : b.waitingFor.length > 0 ? `${b.key}/${b.node} is approved; it starts once ${b.waitingFor.join(', ')} ${b.waitingFor.length === 1 ? 'is' : 'are'} merged` : `${b.key}/${b.node} is approved (${b.state})`;
  process.stdout.write(json ? `${JSON.stringify(b, null, 2)}\n` : `${text}\n`);
  return 0;
}
