/**
 * One engine world for the engine's integration tests (tests/integration/engine*.test.ts): the route store on real
 * SQLite, real git (a bare remote, a clone, worktrees), the policy's checks run for real, detached processes of the
 * test-only "plain" agent (it does what its brief's directives say, as a model would through tool calls), and the
 * fake GitHub in which the test plays the person who merges. `useEngineWorlds()` registers the clean-up.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll } from 'vitest';
import { parseRouteFile } from '../../musher/engine/route-yaml.js';
import { registerHarness, harnessById } from '../../harnesses/registry.js';
import { GithubClient } from '../../musher/github/client.js';
import { composeEngine, type EngineConfig } from '../../musher/engine/compose-engine.js';
import { checksFromPolicy } from '../../musher/engine/verify.js';
import type { Engine } from '../../musher/engine/engine.js';
import { registryHarnesses } from '../../musher/engine/harnesses.js';
import { processRunner } from '../../musher/engine/runner.js';
import type { RouteStore } from '../../musher/engine/route-store.js';
import type { Runner } from '../../musher/engine/ports.js';
import { DEFAULT_CONFIG } from '../../musher/config/schema.js';
import type { AtLimitPolicy } from '../../core/policy/schema.js';
import { openStore } from '../../musher/store/db.js';
import { startFakeGithub, type FakeGithub } from './fake-github.js';
import { AGENT_GIT_IDENTITY, routeRepo } from './route-repo.js';
import { plainHarness } from './minimal-harness/index.js';
import type { SeatKeyPair } from '../../musher/handoff/keys.js';
import type { MintBatchToken } from '../../musher/engine/night-tier.js';
import type { Db } from '../../musher/store/db.js';

export const TOKEN = 'ghp_engine_test_token';
export const SLUG = 'acme/shop';
const PLAIN_AGENT = join(import.meta.dirname, 'minimal-harness', 'plain-agent.mjs');

/** `runner`: how the nodes run (default headless: processRunner). */
export type WorldOptions = {
  owner?: string;
  checks?: Record<string, string>;
  route: string;
  concurrency?: number;
  /** The seat's Ed25519 key receipts are signed with (none: unsigned), and the seat and host they name. */
  signingKey?: SeatKeyPair;
  seat?: string;
  host?: string;
  atLimit?: AtLimitPolicy;
  runner?: Runner;
  /** The repository's overnight window at a time (with its cap and concurrency); none: no night. */
  night?: (now: number) => { startMs: number; endMs: number; capMicros: number; concurrency: number } | null;
  /** musher's batch-tier gateway tokens, as the engine asks for them. */
  mintBatchToken?: MintBatchToken;
};

/** Registers the plain agent and the clean-up; gives the world maker and the clean-up list (for a test's own extras). */
export function useEngineWorlds(): { world: (opts: WorldOptions) => Promise<World>; cleanups: Array<() => Promise<void> | void> } {
  const cleanups: Array<() => Promise<void> | void> = [];
  beforeAll(() => {
    if (!harnessById('plain').ok) registerHarness(plainHarness);
  });
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });
  return { world: (opts) => world(cleanups, opts), cleanups };
}

export interface World {
  root: string;
  repo: string;
  bare: string;
  plainHome: string;
  gh: FakeGithub;
  db: Db;
  store: RouteStore;
  engine: Engine;
  clock: { t: number; now(): number };
  /** Ticks (and waits for what they started) until `done` holds; fails with the nodes' states after `rounds`. */
  until(done: () => boolean, what: string, rounds?: number): Promise<void>;
  state(node: string): string | undefined;
  starts(): string[];
  /** What the engine logged, in order. */
  log: string[];
}

async function world(cleanups: Array<() => Promise<void> | void>, opts: WorldOptions): Promise<World> {
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
    repoPolicy: () => ({ checks: checksFromPolicy(opts.checks ?? {}), maxVerifyAttempts: 3, setup: [], include: [], portBlock: 10, ...(opts.atLimit ? { atLimit: opts.atLimit } : {}), ...(opts.night ? { night: opts.night } : {}) }),
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
  const { engine, store } = composeEngine({
    db,
    clock,
    log,
    github,
    harnesses,
    runner: opts.runner ?? processRunner(),
    env,
    config,
    signingKey: async () => opts.signingKey ?? null,
    seat: () => opts.seat ?? 'dana',
    ...(opts.mintBatchToken ? { mintBatchToken: opts.mintBatchToken } : {}),
    host: opts.host ?? 'host-a',
  });
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
    db,
    store,
    engine,
    clock,
    state,
    log: log.lines,
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

export const realWait = (ms: number) => new Promise<void>((r) => setTimeout(r, ms).unref());
export const pullOf = (w: World, node: string) => w.store.node('eng-503', node)?.prNumber ?? null;
