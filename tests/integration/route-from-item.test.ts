import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeGithub, type FakeGithub } from '../support/fake-github.js';
import { writeSledsConfig } from '../support/sleds-config.js';
import { sleds, startMusher } from '../support/sleds-env.js';
import { useWorlds } from '../support/worlds.js';

/**
 * `sleds route new <key> --from <tracker item>` through the real CLI, a real musher and a fake GitHub: the issue's task
 * list becomes the route's nodes (its indented lines their briefs, `(after …)` their dependencies), written as a route
 * file that passes the file check, each node banded by the estimator (a labelled prior with no receipts yet).
 */
const newWorld = useWorlds({ SLEDS_NO_AUTOSTART: '1', SLEDS_SEAT: 'dana' });
const TOKEN = 'ghp_route_from_item_token';
let gh: FakeGithub | null = null;
afterEach(async () => {
  await gh?.close();
  gh = null;
});

const ISSUE = `Customers with large accounts want their exports mailed.

- [ ] Export jobs table
  Add export_jobs in schema.sql with a status column.
- [ ] Export API (after 1)
- [ ] Export button (after export-jobs-table)
- [ ] Mailer (after 2, 3)
  Email the link when the job is done.
`;

describe('sleds route new --from', { timeout: 60_000 }, () => {
  it('drafts the route from the issue: nodes, briefs, waves and bands; refuses an unknown item and a dependency on no task', async () => {
    const w = newWorld();
    gh = await startFakeGithub({ token: TOKEN });
    gh.createRepo('acme/shop');
    const issue = gh.openIssue('acme/shop', { title: 'Large exports by email', body: ISSUE, labels: [], createdAt: Date.now() });
    const broken = gh.openIssue('acme/shop', { title: 'Broken', body: '- [ ] One (after 7)\n', labels: [], createdAt: Date.now() });
    writeSledsConfig(w, { upstreams: { github: gh.apiUrl }, binaries: { gh: '/nonexistent/gh' } });
    expect((await sleds(w, ['github', 'set-token'], TOKEN)).code).toBe(0);
    const repo = join(w.home, 'repo');
    execFileSync('git', ['init', '-q', repo]);
    execFileSync('git', ['-C', repo, 'remote', 'add', 'origin', 'https://github.com/acme/shop.git']);
    await startMusher(w);
    // The model this machine used last prices the nodes' priors (no node names one).
    await sleds(w, ['hook', 'SessionStart'], JSON.stringify({ session_id: 's1', cwd: repo, hook_event_name: 'SessionStart', source: 'startup', model: 'claude-opus-5-5' }));

    const made = await sleds(w, ['route', 'new', 'eng-503', '--from', `#${issue.number}`, '--json'], undefined, {}, repo);
    expect(made.code, made.stderr).toBe(0);
    expect(JSON.parse(made.stdout)).toMatchObject({ key: 'eng-503', waves: [['export-jobs-table'], ['export-api', 'export-button'], ['mailer']] });
    const file = readFileSync(join(repo, '.sleds', 'routes', 'eng-503.yml'), 'utf8');
    expect(file).toContain('Drafted by sleds route new --from acme/shop#1');
    expect(file).toContain('Add export_jobs in schema.sql with a status column.');

    const shown = JSON.parse((await sleds(w, ['route', 'show', 'eng-503', '--json'], undefined, {}, repo)).stdout) as {
      route: { tracker: string; title: string };
      waves: Array<Array<{ nodeId: string; dependsOn: string[]; band: { lowUsd: number; highUsd: number; confidence: number } | null }>>;
      band: { lowUsd: number; highUsd: number } | null;
    };
    expect(shown.route).toMatchObject({ tracker: 'acme/shop#1', title: 'Large exports by email' });
    expect(shown.waves[2]![0]).toMatchObject({ nodeId: 'mailer', dependsOn: ['export-api', 'export-button'] });
    // Every node has the estimator's band (a prior: no receipts yet, so confidence 0), and the route's is their sum.
    const bands = shown.waves.flat().map((n) => n.band!);
    for (const b of bands) expect(b.highUsd).toBeGreaterThan(b.lowUsd);
    expect(bands.every((b) => b.confidence === 0)).toBe(true);
    expect(shown.band!.highUsd).toBeCloseTo(bands.reduce((s, b) => s + b.highUsd, 0), 2);

    const again = await sleds(w, ['route', 'new', 'eng-503', '--from', 'acme/shop#1', '--json'], undefined, {}, repo);
    expect([again.code, (JSON.parse(again.stdout) as { error: string }).error]).toEqual([1, '.sleds/routes/eng-503.yml is there already: edit it, or plan under another key']);
    const missing = await sleds(w, ['route', 'new', 'eng-9', '--from', 'acme/shop#99'], undefined, {}, repo);
    expect([missing.code, missing.stderr.trim()]).toEqual([1, 'sleds: acme/shop#99 is not there (or this token cannot see it)']);
    const bad = await sleds(w, ['route', 'new', 'eng-10', '--from', `https://github.com/acme/shop/issues/${broken.number}`], undefined, {}, repo);
    expect(bad.stderr.trim()).toBe(`sleds: acme/shop#${broken.number}: task 1 ("One") is after '7', which is no task of the item — name a task by its number or id`);
    const notItem = await sleds(w, ['route', 'new', 'eng-11', '--from', 'acme/shop/12', '--json'], undefined, {}, repo);
    expect((JSON.parse(notItem.stdout) as { error: string }).error).toBe("'acme/shop/12' is not a tracker item — say owner/repo#12, #12, or the issue's URL");
    expect(gh.requests.some((r) => r.method === 'POST')).toBe(false);
  });
});
