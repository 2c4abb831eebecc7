import { fail } from './fail.js';
import { askMusher, reportRefusal } from './musher-call.js';

/**
 * `sleds resume [<job>] [--json]` (issue 15 § 6): a delivered overnight job brought into the checkout you are in — its
 * branch (fetched from origin in another clone; never checked out over your work) and what it did and decided.
 * Without a job: the latest delivered in this repository. In a session, `/sled resume` gives the same to its agent.
 */
export async function runResume(args: string[], json: boolean): Promise<number> {
  const words = args.filter((a) => !a.startsWith('--'));
  if (words.length > 1) return fail('resume takes at most one job — e.g. sleds resume night-4f2a (sleds queue lists them)', 2);
  const res = await askMusher('queueResume', { body: { cwd: process.cwd(), ...(words[0] ? { job: words[0] } : {}) } });
  if (!res) return 1;
  if (!res.ok) return reportRefusal(res, json);
  process.stdout.write(json ? `${JSON.stringify(res.body, null, 2)}\n` : `${res.body.text}\n`);
  return 0;
}
