import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { musherClient } from '../../protocol/client/client.js';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sleds, startMusher, type SledsWorld } from '../support/sleds-env.js';
import { useWorlds } from '../support/worlds.js';

/** The route verbs through the real CLI and a real musher, in a real git repository (issue 14 § 1–3). */
const newWorld = useWorlds({ SLEDS_NO_AUTOSTART: '1', SLEDS_SEAT: 'dana' });

const ROUTE = `title: Large exports by email
tracker: ENG-503
nodes:
  - id: schema
    brief: Add an export_jobs table.
    band: { low_usd: 2, high_usd: 6, low_min: 10, high_min: 30, confidence: 0.8 }
  - id: queue
    brief: A job queue.
    depends_on: [schema]
    harness: codex
    band: { low_usd: 1, high_usd: 3, low_min: 5, high_min: 15, confidence: 0.6 }
  - id: mailer
    brief: Mail the link.
    depends_on: [queue]
    band: { low_usd: 1, high_usd: 2, low_min: 5, high_min: 10, confidence: 0.9 }
`;

function repoWith(w: SledsWorld, files: Record<string, string>): string {
  const repo = join(w.home, 'repo');
  mkdirSync(join(repo, '.sleds', 'routes'), { recursive: true });
  execFileSync('git', ['init', '-q', repo]);
  for (const [name, text] of Object.entries(files)) writeFileSync(join(repo, '.sleds', 'routes', name), text);
  return repo;
}

describe('sleds route', { timeout: 60_000 }, () => {
  it('show draws the waves with each node’s state and band; --json the same; approve mode starts a node only by sleds start', async () => {
    const w = newWorld();
    const repo = repoWith(w, { 'eng-503.yml': ROUTE });
    await startMusher(w);
    const shown = await sleds(w, ['route', 'show', 'eng-503'], undefined, {}, repo);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain('eng-503: Large exports by email (ENG-503) · approve · $4.00–$11.00, 20–55 min');
    expect(shown.stdout.split('\n').filter((l) => /^wave \d/.test(l))).toEqual(['wave 0', 'wave 1', 'wave 2']);
    expect(shown.stdout).toMatch(/ {2}queue +QUEUED +\$1\.00–\$3\.00, 5–15 min · not armed ← schema/);
    const json = JSON.parse((await sleds(w, ['route', 'show', 'eng-503', '--json'], undefined, {}, repo)).stdout) as { waves: Array<Array<{ nodeId: string; state: string }>>; line: string };
    expect(json.waves.map((wave) => wave.map((n) => `${n.nodeId}:${n.state}`))).toEqual([['schema:QUEUED'], ['queue:QUEUED'], ['mailer:QUEUED']]);
    expect(json.line).toBe('so far 0 min · $0.00 · band $4.00–$11.00 for ENG-503, across 0 of 3 nodes landed and 0 machines');

    const armed = await sleds(w, ['route', 'arm', 'eng-503', 'schema', '--json'], undefined, {}, repo);
    expect(JSON.parse(armed.stdout)).toEqual({ key: 'eng-503', armed: ['schema'], mode: 'approve' });
    const started = await sleds(w, ['start', 'queue', '--json'], undefined, {}, repo);
    expect(JSON.parse(started.stdout)).toEqual({ key: 'eng-503', node: 'queue', state: 'QUEUED', ready: false, waitingFor: ['schema'] });
    const list = JSON.parse((await sleds(w, ['routes', '--json'], undefined, {}, repo)).stdout) as { routes: Array<{ key: string; nodes: number; landed: number }> };
    expect(list.routes.map((r) => [r.key, r.nodes, r.landed])).toEqual([['eng-503', 3, 0]]);
    const mode = await sleds(w, ['route', 'mode', 'eng-503', 'auto', '--json'], undefined, {}, repo);
    expect(JSON.parse(mode.stdout)).toMatchObject({ key: 'eng-503', mode: 'auto' });
    const decisions = await sleds(w, ['route', 'decisions', 'eng-503'], undefined, {}, repo);
    expect(decisions.stdout.trim()).toBe('no decisions on eng-503 yet');
    // An answer to a node that asks nothing is one line, JSON under --json, and no decision is kept.
    const answered = await sleds(w, ['route', 'answer', 'eng-503/queue', 'a', 'link', '--json'], undefined, {}, repo);
    expect(answered.code).toBe(1);
    expect(JSON.parse(answered.stdout)).toEqual({ error: 'eng-503/queue asks nothing (it is QUEUED) — sleds needs lists what waits for you' });
    expect((await sleds(w, ['route', 'answer', 'eng-503/queue'], undefined, {}, repo)).code).toBe(2);
    expect((await sleds(w, ['route', 'decisions', 'eng-503'], undefined, {}, repo)).stdout.trim()).toBe('no decisions on eng-503 yet');
  });

  const BAD: Array<[string, string, string]> = [
    ['a cycle', 'title: T\nnodes:\n  - id: a\n    brief: x\n    depends_on: [b]\n  - id: b\n    brief: y\n    depends_on: [a]\n', '.sleds/routes/bad.yml:5: nodes a → b → a form a cycle'],
    ['an unknown dependency', 'title: T\nnodes:\n  - id: a\n    brief: x\n    depends_on: [queue]\n', ".sleds/routes/bad.yml:5: node 'a' depends on 'queue', which this route does not have"],
    ['a missing brief', 'title: T\nnodes:\n  - id: a\n    title: A\n', ".sleds/routes/bad.yml:3: node 'a' has no brief"],
    ['an unknown harness', 'title: T\nnodes:\n  - id: a\n    brief: x\n    harness: aider\n', ".sleds/routes/bad.yml:5: node 'a' asks for harness 'aider', which sleds does not know"],
  ];
  it('a bad route file is refused with one line naming file and line, as JSON under --json, and nothing of it is loaded', async () => {
    const w = newWorld();
    const repo = repoWith(w, {});
    await startMusher(w);
    for (const [what, text, line] of BAD) {
      writeFileSync(join(repo, '.sleds', 'routes', 'bad.yml'), text);
      const plain = await sleds(w, ['route', 'show', 'bad'], undefined, {}, repo);
      expect([what, plain.code]).toEqual([what, 1]);
      expect(plain.stderr.trim().split('\n')).toHaveLength(1);
      expect(plain.stderr.trim().startsWith(`sleds: ${line}`), plain.stderr).toBe(true);
      const json = await sleds(w, ['route', 'arm', 'bad', '--json'], undefined, {}, repo);
      expect(json.code).toBe(1);
      expect((JSON.parse(json.stdout) as { error: string }).error.startsWith(line)).toBe(true);
    }
    expect(JSON.parse((await sleds(w, ['routes', '--json'], undefined, {}, repo)).stdout)).toEqual({ routes: [] });
  });

  it('the plan verb writes a route file checked as a file is: a cycle is refused with its line, a good plan is written, loaded and never overwritten', async () => {
    const w = newWorld();
    const repo = repoWith(w, {});
    await startMusher(w);
    const client = musherClient({ socketPath: w.socket });
    const cyclic = await client.call('routePlan', { body: { cwd: repo, key: 'eng-503', title: 'T', nodes: [{ id: 'a', brief: 'x', depends_on: ['b'] }, { id: 'b', brief: 'y', depends_on: ['a'] }] } });
    expect(cyclic.ok).toBe(false);
    if (!cyclic.ok && cyclic.kind === 'refused') expect(cyclic.error).toMatch(/^\.sleds\/routes\/eng-503\.yml:\d+: nodes a → b → a form a cycle$/);
    const plan = { cwd: repo, key: 'eng-503', title: 'Large exports', tracker: 'ENG-503', nodes: [{ id: 'schema', brief: 'A table.' }, { id: 'mailer', brief: 'Mail it.', depends_on: ['schema'], harness: 'codex' }] };
    const good = await client.call('routePlan', { body: plan });
    expect(good.ok && good.body.waves).toEqual([['schema'], ['mailer']]);
    const file = join(repo, '.sleds', 'routes', 'eng-503.yml');
    expect(readFileSync(file, 'utf8')).toContain('depends_on:\n      - schema');
    const shown = JSON.parse((await sleds(w, ['route', 'show', 'eng-503', '--json'], undefined, {}, repo)).stdout) as { route: { tracker: string }; waves: Array<Array<{ nodeId: string; harness: string | null }>> };
    expect([shown.route.tracker, shown.waves.map((wave) => wave.map((n) => `${n.nodeId}:${n.harness}`))]).toEqual(['ENG-503', [['schema:null'], ['mailer:codex']]]);
    const again = await client.call('routePlan', { body: plan });
    expect(!again.ok && again.kind === 'refused' ? again.error : null).toBe('.sleds/routes/eng-503.yml is there already: edit it, or plan under another key');
  });

  it('route new writes a skeleton that passes the file check, and never overwrites a route', async () => {
    const w = newWorld();
    const repo = repoWith(w, {});
    await startMusher(w);
    const made = await sleds(w, ['route', 'new', 'eng-700', '--json'], undefined, {}, repo);
    expect(made.code, made.stderr).toBe(0);
    expect(JSON.parse(made.stdout)).toMatchObject({ key: 'eng-700' });
    const shown = JSON.parse((await sleds(w, ['route', 'show', 'eng-700', '--json'], undefined, {}, repo)).stdout) as { waves: Array<Array<{ nodeId: string }>> };
    expect(shown.waves.map((wave) => wave.map((n) => n.nodeId))).toEqual([['eng-700']]);
    const again = await sleds(w, ['route', 'new', 'eng-700', '--json'], undefined, {}, repo);
    expect([again.code, (JSON.parse(again.stdout) as { error: string }).error]).toEqual([1, '.sleds/routes/eng-700.yml is there already — edit it, or pick another key']);
  });
});
