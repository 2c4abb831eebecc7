/**
 * Issue 14's acceptance for the node-only harnesses: Gemini CLI and OpenCode each run one route node end to end with
 * their REAL binaries through the engine (composed from its real parts in this process): the worktree, the pack on
 * stdin, the harness's own write tool making the file, the stream read into the run's states, the push, the pull
 * request on the fake GitHub, and the person's merge completing the node. The engine names neither harness.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { harnessById } from '../../harnesses/registry.js';
import { DEFAULT_CONFIG } from '../../musher/config/schema.js';
import { composeEngine } from '../../musher/engine/compose-engine.js';
import { registryHarnesses } from '../../musher/engine/harnesses.js';
import { parseRouteFile } from '../../musher/engine/route-yaml.js';
import { processRunner } from '../../musher/engine/runner.js';
import { GithubClient } from '../../musher/github/client.js';
import { openStore } from '../../musher/store/db.js';
import { startFakeGithub } from '../support/fake-github.js';
import { AGENT_GIT_IDENTITY, git, routeRepo } from '../support/route-repo.js';
import { startFakeAnthropic, waitFor, type RecordedRequest } from './harness/index.js';
import { ensureGeminiBinary } from './harness/gemini-binary.js';
import { makeGeminiHome, startFakeGemini } from './harness/fake-gemini.js';
import { ensureOpencodeBinary, makeOpencodeHome } from './harness/opencode-binary.js';

const TOKEN = 'ghp_e2e_engine_harnesses';
const SLUG = 'acme/shop';
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

interface HarnessWorld {
  bin: string;
  binName: string;
  model: string;
  env: Record<string, string>;
}

const carriesToolResult = (req: RecordedRequest): boolean => {
  const last = (req.body as { messages?: Array<{ content?: unknown }> }).messages?.at(-1)?.content;
  return Array.isArray(last) && last.some((b) => (b as { type?: string }).type === 'tool_result');
};

/** Each harness with its real binary and a fake of the model API it speaks; the agent writes notes.txt in its cwd. */
const WORLDS: Record<string, () => Promise<HarnessWorld>> = {
  'gemini-cli': async () => {
    const api = await startFakeGemini({ defaultText: 'Wrote notes.txt.' });
    cleanups.push(() => api.close());
    const home = await makeGeminiHome(api.url);
    cleanups.push(() => home.cleanup());
    api.queueTurn({ kind: 'call', name: 'write_file', args: { file_path: 'notes.txt', content: 'notes from gemini-cli\n' } });
    return { bin: await ensureGeminiBinary(), binName: 'gemini', model: 'gemini-2.5-pro', env: home.env };
  },
  opencode: async () => {
    const api = await startFakeAnthropic({
      reply: (req) => {
        const cwd = /Working directory: ([^\s\\]+)/.exec(JSON.stringify(req.body))?.[1] ?? '.';
        return carriesToolResult(req) ? 'Done: notes.txt written.' : [{ type: 'tool_use', name: 'write', input: { filePath: join(cwd, 'notes.txt'), content: 'notes from opencode\n' } }];
      },
    });
    cleanups.push(() => api.close());
    const home = await makeOpencodeHome();
    cleanups.push(() => home.cleanup());
    const found = harnessById('opencode');
    if (!found.ok) throw new Error(found.error);
    const launch = found.adapter.gatewayLaunch({ token: 'sk-sleds-local-e2e', anthropicBaseUrl: api.url, openaiBaseUrl: `${api.url}/v1` });
    if (!launch.ok) throw new Error(launch.why);
    return { bin: await ensureOpencodeBinary(), binName: 'opencode', model: 'anthropic/claude-sonnet-4-5', env: home.env(launch.env) };
  },
};

describe.each(['gemini-cli', 'opencode'] as const)('a route node in %s through sleds engine', { timeout: 300_000 }, (harness) => {
  it('runs in its worktree with the real binary, opens its PR, and completes on the merge', async () => {
    const w = await WORLDS[harness]!();
    const root = realpathSync(mkdtempSync(join(tmpdir(), 'sl-e2e-nodes-')));
    cleanups.push(() => rmSync(root, { recursive: true, force: true }));
    const { bare, repo } = routeRepo(root, { 'README.md': '# shop\n' });
    // The binary by its own name on PATH, as a person installs it.
    const bin = join(root, 'bin');
    mkdirSync(bin);
    symlinkSync(w.bin, join(bin, w.binName));

    const gh = await startFakeGithub({ token: TOKEN });
    cleanups.push(() => gh.close());
    gh.createRepo(SLUG);
    gh.linkRemote(SLUG, bare);
    const clock = { now: () => Date.now() };
    const db = openStore(join(root, 'sleds.db'));
    cleanups.push(() => void db.close());
    const env = { ...w.env, PATH: `${bin}:${process.env.PATH ?? ''}`, ...AGENT_GIT_IDENTITY };
    const lines: string[] = [];
    const { engine, store } = composeEngine({
      db,
      clock,
      log: { info: (l) => lines.push(l), warn: (l) => lines.push(`warn: ${l}`) },
      github: new GithubClient({ token: async () => ({ ok: true, token: TOKEN, source: 'secret-store' }), clock, baseUrl: gh.apiUrl, sleep: async () => undefined }),
      harnesses: registryHarnesses({ defaultHarness: () => null, binaries: DEFAULT_CONFIG.binaries, env, home: root, portBase: () => 43000 }),
      runner: processRunner(),
      env,
      config: {
        owner: 'host-e2e:1:nodes',
        concurrency: 1,
        leaseMs: 120_000,
        repoPolicy: () => ({ checks: [], maxVerifyAttempts: 2, setup: [], include: [], portBlock: 10 }),
        portStart: 43000,
        remote: 'origin',
        baseBranch: null,
        worktreesDir: join(root, 'worktrees'),
        runsDir: join(root, 'runs'),
        unknownResetWaitMs: 60_000,
        packMaxChars: 40_000,
      },
    });
    const parsed = parseRouteFile(`title: Notes\nnodes:\n  - id: notes\n    harness: ${harness}\n    model: ${w.model}\n    brief: Write notes.txt.\n`, { path: '.sleds/routes/notes.yml', harnesses: [harness] });
    if (!parsed.ok) throw new Error(parsed.error);
    store.upsertRoute(parsed.route, { repoRoot: repo, filePath: join(repo, '.sleds/routes/notes.yml') }, 'auto');
    store.arm('notes', null);
    const node = () => store.node('notes', 'notes')!;
    const round = async () => {
      await engine.tick();
      await engine.settle();
      await engine.activity(500, (ms) => new Promise((r) => setTimeout(r, ms).unref()));
    };
    const until = (what: string, done: () => boolean) =>
      waitFor(async () => (await round(), done()), { timeoutMs: 180_000, intervalMs: 10, description: what, onTimeout: () => `${node().run.state} ${node().run.problem ?? ''}\n${lines.join('\n')}` });

    await until('the node awaiting its merge', () => node().run.state === 'AWAITING_MERGE' && node().prNumber !== null);
    expect(node().harness).toBe(harness);
    expect(node().sessionId).not.toBeNull();
    expect(git(bare, 'show', 'sleds/notes/notes:notes.txt')).toBe(`notes from ${harness}`);
    expect(gh.pull(SLUG, node().prNumber!)!.body).toContain('Write notes.txt.');
    gh.mergePull(SLUG, node().prNumber!, 'dana');
    await until('the node completed', () => node().run.state === 'COMPLETED');
    expect(gh.mergeCalls).toEqual([]);
  });
});
