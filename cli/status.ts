import { homedir } from 'node:os';
import { resolvePaths } from '../core/paths.js';
import { renderStatusCard, type StatusSnapshot } from '../core/status.js';
import { formatAge, formatUsd } from '../core/format.js';
import { requestMusher } from '../hooks/musher-client.js';
import { MUSHER_AWAY } from './musher-call.js';

/** `sleds status [--json]`: the seat as musher sees it. */
export async function fetchStatus(): Promise<StatusSnapshot> {
  const paths = resolvePaths(process.env, homedir());
  const res = await requestMusher(paths.socketFile, 'GET', '/v1/status', null, {}, 5000);
  if (res.status !== 200) throw new Error(`musher answered HTTP ${res.status}: ${res.body.slice(0, 200)}`);
  return JSON.parse(res.body) as StatusSnapshot;
}

export async function runStatus(json: boolean): Promise<number> {
  let status: StatusSnapshot;
  try {
    status = await fetchStatus();
  } catch {
    process.stderr.write(MUSHER_AWAY);
    return 1;
  }
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
