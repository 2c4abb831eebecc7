import { formatAge } from '../core/format.js';
import { askMusher, reportRefusal } from './musher-call.js';

/** `sleds handoffs prune [--json]`: the expired hand-offs removed from this repository's remote. */
async function runPrune(json: boolean): Promise<number> {
  const res = await askMusher('handoffsPrune', { body: { cwd: process.cwd() } }, 60_000);
  if (!res) return 1;
  if (!res.ok) return reportRefusal(res, json);
  const body = res.body;
  if (json) process.stdout.write(`${JSON.stringify(body, null, 2)}\n`);
  else process.stdout.write(body.pruned.length === 0 ? 'No expired hand-offs on the remote.\n' : `Removed ${body.pruned.length} expired hand-off(s): ${body.pruned.join(', ')}\n`);
  return 0;
}

/** `sleds handoffs [prune] [--json]`: what this seat sent and received, with state and expiry. */
export async function runHandoffs(args: string[], json: boolean): Promise<number> {
  if (args[0] === 'prune') return runPrune(json);
  // Asking also checks the remote for pickups of what was sent: give it the time a fetch takes.
  const res = await askMusher('handoffs', {}, 30_000);
  if (!res) return 1;
  if (!res.ok) return reportRefusal(res, json);
  const body = res.body;
  if (json) {
    process.stdout.write(`${JSON.stringify(body, null, 2)}\n`);
    return 0;
  }
  if (body.handoffs.length === 0) {
    process.stdout.write('No hand-offs sent or received yet. /sled handoff <teammate> hands a session over (at a wall, /sled 5).\n');
    return 0;
  }
  for (const h of body.handoffs) {
    const arrow = h.direction === 'sent' ? `→ ${h.peer}` : `← ${h.peer}`;
    const expiry = h.expiresAt > body.now ? `expires in ${formatAge(h.expiresAt - body.now)}` : 'expired';
    const picked = h.pickedUpBy ? ` · picked up by ${h.pickedUpBy} ${formatAge(body.now - (h.pickedUpAt ?? body.now))} ago` : '';
    process.stdout.write(`${h.id}  ${arrow}  ${h.state}${picked}  ${expiry}  ${h.transport}\n`);
  }
  return 0;
}
