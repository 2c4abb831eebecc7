import { homedir } from 'node:os';
import { resolvePaths } from '../core/paths.js';
import { formatAge, formatReset } from '../core/format.js';
import type { Job } from '../musher/scheduler/job.js';
import type { JobsList } from '../musher/scheduler/api.js';
import { requestMusher } from '../hooks/musher-client.js';

/** `sleds jobs [--json]` and `sleds jobs cancel <id> [--json]`: what musher will do at a time, and what it did. */

const AWAY = `sleds: musher is not running — start it with 'sleds musher start' or let the next hook start it\n`;

/** One line: id, what, when, state, result. */
export function jobLine(job: Job, now: number): string {
  const harness = job.payload.harness === 'codex' ? 'codex' : job.payload.harness === 'claude-code' ? 'claude' : '';
  const what = [job.kind, harness, job.sessionId ? job.sessionId.slice(0, 8) : null, job.wallId ? `wall ${job.wallId}` : null].filter(Boolean).join(' ');
  let when: string;
  if (job.state === 'scheduled' || job.state === 'running') {
    const at = job.state === 'running' && job.startedAt !== null ? job.startedAt : job.runAt;
    const rel = at > now ? `in ${formatAge(at - now)}` : `${formatAge(now - at)} ago`;
    when = `${job.state === 'running' ? 'since' : 'at'} ${formatReset(at, now)} (${rel})`;
  } else {
    const at = job.finishedAt ?? job.updatedAt;
    when = `${formatReset(at, now)} (${formatAge(now - at)} ago)`;
  }
  let outcome = job.result?.summary ?? '';
  if (job.state === 'scheduled' && job.attempts > 0) outcome = `not yet ×${job.attempts}: ${job.lastCheck ?? ''}`;
  if (job.state === 'running' && !outcome) outcome = typeof job.handle?.logFile === 'string' ? `output: ${job.handle.logFile}` : '';
  return [job.id, what.padEnd(28), when.padEnd(24), job.state.padEnd(9), outcome].join('  ').trimEnd();
}

export async function runJobs(args: string[], json: boolean): Promise<number> {
  const paths = resolvePaths(process.env, homedir());
  const positional = args.filter((a) => !a.startsWith('--'));
  if (positional[0] === 'cancel') {
    const id = positional[1];
    if (!id) {
      process.stderr.write(`sleds: which job? e.g. sleds jobs cancel k3m9x2qa ('sleds jobs' lists them)\n`);
      return 2;
    }
    let res;
    try {
      res = await requestMusher(paths.socketFile, 'POST', `/v1/jobs/${encodeURIComponent(id)}/cancel`, null, {}, 5000);
    } catch {
      process.stderr.write(AWAY);
      return 1;
    }
    const body = JSON.parse(res.body) as { ok?: boolean; job?: Job; error?: string };
    if (json) process.stdout.write(`${JSON.stringify(body, null, 2)}\n`);
    else if (res.status === 200) process.stdout.write(`Cancelled job ${id}: it will not run.\n`);
    else process.stderr.write(`sleds: ${body.error ?? `musher answered HTTP ${res.status}`}\n`);
    return res.status === 200 ? 0 : 1;
  }
  if (positional.length > 0) {
    process.stderr.write(`sleds: jobs takes no '${positional[0]}' — use 'sleds jobs' or 'sleds jobs cancel <id>'\n`);
    return 2;
  }
  let list: JobsList;
  try {
    const res = await requestMusher(paths.socketFile, 'GET', '/v1/jobs', null, {}, 5000);
    if (res.status !== 200) throw new Error(res.body);
    list = JSON.parse(res.body) as JobsList;
  } catch {
    process.stderr.write(AWAY);
    return 1;
  }
  if (json) {
    process.stdout.write(`${JSON.stringify(list, null, 2)}\n`);
    return 0;
  }
  if (list.jobs.length === 0) {
    process.stdout.write('No jobs: nothing is held, deferred or waiting to resume.\n');
    return 0;
  }
  process.stdout.write(`${list.jobs.map((j) => jobLine(j, list.now)).join('\n')}\n`);
  return 0;
}
