import type { z } from 'zod';
import { formatUsd } from '../core/format.js';
import type { QueueReply } from '../protocol/schemas.js';
import { fail } from './fail.js';
import { askMusher, reportRefusal } from './musher-call.js';

/**
 * `sleds queue [--json]`: the overnight jobs (issue 15 § 1) — each with its state, its band at batch prices, its cap,
 * what it has spent on the half-price tier so far, and its log; `sleds queue cancel <job>` ends one.
 */

type Job = z.output<typeof QueueReply>['jobs'][number];

const money = (usd: number) => formatUsd(Math.round(usd * 1_000_000));

export function drawQueue(jobs: readonly Job[]): string {
  if (jobs.length === 0) return 'no overnight jobs — choose exit 3 at a wall, type /sled overnight in a session, or mark a route node `overnight: true`';
  return jobs
    .map((j) => {
      const band = j.band ? `${money(j.band.lowUsd)}–${money(j.band.highUsd)} at ½ price` : 'not sized yet';
      const cap = j.capMicros === null ? 'no cap' : `cap ${formatUsd(j.capMicros)}`;
      const lines = [`${j.job}  ${j.state}  ${band} · ${cap} · spent ${formatUsd(j.spentMicros)}  ${j.title}`];
      if (j.note) lines.push(`  ${j.note}`);
      for (const l of j.log.slice(-6)) lines.push(`  ${l}`);
      return lines.join('\n');
    })
    .join('\n\n');
}

export async function runQueue(args: string[], json: boolean): Promise<number> {
  const [verb, job, ...extra] = args.filter((a) => !a.startsWith('--'));
  if (verb === undefined) {
    const res = await askMusher('queue', {});
    if (!res) return 1;
    if (!res.ok) return reportRefusal(res, json);
    process.stdout.write(json ? `${JSON.stringify(res.body, null, 2)}\n` : `${drawQueue(res.body.jobs)}\n`);
    return 0;
  }
  if (verb !== 'cancel' || !job || extra.length > 0) return fail('queue takes no word, or cancel <job> — e.g. sleds queue cancel eng-503/mailer', 2);
  const res = await askMusher('queueCancel', { body: { job } });
  if (!res) return 1;
  if (!res.ok) return reportRefusal(res, json);
  process.stdout.write(json ? `${JSON.stringify(res.body, null, 2)}\n` : `cancelled ${res.body.job}\n`);
  return 0;
}
