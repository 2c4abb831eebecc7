import { homedir } from 'node:os';
import { resolvePaths } from '../core/paths.js';
import { formatAge } from '../core/format.js';
import { requestMusher } from '../hooks/musher-client.js';

/** A hand-off as musher's API sends it (the fields this command shows). */
interface HandoffRow {
  id: string;
  direction: 'sent' | 'received';
  peer: string;
  expiresAt: number;
  transport: string;
  state: string;
  pickedUpBy: string | null;
  pickedUpAt: number | null;
}

/** `sleds handoffs prune [--json]`: the expired hand-offs removed from this repository's remote. */
async function runPrune(json: boolean): Promise<number> {
  const paths = resolvePaths(process.env, homedir());
  let res;
  try {
    res = await requestMusher(paths.socketFile, 'POST', '/v1/handoffs/prune', JSON.stringify({ cwd: process.cwd() }), { 'content-type': 'application/json' }, 60_000);
  } catch {
    process.stderr.write(`sleds: musher is not running — start it with 'sleds musher start' or let the next hook start it\n`);
    return 1;
  }
  const body = JSON.parse(res.body) as { pruned?: string[]; error?: string };
  if (!body.pruned) {
    process.stderr.write(`sleds: ${body.error ?? `musher answered ${res.status}`}\n`);
    return 1;
  }
  if (json) process.stdout.write(`${JSON.stringify(body, null, 2)}\n`);
  else process.stdout.write(body.pruned.length === 0 ? 'No expired hand-offs on the remote.\n' : `Removed ${body.pruned.length} expired hand-off(s): ${body.pruned.join(', ')}\n`);
  return 0;
}

/** `sleds handoffs [prune] [--json]`: what this seat sent and received, with state and expiry. */
export async function runHandoffs(args: string[], json: boolean): Promise<number> {
  if (args[0] === 'prune') return runPrune(json);
  const paths = resolvePaths(process.env, homedir());
  let body: { now: number; handoffs: HandoffRow[] };
  try {
    const res = await requestMusher(paths.socketFile, 'GET', '/v1/handoffs', null, {}, 5000);
    body = JSON.parse(res.body) as typeof body;
  } catch {
    process.stderr.write(`sleds: musher is not running — start it with 'sleds musher start' or let the next hook start it\n`);
    return 1;
  }
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
