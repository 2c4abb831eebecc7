import { formatAge } from '../core/format.js';
import type { TrackerRoundReply } from '../protocol/schemas.js';
import { askMusher, reportRefusal } from './musher-call.js';
import { fail } from './fail.js';

/** `sleds tracker [--json]` (the items taken as tasks) and `sleds tracker poll [--json]` (one round now). */

/** What a round did, a line per tracker. */
export function roundLines(round: TrackerRoundReply): string[] {
  return round.adapters.map((a) => {
    if (!a.configured) return `${a.adapter}: not configured — add tracker: {${a.adapter}: {repos: [owner/name]}} to .sleds/policy.yml or ~/.config/sleds/policy.yml`;
    const parts = [`${a.items} open item${a.items === 1 ? '' : 's'}`, `${a.created.length} new task${a.created.length === 1 ? '' : 's'}`, `${a.commented.length} commented`];
    const lines = [`${a.adapter}: ${parts.join(', ')}`];
    for (const c of a.created) lines.push(`  task ${c.taskId} ← ${c.ref}`);
    for (const e of a.errors) lines.push(`  ${e}`);
    return lines.join('\n');
  });
}

export async function runTracker(args: string[], json: boolean): Promise<number> {
  const [sub, ...extra] = args.filter((a) => !a.startsWith('--'));
  if (extra.length > 0 || (sub !== undefined && sub !== 'poll')) {
    return fail(`tracker takes poll or nothing — e.g. sleds tracker poll`, 2);
  }
  if (sub === 'poll') {
    // A round is a search and a comment per new item: give it time.
    const res = await askMusher('trackerPoll', { body: {} }, 120_000);
    if (!res) return 1;
    if (!res.ok) return reportRefusal(res, json);
    const round = res.body;
    if (json) process.stdout.write(`${JSON.stringify(round, null, 2)}\n`);
    else process.stdout.write(`${roundLines(round).join('\n')}\n`);
    return round.adapters.some((a) => a.errors.length > 0) ? 1 : 0;
  }
  const res = await askMusher('tracker', {});
  if (!res) return 1;
  if (!res.ok) return reportRefusal(res, json);
  const { now, items } = res.body;
  if (json) {
    process.stdout.write(`${JSON.stringify({ now, items }, null, 2)}\n`);
    return 0;
  }
  if (items.length === 0) {
    process.stdout.write('No tracker items yet: label an issue sleds in a repository the policy names under tracker.github.repos.\n');
    return 0;
  }
  const lines = items.map((i) => [i.taskId, i.itemKey.padEnd(24), i.commentRef ? 'commented' : 'no comment yet', i.receiptLine ? 'receipted' : '', `taken ${formatAge(now - i.seenAt)} ago`].filter(Boolean).join('  '));
  process.stdout.write(`${lines.join('\n')}\n`);
  return 0;
}
