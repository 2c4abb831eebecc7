import { renderStatusCard } from '../core/status.js';
import { formatAge, formatUsd } from '../core/format.js';
import { askMusher, reportRefusal } from './musher-call.js';

/** `sleds status [--json]`: the seat as musher sees it. */
export async function runStatus(json: boolean): Promise<number> {
  const res = await askMusher('status', {});
  if (!res) return 1;
  if (!res.ok) return reportRefusal(res, json);
  const status = res.body;
  if (json) {
    process.stdout.write(`${JSON.stringify(status, null, 2)}\n`);
    return 0;
  }
  const lines = [renderStatusCard(status, null), '', 'Sessions (latest first):'];
  if (status.sessions.length === 0) lines.push('  none yet');
  for (const s of status.sessions.slice(0, 10)) {
    const money = s.unpricedRecords > 0 ? `${formatUsd(s.costMicros)} + ${s.unpricedRecords} unpriced` : formatUsd(s.costMicros);
    lines.push(`  ${s.sessionId.slice(0, 8)}  ${s.harness.padEnd(11)} ${money.padStart(9)}  ${formatAge(status.now - s.lastSeenAt)} ago  ${s.cwd ?? ''}`);
  }
  process.stdout.write(`${lines.join('\n')}\n`);
  return 0;
}
