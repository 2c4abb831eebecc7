import { formatAge, formatReset } from '../core/format.js';
import { harnessById } from '../harnesses/registry.js';
import type { JobRow } from '../protocol/schemas.js';
import { askMusher, reportRefusal } from './musher-call.js';
import { fail } from './fail.js';

/** `sleds jobs [--json]` and `sleds jobs cancel <id> [--json]`: what musher will do at a time, and what it did. */

/** One line: id, what, when, state, result. */
export function jobLine(job: JobRow, now: number): string {
  // The harness by its binary's name, as a person runs it; nothing for a job that names none (or one sleds does not know).
  const found = typeof job.payload.harness === 'string' ? harnessById(job.payload.harness) : null;
  const harness = found?.ok ? found.adapter.binary.name : '';
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
  const positional = args.filter((a) => !a.startsWith('--'));
  if (positional[0] === 'cancel') {
    const id = positional[1];
    if (!id) {
      return fail(`which job? e.g. sleds jobs cancel k3m9x2qa ('sleds jobs' lists them)`, 2);
    }
    const res = await askMusher('jobCancel', { params: { id }, body: {} });
    if (!res) return 1;
    if (!res.ok) return reportRefusal(res, json);
    process.stdout.write(json ? `${JSON.stringify(res.body, null, 2)}\n` : `Cancelled job ${id}: it will not run.\n`);
    return 0;
  }
  if (positional.length > 0) {
    return fail(`jobs takes no '${positional[0]}' — use 'sleds jobs' or 'sleds jobs cancel <id>'`, 2);
  }
  const res = await askMusher('jobs', {});
  if (!res) return 1;
  if (!res.ok) return reportRefusal(res, json);
  const list = res.body;
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
