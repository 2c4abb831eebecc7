/**
 * The wall in the REAL Codex CLI against the fake OpenAI Responses API: a usage-limit 429 opens a wall, `sled 1`
 * (typed without the slash: Codex rejects unknown /words) takes the platform key, and the overrides `sleds go <wall>`
 * plans resume the same thread through musher's gateway — the thread's own provider pointed at it, because Codex
 * will not resume a thread under another provider.
 */
import { describe, expect, it } from 'vitest';
import { runCodexExec } from './harness/codex-env.js';
import { inputMessages } from './harness/fake-openai.js';
import { useE2eFixture } from './harness/fixture.js';
import { requestMusher } from '../../hooks/musher-client.js';
import { sleds, status, waitFor } from '../support/sleds-env.js';

const PLATFORM_KEY = 'sk-proj-platform-key-for-the-codex-e2e-0123456789';

describe('the wall in the real Codex CLI', { timeout: 180_000 }, () => {
  const fx = useE2eFixture({ codex: true });

  it('429 → wall → "sled 1" → the `sleds go` plan resumes the same thread on the platform key through the gateway', async () => {
    const fake = await fx.fakeOpenAI({ reply: 'Codex fake reply.' });
    const { home, env, world } = await fx.codexWithSleds({
      fakeUrl: fake.url,
      sledsEnv: { SLEDS_SEAT: 'dana' },
      // The gateway's upstream is the API's origin (it adds /v1/responses itself).
      sledsConfig: { upstreams: { openai: fake.url.replace(/\/v1$/, '') } },
    });
    expect((await sleds(world, ['install'])).code).toBe(0);
    expect((await sleds(world, ['key', 'set', 'openai'], `${PLATFORM_KEY}\n`)).code).toBe(0);

    const first = await runCodexExec(fx.codexBin, ['exec', '--skip-git-repo-check', '--json', 'remember the word PELICAN'], { env, cwd: home.cwd, timeoutMs: 60_000 });
    expect(first.code, first.stderr).toBe(0);
    const threadId = /"thread_id":"([^"]+)"/.exec(first.stdout)![1]!;

    fake.setBehaviour({ usageLimitRejection: { resetsAt: Math.floor(Date.now() / 1000) + 3 * 3600 } });
    const hit = await runCodexExec(fx.codexBin, ['exec', 'resume', '--skip-git-repo-check', '--', threadId, 'next step'], { env, cwd: home.cwd, timeoutMs: 60_000 });
    expect(hit.code).not.toBe(0);
    const wall = await waitFor('the Codex wall', async () => (await status(world)).wallBook.find((w) => w.sessionId === threadId), 30_000);

    const before = fake.responseRequests().length;
    const chose = await runCodexExec(fx.codexBin, ['exec', 'resume', '--skip-git-repo-check', '--', threadId, 'sled 1'], { env, cwd: home.cwd, timeoutMs: 60_000 });
    // `codex exec` prints only "UserPromptSubmit Blocked", not the reason (0.169); the wall records the answer.
    expect(chose.stderr).toMatch(/UserPromptSubmit Blocked/);
    expect(fake.responseRequests()).toHaveLength(before);
    const taken = (await status(world)).wallBook.find((w) => w.wallId === wall.wallId);
    expect(taken).toMatchObject({ choice: 'continue', chosenBy: 'user' });
    expect(taken!.outcome).toContain(`sleds go ${wall.wallId}`);

    // The plan, as --json shows it: the thread's own provider ("fake") pointed at the gateway; no token printed.
    const goRun = await sleds(world, ['go', wall.wallId, '--json']);
    expect(goRun.code, goRun.stderr).toBe(0);
    const plan = JSON.parse(goRun.stdout) as { args: string[]; env: Record<string, string> };
    expect(plan.args).toContain('resume');
    expect(plan.args.join(' ')).toMatch(/model_providers\.fake\.base_url="http:\/\/127\.0\.0\.1:\d+\/v1"/);
    expect(plan.env.SLEDS_GATEWAY_TOKEN).toBe('<redacted>');
    // The token travels in the environment only; the thread id after the `--` that ends the options.
    expect(plan.args.join(' ')).not.toContain('sleds_gw_');
    expect(plan.args.slice(plan.args.indexOf('--'))).toEqual(['--', threadId, expect.any(String)]);

    fake.setBehaviour({ usageLimitRejection: null });
    // Run the plan's own overrides with a token musher mints for this wall, headless (`codex exec resume`): the
    // Codex TUI that `sleds go` opens does not draw under a loaded test run (seen twice in the full suite).
    const minted = JSON.parse((await requestMusher(world.socket, 'POST', '/v1/gateway/tokens', JSON.stringify({ sessionId: threadId, wallId: wall.wallId }), {}, 5000)).body) as { token: string };
    const overrides = plan.args.slice(plan.args.indexOf('resume') + 1, plan.args.indexOf('--'));
    const onGateway = await runCodexExec(fx.codexBin, ['exec', 'resume', '--skip-git-repo-check', ...overrides, '--', threadId, 'continue on the key'], {
      env: { ...env, SLEDS_GATEWAY_TOKEN: minted.token, SLEDS_WALL: wall.wallId },
      cwd: home.cwd,
      timeoutMs: 60_000,
    });
    expect(onGateway.code, onGateway.stderr).toBe(0);
    const onKey = fake.responseRequests();
    const [resumed] = onKey.slice(before);
    expect(resumed!.headers.authorization).toBe(`Bearer ${PLATFORM_KEY}`);
    expect(resumed!.headers['session-id']).toBe(threadId);
    expect(inputMessages(resumed!).map((m) => m.text).join('\n')).toContain('remember the word PELICAN');
    const metered = await waitFor('the key spend in the rail', async () => (await status(world)).platformKey.bySeatModel.find((r) => r.seat === 'dana'), 30_000);
    expect(metered.records).toBeGreaterThan(0);
  });
});
