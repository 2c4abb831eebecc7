/**
 * `sleds engine` in one process on real parts: the route store on real SQLite, real git (a bare remote, a clone,
 * worktrees), the policy's checks run for real, detached harness processes of the test-only "plain" agent (it does
 * what its brief's directives say, as a model would through tool calls), and the fake GitHub in which the test plays
 * the person who merges. The engine names no harness: "plain" reaches it through the registry like any other.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parseRouteFile } from '../../musher/engine/route-yaml.js';
import { registerHarness, harnessById } from '../../harnesses/registry.js';
import { GithubClient } from '../../musher/github/client.js';
import { composeEngine, type EngineConfig } from '../../musher/engine/compose-engine.js';
import { checksFromPolicy } from '../../musher/engine/verify.js';
import type { Engine } from '../../musher/engine/engine.js';
import { registryHarnesses } from '../../musher/engine/harnesses.js';
import { processRunner } from '../../musher/engine/runner.js';
import { routeVerbs } from '../../musher/engine/routes-api.js';
import type { RouteStore } from '../../musher/engine/route-store.js';
import { DEFAULT_CONFIG } from '../../musher/config/schema.js';
import { openStore } from '../../musher/store/db.js';
import { startFakeGithub, type FakeGithub } from '../support/fake-github.js';
import { AGENT_GIT_IDENTITY, git, routeRepo } from '../support/route-repo.js';
import { plainHarness } from '../support/minimal-harness/index.js';

const TOKEN = 'ghp_engine_test_token';
const SLUG = 'acme/shop';
const PLAIN_AGENT = join(import.meta.dirname, '..', 'support', 'minimal-harness', 'plain-agent.mjs');

beforeAll(() => {
  if (!harnessById('plain').ok) registerHarness(plainHarness);
});

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

interface World {
  root: string;
  repo: string;
  bare: string;
  plainHome: string;
  gh: FakeGithub;
  store: RouteStore;
  engine: Engine;
  clock: { t: number; now(): number };
  /** Ticks (and waits for what they started) until `done` holds; fails with the nodes' states after `rounds`. */
  until(done: () => boolean, what: string, rounds?: number): Promise<void>;
  state(node: string): string | undefined;
  starts(): string[];
}

async function world(opts: { owner?: string; checks?: Record<string, string>; route: string; concurrency?: number }): Promise<World> {
  const root = mkdtempSync(join(tmpdir(), 'sl-engine-'));
  // The repository's check: every file the route's nodes must write, with the right words.
  const { bare, repo } = routeRepo(root, {
    'README.md': '# shop\n',
    'AGENTS.md': 'Keep functions small.\n',
    'check.mjs': `import { readFileSync, existsSync } from 'node:fs';\nlet bad = 0;\nfor (const [f, words] of process.argv.slice(2).map((a) => a.split(':'))) {\n  if (existsSync(f) && !readFileSync(f, 'utf8').includes(words)) { console.error(f + ' lacks ' + words); bad++; }\n}\nprocess.exit(bad ? 1 : 0);\n`,
  });

  const bin = join(root, 'bin');
  mkdirSync(bin);
  symlinkSync(PLAIN_AGENT, join(bin, 'plain'));
  const plainHome = join(root, 'plain-home');

  const clock = { t: Date.UTC(2026, 11, 2, 9), now: () => clock.t };
  const gh = await startFakeGithub({ token: TOKEN, now: () => clock.t });
  gh.createRepo(SLUG);
  gh.linkRemote(SLUG, bare);
  const db = openStore(join(root, 'sleds.db'));
  const github = new GithubClient({ token: async () => ({ ok: true, token: TOKEN, source: 'secret-store' }), clock, baseUrl: gh.apiUrl, sleep: async () => undefined });
  const env = { ...process.env, PATH: `${bin}:${process.env.PATH ?? ''}`, PLAIN_HOME: plainHome, ...AGENT_GIT_IDENTITY };
  const config: EngineConfig = {
    owner: opts.owner ?? 'host-a:1:aaaa',
    concurrency: opts.concurrency ?? 2,
    leaseMs: 120_000,
    repoPolicy: () => ({ checks: checksFromPolicy(opts.checks ?? {}), maxVerifyAttempts: 3, setup: [], include: [], portBlock: 10 }),
    portStart: 41000,
    remote: 'origin',
    baseBranch: null,
    worktreesDir: join(root, 'worktrees'),
    runsDir: join(root, 'runs'),
    unknownResetWaitMs: 15 * 60_000,
    packMaxChars: 40_000,
  };
  const log = { lines: [] as string[], info: (l: string) => log.lines.push(l), warn: (l: string) => log.lines.push(`warn: ${l}`) };
  const harnesses = registryHarnesses({ defaultHarness: () => 'plain', binaries: DEFAULT_CONFIG.binaries, env, home: root, portBase: () => 41000 });
  const { engine, store } = composeEngine({ db, clock, log, github, harnesses, runner: processRunner(), env, config });
  const parsed = parseRouteFile(opts.route, { path: '.sleds/routes/eng-503.yml', harnesses: ['plain'] });
  if (!parsed.ok) throw new Error(parsed.error);
  store.upsertRoute(parsed.route, { repoRoot: repo, filePath: join(repo, '.sleds/routes/eng-503.yml') }, 'auto');
  store.arm('eng-503', null);
  cleanups.push(async () => {
    await engine.settle();
    db.close();
    await gh.close();
    rmSync(root, { recursive: true, force: true });
  });
  const state = (node: string) => store.node('eng-503', node)?.run.state;
  const w: World = {
    root,
    repo,
    bare,
    plainHome,
    gh,
    store,
    engine,
    clock,
    state,
    starts: () => (existsSync(join(plainHome, 'starts.log')) ? readFileSync(join(plainHome, 'starts.log'), 'utf8').trim().split('\n') : []),
    async until(done, what, rounds = 200) {
      for (let i = 0; i < rounds; i++) {
        await engine.tick();
        await engine.settle();
        if (done()) return;
        // Until one of the detached agents writes to its stream or ends (or a short while, for git and GitHub).
        await engine.activity(500, realWait);
        clock.t += 1000;
      }
      const states = store.nodes('eng-503').map((n) => `${n.nodeId}=${n.run.state}${n.run.problem ? ` (${n.run.problem})` : ''}`);
      throw new Error(`engine never reached: ${what} — ${states.join(', ')}\n${log.lines.slice(-15).join('\n')}`);
    },
  };
  return w;
}

const realWait = (ms: number) => new Promise<void>((r) => setTimeout(r, ms).unref());
const pullOf = (w: World, node: string) => w.store.node('eng-503', node)?.prNumber ?? null;

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
    expect(existsSync(schema.worktree!)).toBe(false);
    expect(w.starts().filter((l) => l.endsWith('new') || / new /.test(l))).toHaveLength(3);
    expect(w.gh.mergeCalls).toEqual([]);
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
    const verbs = routeVerbs({ store: w.store, harnesses: ['plain'], defaultMode: () => 'auto' });
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
