import type { z } from 'zod';
import type { NeedsReply } from '../protocol/schemas.js';
import { askMusher, reportRefusal } from './musher-call.js';

/**
 * `sleds needs`: what waits for a person (issue 14 § 10) — the questions route nodes' agents parked, and tasks' — each
 * with its answers (two, or up to four for an escalated one) and the command that answers it. The nodes that do not depend on one go on meanwhile.
 */

type Need = z.output<typeof NeedsReply>['needs'][number];

function ago(ms: number, now: number): string {
  const min = Math.max(0, Math.round((now - ms) / 60_000));
  return min < 60 ? `${min} min ago` : min < 48 * 60 ? `${Math.round(min / 60)} h ago` : `${Math.round(min / 1440)} days ago`;
}

export function drawNeeds(needs: readonly Need[], now: number): string {
  if (needs.length === 0) return 'nothing waits for you: no parked questions';
  const blocks = needs.map((n) => {
    const lines = [`${n.of} (${n.title}) asks, ${ago(n.askedAt, now)}${n.inSlack ? ' · in Slack' : ''}:`, `  ${n.question}`];
    // Two answers for a parked question, up to four for one the ladder escalated (A–D).
    n.options.forEach((o, i) => lines.push(`  ${'ABCD'[i] ?? '?'}) ${o}`));
    lines.push(`  answer: ${n.answerWith}`);
    return lines.join('\n');
  });
  return blocks.join('\n\n');
}

export async function runNeeds(json: boolean): Promise<number> {
  const res = await askMusher('needs', {});
  if (!res) return 1;
  if (!res.ok) return reportRefusal(res, json);
  process.stdout.write(json ? `${JSON.stringify(res.body, null, 2)}\n` : `${drawNeeds(res.body.needs, Date.now())}\n`);
  return 0;
}
