import { z } from 'zod';
import { parseItemRef, type DraftItem } from '../../core/routes/from-item.js';
import { readCheckout } from '../github/checkout.js';
import type { GithubClient } from '../github/client.js';

/**
 * The tracker item a route is drafted from (`sleds route new <key> --from <item>`): one GitHub issue read over REST.
 * Its text is someone else's input: it only ever becomes a route file that a person reviews before anything runs.
 */

const Issue = z.object({ number: z.number().int(), title: z.string().max(1_000), body: z.string().max(200_000).nullable(), html_url: z.string().optional() });

export type ItemAnswer = { ok: true; item: DraftItem } | { ok: false; status: number; error: string };

export async function fetchTrackerItem(client: GithubClient | null, from: string, cwd: string): Promise<ItemAnswer> {
  const checkout = await readCheckout(cwd);
  const ref = parseItemRef(from, checkout?.repo ?? null);
  if ('error' in ref) return { ok: false, status: 400, error: ref.error };
  if (!client) return { ok: false, status: 503, error: 'this musher does not talk to GitHub — sleds github set-token < tokenfile, then try again' };
  const slug = `${ref.repo.owner}/${ref.repo.name}`;
  const r = await client.request('GET', `/repos/${slug}/issues/${ref.number}`, { schema: Issue, what: `reading ${slug}#${ref.number}` });
  if (!r.ok) {
    if (r.status === 404) return { ok: false, status: 404, error: `${slug}#${ref.number} is not there (or this token cannot see it)` };
    // No status: GitHub was not asked (no token, a rate limit holding) or not reached — this musher cannot serve it now.
    return { ok: false, status: r.status === null ? 503 : 502, error: r.error };
  }
  return { ok: true, item: { key: `${slug}#${r.data.number}`, title: r.data.title, body: r.data.body ?? '' } };
}
