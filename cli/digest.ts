import type { z } from 'zod';
import type { DigestReply } from '../protocol/schemas.js';
import { fail } from './fail.js';
import { askMusher, reportRefusal } from './musher-call.js';

/**
 * `sleds digest [--json]`: the last night's digest now (issue 15 § 7) — for each repository with overnight jobs, the
 * jobs delivered, waiting and at a wall, with their links: the words the policy's digest channel gets in Slack.
 */

type Digests = z.output<typeof DigestReply>['digests'];

export function drawDigests(digests: Digests): string {
  if (digests.length === 0) return 'no overnight night to tell of — mark a route node `overnight: true` and give its policy an overnight window';
  return digests.map((d) => (digests.length > 1 ? `${d.repoRoot}\n${d.text}` : d.text)).join('\n\n');
}

export async function runDigest(args: string[], json: boolean): Promise<number> {
  if (args.some((a) => !a.startsWith('--'))) return fail('digest takes no word — sleds digest [--json]', 2);
  const res = await askMusher('digest', {});
  if (!res) return 1;
  if (!res.ok) return reportRefusal(res, json);
  process.stdout.write(json ? `${JSON.stringify(res.body, null, 2)}\n` : `${drawDigests(res.body.digests)}\n`);
  return 0;
}
