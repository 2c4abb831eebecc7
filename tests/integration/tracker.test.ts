import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Task } from '../../core/task/task.js';
import type { TrackerRound } from '../../musher/tracker/intake.js';
import { sleds, startMusher, stopMusher, waitFor, type SledsWorld } from '../support/sleds-env.js';
import { useWorlds } from '../support/worlds.js';
import { writeSledsConfig } from '../support/sleds-config.js';
import { startFakeGithub, type FakeGithub } from '../support/fake-github.js';

const TOKEN = 'ghp_daemon_test_token_do_not_print';

const world = useWorlds();
const fakes: FakeGithub[] = [];
afterEach(async () => {
  await Promise.all(fakes.splice(0).map((f) => f.close()));
});

async function poll(w: SledsWorld): Promise<TrackerRound> {
  const r = await sleds(w, ['tracker', 'poll', '--json']);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as TrackerRound;
}

async function trackerTasks(w: SledsWorld): Promise<Task[]> {
  const r = await sleds(w, ['tasks', '--json']);
  expect(r.code, r.stderr).toBe(0);
  return (JSON.parse(r.stdout) as { tasks: Task[] }).tasks.filter((t) => t.source === 'tracker');
}

describe('tracker intake (sleds musher against the fake GitHub API)', () => {
  it('a labelled issue becomes a task and gets exactly one comment — across rounds and a musher restart', async () => {
    const gh = await startFakeGithub({ token: TOKEN });
    fakes.push(gh);
    const w = world({ SLEDS_KEYRING: 'file' });
    writeSledsConfig(w, { upstreams: { github: gh.apiUrl }, binaries: { gh: '/nonexistent/gh' } });
    mkdirSync(join(w.sledsHome, 'config'), { recursive: true });
    writeFileSync(join(w.sledsHome, 'config', 'policy.yml'), 'tracker:\n  github:\n    repos: [acme/shop, acme/api]\n');

    const set = await sleds(w, ['github', 'set-token'], `${TOKEN}\n`);
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout).not.toContain(TOKEN);
    const st = await sleds(w, ['github', 'status', '--json']);
    expect(JSON.parse(st.stdout)).toMatchObject({ configured: true, source: 'secret-store', apiUrl: gh.apiUrl });
    expect(st.stdout).not.toContain(TOKEN);

    const checkout = gh.openIssue('acme/shop', { title: 'Checkout button double-charges', body: 'Click it twice quickly: two charges.', labels: ['bug', 'sleds'], createdAt: Date.now() });
    const limiter = gh.openIssue('acme/api', { title: 'Rate limiter leaks tokens', labels: ['sleds'], createdAt: Date.now() });
    const unrelated = gh.openIssue('acme/shop', { title: 'Typo in footer', labels: ['bug'], createdAt: Date.now() });

    await startMusher(w);
    const first = await poll(w);
    expect(first.adapters).toEqual([expect.objectContaining({ adapter: 'github', configured: true, items: 2, errors: [] })]);
    const tasks = await trackerTasks(w);
    expect(tasks.map((t) => [t.title, t.sourceRef]).sort()).toEqual([
      ['Checkout button double-charges', `https://github.com/acme/shop/issues/${checkout.number}`],
      ['Rate limiter leaks tokens', `https://github.com/acme/api/issues/${limiter.number}`],
    ]);
    const shopTask = tasks.find((t) => t.title.startsWith('Checkout'))!;
    expect(shopTask.promptChars).toBe('Checkout button double-charges\n\nClick it twice quickly: two charges.'.length);
    const comment = { ...gh.comments('acme/shop', checkout.number)[0]! };
    expect(comment.body).toContain(`<!-- sleds:task ${shopTask.id} -->`);
    // The estimate's paragraph: with no receipts yet, a labelled prior or "no band yet", never a made-up band.
    expect(comment.body).toMatch(/- \*\*Band:\*\* no band yet/);
    expect(comment.body).toContain(`sleds task ${shopTask.id} worth high|normal|low`);
    // The picker's summary: no worth stated, so the task is held.
    expect(comment.body).toMatch(/- \*\*Picker:\*\* .*Held: not worth doing until someone states a worth/);
    expect(gh.comments('acme/api', limiter.number)).toHaveLength(1);
    expect(gh.comments('acme/shop', unrelated.number)).toHaveLength(0);

    // One search per round, for both repositories, authenticated as GitHub expects.
    const searches = gh.requests.filter((q) => q.path === '/search/issues');
    expect(searches.length).toBeGreaterThanOrEqual(1);
    expect(searches[0]!.query.get('q')).toBe('is:issue is:open label:sleds (repo:acme/shop OR repo:acme/api)');
    expect(searches[0]!.query.get('advanced_search')).toBe('true');
    expect(searches[0]!.headers.authorization).toBe(`Bearer ${TOKEN}`);

    await poll(w);
    await stopMusher(w);
    await startMusher(w);
    const afterRestart = await poll(w);
    expect(afterRestart.adapters[0]).toMatchObject({ items: 2, created: [], commented: [], errors: [] });
    expect(gh.comments('acme/shop', checkout.number)).toHaveLength(1);
    expect(gh.comments('acme/api', limiter.number)).toHaveLength(1);
    expect(gh.posted()).toBe(2);
    expect(await trackerTasks(w)).toHaveLength(2);

    // The task's receipt goes onto the same comment.
    const done = await sleds(w, ['task', shopTask.id, 'done']);
    expect(done.code, done.stderr).toBe(0);
    const updated = await waitFor('the receipt on the comment', () => gh.comments('acme/shop', checkout.number).find((c) => c.body.includes('- **Receipt:** ')), 20_000);
    expect(updated.id).toBe(comment.id);
    expect(updated.body.startsWith(comment.body)).toBe(true);
    expect(gh.comments('acme/shop', checkout.number)).toHaveLength(1);

    const listed = await sleds(w, ['tracker']);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toContain(`${shopTask.id}  acme/shop#${checkout.number}`);
    expect(listed.stdout).toMatch(new RegExp(`^${shopTask.id}  acme/shop#${checkout.number} +commented  receipted  taken \\d+[smhd] ago$`, 'm'));
  });

  it('no tracker in the policy: the poll says how to add one, and GitHub is not asked', async () => {
    const gh = await startFakeGithub({ token: TOKEN });
    fakes.push(gh);
    const w = world({ SLEDS_KEYRING: 'file' });
    writeSledsConfig(w, { upstreams: { github: gh.apiUrl }, binaries: { gh: '/nonexistent/gh' } });
    await startMusher(w);
    const r = await sleds(w, ['tracker', 'poll']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe('github: not configured — add tracker: {github: {repos: [owner/name]}} to .sleds/policy.yml or ~/.config/sleds/policy.yml');
    expect(gh.requests).toHaveLength(0);
  });
});
