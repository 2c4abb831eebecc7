/**
 * Issue 15's acceptance "Codex: one job on the flex tier against the fake OpenAI API", with the REAL Codex CLI: an
 * overnight route node in Codex runs through the engine (composed from its real parts in this process) in its window,
 * pointed by its adapter at musher's gateway with a batch-tier token: a provider of sleds' own (`sleds`) defined by
 * `-c` overrides, the token in the environment only. Every request goes upstream with `service_tier: "flex"`; a
 * "resource unavailable" 429 is waited out by the gateway and never reaches codex; the rail holds half the standard
 * price; and the thread, resumed (`codex exec resume`) with the night tier's launch again, reaches the same provider.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { priceUsage } from '../../core/pricing.js';
import { harnessById } from '../../harnesses/registry.js';
import { DEFAULT_CONFIG } from '../../musher/config/schema.js';
import { composeEngine } from '../../musher/engine/compose-engine.js';
import { registryHarnesses } from '../../musher/engine/harnesses.js';
import { nightTierEnv, type MintBatchToken } from '../../musher/engine/night-tier.js';
import { parseRouteFile } from '../../musher/engine/route-yaml.js';
import { processRunner } from '../../musher/engine/runner.js';
import { GithubClient } from '../../musher/github/client.js';
import { openStore } from '../../musher/store/db.js';
import { musherClient } from '../../protocol/client/client.js';
import { startFakeGithub } from '../support/fake-github.js';
import { prices } from '../support/gateway-world.js';
import { AGENT_GIT_IDENTITY, git, routeRepo } from '../support/route-repo.js';
import { sleds, startMusher, status, waitFor as waitForValue } from '../support/sleds-env.js';
import { useE2eFixture } from './harness/fixture.js';
import { runToEnd } from './harness/child.js';
import { inputMessages } from './harness/fake-openai.js';
import { waitFor } from './harness/index.js';

const PLATFORM_KEY = 'sk-proj-platform-key-for-the-night-e2e-0123456789';
const GH_TOKEN = 'ghp_e2e_night_codex';
const SLUG = 'acme/shop';
const MODEL = 'gpt-5.4';
const HOUR = 3_600_000;

describe('an overnight Codex job on the flex tier', { timeout: 300_000 }, () => {
  const fx = useE2eFixture({ codex: true });

  it('runs in its window through the gateway on flex (a 429 waited out), is billed at half, and resumes on the same provider', async () => {
    const fake = await fx.fakeOpenAI({
      reply: (req) => (JSON.stringify(req.body).includes('"function_call_output"') ? 'Done by night.' : [{ type: 'function_call', name: 'exec_command', arguments: { cmd: "printf 'by night\\n' > night.txt" }, call_id: 'call_night_1' }]),
      // The first flex request finds no capacity: the gateway waits and sends it again.
      flexUnavailable: 1,
    });
    const { home, env: codexEnv, world } = await fx.codexWithSleds({
      fakeUrl: fake.url,
      sledsEnv: { SLEDS_SEAT: 'dana', SLEDS_KEYRING: 'file' },
      sledsConfig: { upstreams: { openai: fake.origin } },
    });
    expect((await sleds(world, ['key', 'set', 'openai'], `${PLATFORM_KEY}\n`)).code).toBe(0);
    await startMusher(world);
    // The engine's batch-tier tokens from musher over its socket, as `sleds engine` asks for them.
    const mint: MintBatchToken = async (req) => {
      const r = await musherClient({ socketPath: world.socket, timeoutMs: 10_000 }).call('gatewayToken', { body: { sessionId: req.sessionId, project: req.project, ttlMs: req.ttlMs, tier: 'batch' } });
      return r.ok ? { ok: true, token: r.body.token, baseUrl: r.body.baseUrl, openaiBaseUrl: r.body.openaiBaseUrl } : { ok: false, why: `musher refused: ${JSON.stringify(r)}` };
    };

    const root = await fx.project();
    const { bare, repo } = routeRepo(root, { 'README.md': '# shop\n' });
    const gh = await startFakeGithub({ token: GH_TOKEN });
    fx.later(() => gh.close());
    gh.createRepo(SLUG);
    gh.linkRemote(SLUG, bare);
    const clock = { now: () => Date.now() };
    const db = openStore(join(root, 'engine.db'));
    fx.later(async () => db.close());
    // The codex home's own provider is "fake" (straight to the fake API): only the night tier's overrides reach the gateway.
    const env = { ...codexEnv, PATH: process.env.PATH ?? '/usr/bin:/bin', ...AGENT_GIT_IDENTITY };
    const lines: string[] = [];
    const { engine, store } = composeEngine({
      db,
      clock,
      log: { info: (l) => lines.push(l), warn: (l) => lines.push(`warn: ${l}`) },
      github: new GithubClient({ token: async () => ({ ok: true, token: GH_TOKEN, source: 'secret-store' }), clock, baseUrl: gh.apiUrl, sleep: async () => undefined }),
      harnesses: registryHarnesses({ defaultHarness: () => null, binaries: { ...DEFAULT_CONFIG.binaries, codex: fx.codexBin }, env, home: root, portBase: () => 44000 }),
      runner: processRunner(),
      env,
      mintBatchToken: mint,
      config: {
        owner: 'host-e2e:1:night',
        concurrency: 1,
        leaseMs: 120_000,
        // The window is open now, for eight hours, under a $20 cap.
        repoPolicy: () => ({ checks: [], maxVerifyAttempts: 2, setup: [], include: [], portBlock: 10, night: (now: number) => ({ startMs: now - HOUR, endMs: now + 8 * HOUR, capMicros: 20_000_000, concurrency: 1 }) }),
        portStart: 44000,
        remote: 'origin',
        baseBranch: null,
        worktreesDir: join(root, 'worktrees'),
        runsDir: join(root, 'runs'),
        unknownResetWaitMs: 60_000,
        packMaxChars: 40_000,
      },
    });
    const parsed = parseRouteFile(
      `title: Night\nnodes:\n  - id: job\n    harness: codex\n    model: ${MODEL}\n    overnight: true\n    band: { low_usd: 1, high_usd: 3, low_min: 5, high_min: 30, confidence: 0.5 }\n    brief: Write night.txt.\n`,
      { path: '.sleds/routes/night.yml', harnesses: ['codex'] },
    );
    if (!parsed.ok) throw new Error(parsed.error);
    store.upsertRoute(parsed.route, { repoRoot: repo, filePath: join(repo, '.sleds/routes/night.yml') }, 'auto');
    store.arm('night', null);
    const node = () => store.node('night', 'job')!;
    const round = async () => {
      await engine.tick();
      await engine.settle();
      await engine.activity(500, (ms) => new Promise((r) => setTimeout(r, ms).unref()));
    };
    await waitFor(async () => (await round(), node().run.state === 'AWAITING_MERGE'), {
      timeoutMs: 180_000,
      intervalMs: 10,
      description: 'the overnight node awaiting its merge',
      onTimeout: () => `${node().run.state} ${node().run.problem ?? ''}\n${lines.join('\n')}\n${fake.responseRequests().map((q) => `${q.status} ${q.serviceTier}`).join('\n')}`,
    });
    expect(git(bare, 'show', 'sleds/night/job:night.txt')).toBe('by night');
    const threadId = node().sessionId!;
    expect(threadId).toMatch(/^[0-9a-f-]{36}$/);

    // Every request went through the gateway on flex, with the platform key; the first found no capacity and was
    // sent again by the gateway: codex saw no error.
    const asked = fake.responseRequests();
    expect(asked.map((q) => q.serviceTier)).toEqual(asked.map(() => 'flex'));
    expect(asked[0]!.status).toBe(429);
    expect(asked.slice(1).map((q) => q.status)).toEqual(asked.slice(1).map(() => 200));
    expect(asked.length).toBeGreaterThanOrEqual(3); // the 429, the tool call, the answer
    expect(asked.every((q) => q.headers.authorization === `Bearer ${PLATFORM_KEY}`)).toBe(true);
    const runDir = join(root, 'runs', 'night', 'job');
    const streams = readdirSync(runDir).map((d) => readFileSync(join(runDir, d, 'stdout.jsonl'), 'utf8')).join('\n');
    expect(streams).toContain('thread.started');
    expect(streams).not.toMatch(/resource.unavailable/i);

    // The thread runs on sleds' own provider (its rollout's first line).
    const rollout = (await home.rollouts()).find((f) => f.endsWith(`${threadId}.jsonl`))!;
    const meta = JSON.parse(readFileSync(rollout, 'utf8').split('\n')[0]!) as { payload: { model_provider: string } };
    expect(meta.payload.model_provider).toBe('sleds');

    // The rail: each answered request once, at half the standard price of its usage (1001 in, 200 of them cached, 50 out).
    const answered = asked.filter((q) => q.status === 200).length;
    const one = (serviceTier: string) => {
      const p = priceUsage(prices, { inputTokens: 801, outputTokens: 50, cacheWrite5mTokens: 0, cacheWrite1hTokens: 0, cacheReadTokens: 200, webSearchRequests: 0, serviceTier, inferenceGeo: null, source: 'gateway', dedupKey: '', sessionId: '', model: MODEL, timestampMs: Date.now(), cwd: null });
      if (!p.priced) throw new Error(`${MODEL} has no price: ${p.reason}`);
      return p.costMicros;
    };
    expect(Math.abs(one('flex') * 2 - one('standard'))).toBeLessThanOrEqual(1); // rounding: a micro-dollar at most
    const s = await waitForValue('the answers in the platform-key rail', async () => {
      const st = await status(world);
      return st.platformKey.bySeatModel.reduce((n, r) => n + r.records, 0) === answered ? st : null;
    });
    expect(s.platformKey.bySeatModel.every((r) => r.seat === 'dana' && r.unpricedRecords === 0)).toBe(true);
    expect(s.platformKey.bySeatModel.reduce((n, r) => n + r.costMicros, 0)).toBe(answered * one('flex'));

    // The next night's run of the same node: the night tier's launch again, `codex exec resume` of its thread. It
    // reaches the gateway on the same provider (Codex refuses a thread under another one), with its history.
    const route = { key: 'night', title: 'Night', tracker: null, notes: null, repoRoot: repo };
    const launch = await nightTierEnv(mint, route, node(), 'codex', 8 * HOUR);
    if (!launch.ok) throw new Error(launch.why);
    expect(launch.args.join(' ')).not.toContain('sleds_gw_');
    const adapter = harnessById('codex');
    if (!adapter.ok) throw new Error(adapter.error);
    const cmd = adapter.adapter.headlessArgv({ bin: fx.codexBin, prompt: 'carry on by night', model: MODEL, resumeSessionId: threadId, unattended: true, harnessArgs: launch.args });
    const resumed = await runToEnd(cmd.argv[0]!, cmd.argv.slice(1), { cwd: node().worktree!, env: { ...env, ...launch.env }, input: cmd.stdin, timeoutMs: 120_000 });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toContain(`"thread_id":"${threadId}"`);
    const [again] = fake.responseRequests().slice(asked.length);
    expect(again).toMatchObject({ status: 200, serviceTier: 'flex' });
    expect(again!.headers['session-id']).toBe(threadId);
    expect(inputMessages(again!).map((m) => m.text).join('\n')).toContain('Write night.txt.');
  });
});
