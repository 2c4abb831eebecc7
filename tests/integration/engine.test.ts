/**
 * `sleds engine` in one process on real parts (tests/support/engine-world.ts): real SQLite, real git, the policy's
 * checks run for real, detached processes of the test-only "plain" agent, and the fake GitHub in which the test plays
 * the person who merges. The engine names no harness: "plain" reaches it through the registry like any other.
 */
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { GithubClient } from '../../musher/github/client.js';
import { composeEngine } from '../../musher/engine/compose-engine.js';
import { registryHarnesses } from '../../musher/engine/harnesses.js';
import { processRunner } from '../../musher/engine/runner.js';
import { routeQuestionVerbs } from '../../musher/engine/route-questions-api.js';
import { DEFAULT_CONFIG } from '../../musher/config/schema.js';
import { openStore } from '../../musher/store/db.js';
import { git } from '../support/route-repo.js';
import { pullOf, realWait, SLUG, TOKEN, useEngineWorlds } from '../support/engine-world.js';

const { world, cleanups } = useEngineWorlds();

describe('sleds engine on real git, SQLite and processes', { timeout: 120_000 }, () => {
  it('runs wave 1 in worktrees, opens each PR once, starts wave 2 only after a person merges, and never merges', async () => {
    const w = await world({
      checks: { check: 'node check.mjs schema.sql:export_jobs' },
      route: `title: Large exports by email
tracker: ENG-503
notes: Exports over 10k rows are emailed as a link.
nodes:
  - id: schema
    title: Export jobs table
    brief: |
      Add the table.
      @write schema.sql create table export_jobs (id int);
  - id: docs
    title: Docs
    brief: |
      @write docs/exports.md Exports are emailed.
  - id: mailer
    title: Mailer
    depends_on: [schema]
    brief: |
      @write mailer.ts import './schema.sql';
`,
    });
    await w.until(() => w.state('schema') === 'AWAITING_MERGE' && w.state('docs') === 'AWAITING_MERGE', 'wave 1 awaiting merge');
    expect(w.state('mailer')).toBe('QUEUED');
    // Each node in its own worktree on its branch, its file committed and pushed, its PR opened once with its brief.
    const schema = w.store.node('eng-503', 'schema')!;
    expect(schema.branch).toBe('sleds/eng-503/schema');
    expect(git(w.bare, 'show', 'sleds/eng-503/schema:schema.sql')).toBe('create table export_jobs (id int);');
    const pr = w.gh.pull(SLUG, pullOf(w, 'schema')!)!;
    expect(pr.body).toContain('Add the table.');
    expect(pr.body).toContain('check ✓');
    // The pack the agent got: its brief, the route's notes and the repository's field book, on stdin.
    const firstPrompt = readFileSync(join(w.plainHome, 'sessions', `${schema.sessionId}.log`), 'utf8');
    expect(firstPrompt).toContain('Exports over 10k rows are emailed as a link.');
    expect(firstPrompt).toContain('Keep functions small.');

    // Nothing moves until a person merges: more rounds leave mailer queued.
    await w.until(() => true, 'one more round');
    expect(w.state('mailer')).toBe('QUEUED');

    w.gh.mergePull(SLUG, pullOf(w, 'schema')!, 'dana');
    await w.until(() => w.state('mailer') === 'AWAITING_MERGE', 'wave 2 awaiting merge');
    expect(w.state('schema')).toBe('COMPLETED');
    // Wave 2 started from the merged tip: schema's file is in mailer's branch.
    expect(git(w.bare, 'show', 'sleds/eng-503/mailer:schema.sql')).toContain('create table');
    // What schema's agent said and changed is in its PR and in the pack of the node after it.
    expect(pr.body).toContain('### What was done\n\ndone\n\nChanged: schema.sql');
    const mailer = w.store.node('eng-503', 'mailer')!;
    const mailerPrompt = readFileSync(join(w.plainHome, 'sessions', `${mailer.sessionId}.log`), 'utf8');
    expect(mailerPrompt).toMatch(/### Export jobs table \(schema\) — https:\/\/github\.com\/acme\/shop\/pull\/\d+\n\ndone\n\nChanged: schema\.sql/);
    expect(existsSync(schema.worktree!)).toBe(false);
    expect(w.starts().filter((l) => l.endsWith('new') || / new /.test(l))).toHaveLength(3);
    expect(w.gh.mergeCalls).toEqual([]);
  });

  it('a node stopped after its verification, before its push and its PR, is pushed and gets its PR when the engine comes back', async () => {
    const w = await world({
      route: `title: Large exports by email
tracker: ENG-503
nodes:
  - id: schema
    title: Export jobs table
    brief: |
      @write schema.sql create table export_jobs (id int);
`,
    });
    await w.until(() => w.state('schema') === 'AWAITING_MERGE', 'schema awaiting merge');
    const first = pullOf(w, 'schema')!;
    // As a kill between the verification and the push leaves it: no PR on its row, its branch not on the remote.
    w.gh.closePull(SLUG, first);
    git(w.bare, 'branch', '-D', 'sleds/eng-503/schema');
    w.db.prepare(`UPDATE route_nodes SET pr_number = NULL, pr_url = NULL WHERE route_key = 'eng-503' AND node_id = 'schema'`).run();
    await w.until(() => (pullOf(w, 'schema') ?? first) !== first, 'a new PR for schema');
    const again = pullOf(w, 'schema')!;
    expect(w.gh.pull(SLUG, again)).toMatchObject({ state: 'open', head: { ref: 'sleds/eng-503/schema' } });
    expect(git(w.bare, 'show', 'sleds/eng-503/schema:schema.sql')).toBe('create table export_jobs (id int);');
    expect(w.log.join('\n')).not.toMatch(/422/);
  });

  it('a failing check sends the node back to its session with the log, and it lands on the second try', async () => {
    const w = await world({
      checks: { check: 'node check.mjs api.ts:export' },
      route: `title: t
nodes:
  - id: api
    brief: |
      @write api.ts const api = 1;
      @after lacks @write api.ts export const api = 1;
`,
    });
    await w.until(() => w.state('api') === 'AWAITING_MERGE', 'api awaiting merge');
    const api = w.store.node('eng-503', 'api')!;
    expect(api.verifyFailures).toBe(1);
    const starts = w.starts();
    expect(starts).toHaveLength(2);
    expect(starts[1]).toContain(`${api.sessionId} resume`);
    const second = readFileSync(join(w.plainHome, 'sessions', `${api.sessionId}.log`), 'utf8');
    expect(second).toContain('api.ts lacks export');
    expect(git(w.bare, 'show', 'sleds/eng-503/api:api.ts')).toBe('export const api = 1;');
  });

  it('a node that asks waits for a person while its sibling lands; the answer resumes it in its session and lands it', async () => {
    const w = await world({
      route: `title: t
nodes:
  - id: mailer
    brief: |
      @ask Send the export as a file or as a link?
      @after a-link-please @write mailer.txt link
  - id: docs
    brief: "@write docs.md exports"
`,
    });
    await w.until(() => w.state('mailer') === 'WAITING_FOR_INPUT' && w.state('docs') === 'AWAITING_MERGE', 'mailer asks, docs awaits its merge');
    // Nothing after the question was blocked: docs lands in the meantime.
    w.gh.mergePull(SLUG, pullOf(w, 'docs')!, 'dana');
    await w.until(() => w.state('docs') === 'COMPLETED', 'docs landed');
    expect(w.state('mailer')).toBe('WAITING_FOR_INPUT');
    // An answer to a node that asks nothing is refused; the person's answer to mailer is kept with a name and a time.
    const verbs = routeQuestionVerbs({ store: w.store });
    expect(verbs.answer(JSON.stringify({ node: 'eng-503/docs', answer: 'x' }), w.clock.now())).toMatchObject({ status: 409 });
    expect(verbs.answer(JSON.stringify({ node: 'eng-503/mailer', answer: 'a-link-please', by: 'dana' }), w.clock.now())).toMatchObject({ status: 200, body: { question: 'Send the export as a file or as a link?' } });
    await w.until(() => w.state('mailer') === 'AWAITING_MERGE', 'mailer resumed and awaiting merge');
    const mailer = w.store.node('eng-503', 'mailer')!;
    expect(git(w.bare, 'show', 'sleds/eng-503/mailer:mailer.txt')).toBe('link');
    // Resumed in its own session, with the answer in its pack; the decision is on the route and in the PR.
    expect(w.starts().filter((l) => l.startsWith(mailer.sessionId!))).toHaveLength(2);
    expect(readFileSync(join(w.plainHome, 'sessions', `${mailer.sessionId}.log`), 'utf8')).toContain('a-link-please');
    expect(w.store.decisions('eng-503')).toMatchObject([{ nodeId: 'mailer', question: 'Send the export as a file or as a link?', answer: 'a-link-please', answeredBy: 'dana', source: 'cli' }]);
    expect(w.gh.pull(SLUG, mailer.prNumber!)!.body).toContain('a-link-please');
  });

  it('an agent that parks a question (the MCP park verb) with two answers waits for a person; A resumes it with that answer', async () => {
    const release = join(tmpdir(), `sl-park-${process.pid}-${Date.now()}`);
    const w = await world({
      route: `title: t
nodes:
  - id: mailer
    brief: |
      @hold ${release}
      @after Attach-the-file @write mailer.txt attach
  - id: docs
    brief: "@write docs.md exports"
`,
    });
    const asked: string[] = [];
    const announced: string[] = [];
    const verbs = routeQuestionVerbs({ store: w.store, announce: (q) => announced.push(q.id), answered: (q) => asked.push(`${q.id} ${q.answeredBy}`) });
    // The agent is at work (held), and calls park from its session, as the MCP verb does with SLEDS_ROUTE/SLEDS_NODE.
    await w.until(() => w.state('mailer') === 'RUNNING', 'mailer at work');
    const park = (body: unknown) => verbs.park(JSON.stringify(body), w.clock.now());
    expect(park({ route: 'eng-503', node: 'mailer', question: 'Attach or link?', options: ['one'] })).toMatchObject({ status: 400 });
    expect(park({ route: 'eng-503', node: 'nope', question: 'Attach or link?', options: ['Attach-the-file: band stays', 'Link: band shrinks'] })).toMatchObject({ status: 404 });
    const parked = park({ route: 'eng-503', node: 'mailer', question: 'Attach the export or send a link?', options: ['Attach-the-file: the band stays $2–5', 'Send a link: the band grows to $4–9'] });
    expect(parked).toMatchObject({ status: 201, body: { key: 'eng-503', node: 'mailer' } });
    const qid = (parked.body as { questionId: string }).questionId;
    expect((parked.body as { text: string }).text).toMatch(/^Parked: eng-503\/mailer waits for an answer to question [a-z2-9]{12}: Attach the export or send a link\? A\) Attach-the-file/);
    // Parking twice (a retried call) is the same question, announced once.
    expect(park({ route: 'eng-503', node: 'mailer', question: 'Attach the export or send a link?', options: ['x: y z', 'y: z w'] })).toMatchObject({ status: 200, body: { questionId: qid } });
    expect(announced).toEqual([qid]);
    writeFileSync(release, 'go');
    cleanups.push(() => rmSync(release, { force: true }));

    // At the end of its turn it waits for the answer; its sibling goes on.
    await w.until(() => w.state('mailer') === 'WAITING_FOR_INPUT' && w.state('docs') === 'AWAITING_MERGE', 'mailer waits, docs awaits its merge');
    expect(w.store.node('eng-503', 'mailer')!.run.questionId).toBe(qid);
    expect(verbs.answer(JSON.stringify({ node: qid, answer: 'C' }), w.clock.now())).toMatchObject({ status: 400 });
    expect(w.state('mailer')).toBe('WAITING_FOR_INPUT');
    expect(verbs.answer(JSON.stringify({ node: qid, answer: 'a', by: 'dana' }), w.clock.now())).toMatchObject({ status: 200, body: { answer: 'Attach-the-file: the band stays $2–5' } });
    // A second answer (the other person's tap) is refused, naming the first.
    expect(verbs.answerFromSlack({ questionId: qid, choice: 'B', by: 'sam', at: w.clock.now() })).toMatchObject({ ok: false, error: expect.stringMatching(/answered already by dana/) });
    expect(asked).toEqual([`${qid} dana`]);

    await w.until(() => w.state('mailer') === 'AWAITING_MERGE', 'mailer resumed and awaiting merge');
    expect(git(w.bare, 'show', 'sleds/eng-503/mailer:mailer.txt')).toBe('attach');
    const mailer = w.store.node('eng-503', 'mailer')!;
    expect(readFileSync(join(w.plainHome, 'sessions', `${mailer.sessionId}.log`), 'utf8')).toContain('You asked: Attach the export or send a link?\nThe answer: Attach-the-file');
    expect(w.store.decisions('eng-503')).toMatchObject([{ nodeId: 'mailer', question: 'Attach the export or send a link?', options: ['Attach-the-file: the band stays $2–5', 'Send a link: the band grows to $4–9'], answeredBy: 'dana', source: 'cli' }]);
  });

  it('a node whose worktree cannot be made needs a person, with git’s error, and the rest of the route goes on', async () => {
    const w = await world({
      route: `title: t
nodes:
  - id: broken
    brief: "@write a.txt a"
  - id: fine
    brief: "@write b.txt b"
`,
    });
    // The branch is checked out elsewhere already: git refuses a second worktree on it.
    git(w.repo, 'branch', 'sleds/eng-503/broken');
    git(w.repo, 'worktree', 'add', '-q', join(w.root, 'elsewhere'), 'sleds/eng-503/broken');
    await w.until(() => w.state('broken') === 'RECOVERY_REQUIRED' && w.state('fine') === 'AWAITING_MERGE', 'broken needs recovery, fine awaits merge');
    expect(w.store.node('eng-503', 'broken')!.run.problem).toMatch(/^the worktree could not be made: .*sleds\/eng-503\/broken/);
  });

  it('a second engine on the same store claims nothing twice, and takes over a node whose engine died, reattaching to its process', async () => {
    const hold = join(tmpdir(), `sl-hold-${process.pid}-${Math.random().toString(36).slice(2)}`);
    const w = await world({ route: `title: t\nnodes:\n  - id: slow\n    brief: |\n      @write s.txt s\n      @hold ${hold}\n` });
    cleanups.push(() => rmSync(hold, { force: true }));
    await w.until(() => w.state('slow') === 'RUNNING' && w.store.node('eng-503', 'slow')!.sessionId !== null, 'slow running with a session');
    // Engine B on the same store: the node is A's while A's lease holds.
    const other = composeEngine({
      db: openStore(join(w.root, 'sleds.db')),
      clock: w.clock,
      log: { info: () => undefined, warn: () => undefined },
      github: new GithubClient({ token: async () => ({ ok: true, token: TOKEN, source: 'secret-store' }), clock: w.clock, baseUrl: w.gh.apiUrl, sleep: async () => undefined }),
      harnesses: registryHarnesses({ defaultHarness: () => 'plain', binaries: DEFAULT_CONFIG.binaries, env: { ...process.env, PATH: `${join(w.root, 'bin')}:${process.env.PATH ?? ''}`, PLAIN_HOME: w.plainHome }, home: w.root, portBase: () => 42000 }),
      runner: processRunner(),
      env: process.env,
      config: { owner: 'host-b:2:bbbb', concurrency: 2, leaseMs: 120_000, repoPolicy: () => ({ checks: [], maxVerifyAttempts: 3, setup: [], include: [], portBlock: 10 }), portStart: 42000, remote: 'origin', baseBranch: null, worktreesDir: join(w.root, 'worktrees'), runsDir: join(w.root, 'runs'), unknownResetWaitMs: 60_000, packMaxChars: 40_000 },
    });
    const b1 = await other.engine.tick();
    expect(b1.claimed).toEqual([]);
    expect(b1.tookOver).toEqual([]);
    // A stops renewing (it died); after its lease ran out, B takes the node over and follows the same process.
    w.clock.t += 121_000;
    const b2 = await other.engine.tick();
    expect(b2.tookOver).toEqual(['eng-503/slow']);
    writeFileSync(hold, 'go');
    for (let i = 0; i < 200 && w.store.node('eng-503', 'slow')!.run.state !== 'AWAITING_MERGE'; i++) {
      await other.engine.tick();
      await other.engine.settle();
      await other.engine.activity(500, realWait);
      w.clock.t += 1000;
    }
    expect(w.state('slow')).toBe('AWAITING_MERGE');
    expect(w.store.node('eng-503', 'slow')!.leaseOwner).toBe('host-b:2:bbbb');
    // One start only: B reattached to A's harness process instead of starting it again.
    expect(w.starts()).toHaveLength(1);
  });
});
