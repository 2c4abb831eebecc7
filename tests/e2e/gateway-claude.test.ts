/**
 * The gateway with the REAL Claude Code: `claude -p` with ANTHROPIC_BASE_URL = the gateway and ANTHROPIC_API_KEY =
 * a local token musher minted. The fake API sees the platform key, the spend lands in the platform-key rail, and
 * once the seat's allowance is spent claude prints the gateway's refusal after one request (no retries).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runClaudePrint } from './harness/claude-env.js';
import { useE2eFixture } from './harness/fixture.js';
import { requestMusher } from '../../hooks/musher-client.js';
import { sleds, startMusher, status, waitFor } from '../support/sleds-env.js';

const PLATFORM_KEY = 'sk-ant-api03-E2E-PLATFORM-KEY-0123456789abcdefghij';

describe('the gateway in front of the real Claude Code', { timeout: 120_000 }, () => {
  const fx = useE2eFixture({ claude: true });

  it('claude -p through the gateway: the platform key upstream, the spend in the rail, then the allowance refusal shown once', async () => {
    const fake = await fx.fakeAnthropic({ reply: 'Answered on the platform key.', usage: { input_tokens: 2000, output_tokens: 300, cache_read_input_tokens: 10_000, cache_creation_input_tokens: 500 } });
    const { home, world } = await fx.claudeWithSleds({
      mode: 'apiKey',
      fakeUrl: 'http://127.0.0.1:9', // replaced by the gateway's URL below
      sledsEnv: { SLEDS_KEYRING: 'file', SLEDS_SEAT: 'dana' },
      sledsConfig: { upstreams: { anthropic: fake.url } },
    });
    // The seat's allowance, from the user's policy file (no repository here).
    mkdirSync(join(world.sledsHome, 'config'), { recursive: true });
    writeFileSync(join(world.sledsHome, 'config', 'policy.yml'), 'allowance:\n  default: { per_day: $0.03 }\n');

    const set = await sleds(world, ['key', 'set', 'anthropic'], PLATFORM_KEY);
    expect(set.code, set.stderr).toBe(0);
    await startMusher(world);
    const res = await requestMusher(world.socket, 'POST', '/v1/gateway/tokens', JSON.stringify({ sessionId: 'resumed-session', project: 'acme/api' }), {}, 5000);
    expect(res.status, res.body).toBe(200);
    const { token, baseUrl } = JSON.parse(res.body) as { token: string; baseUrl: string };

    // What musher hands the resumed session: the gateway as the base URL, the local token as the API key.
    const env: Record<string, string> = { ...home.env, ANTHROPIC_BASE_URL: baseUrl, ANTHROPIC_API_KEY: token };
    const first = await runClaudePrint(fx.claudeBin, ['-p', 'continue the task'], { env, cwd: home.cwd, timeoutMs: 60_000 });
    expect(first.code, first.stderr + first.stdout).toBe(0);
    expect(first.stdout).toContain('Answered on the platform key.');
    const [seen] = fake.messageRequests();
    expect(seen!.path).toBe('/v1/messages?beta=true');
    expect(seen!.headers['x-api-key']).toBe(PLATFORM_KEY);
    expect(JSON.stringify(seen!.headers)).not.toContain(token);

    const s = await waitFor('the spend in the platform-key rail', async () => {
      const st = await status(world);
      return st.platformKey.bySeatModel.length > 0 ? st : null;
    });
    const model = String(seen!.body.model);
    const perResponse = s.platformKey.todayMicros;
    expect(s.platformKey.bySeatModel).toEqual([{ seat: 'dana', model, costMicros: perResponse, unpricedRecords: 0, records: 1 }]);
    expect(perResponse).toBeGreaterThan(0);
    expect(perResponse).toBeLessThan(30_000); // the second run still fits under the $0.03 day…

    const second = await runClaudePrint(fx.claudeBin, ['-p', 'and the next step'], { env, cwd: home.cwd, timeoutMs: 60_000 });
    expect(second.code, second.stderr + second.stdout).toBe(0);
    await waitFor('the second response metered', async () => (await status(world)).platformKey.bySeatModel[0]?.records === 2);
    expect(2 * perResponse).toBeGreaterThanOrEqual(30_000); // …and spends it.

    // Claude Code's own retries left at their default (10): the refusal must still be one request, shown once.
    const { CLAUDE_CODE_MAX_RETRIES: _retries, ...defaultRetries } = env;
    const refused = await runClaudePrint(fx.claudeBin, ['-p', 'one more thing'], { env: defaultRetries, cwd: home.cwd, timeoutMs: 60_000 });
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe('API Error: 402 allowance for dana spent: $0.03 today — it renews at midnight; type /sled exits for the other ways on\n');
    expect(fake.messageRequests()).toHaveLength(2); // the refused request never left the gateway
    const after = await status(world);
    expect(after.platformKey.bySeatModel[0]?.records).toBe(2);
  });
});
