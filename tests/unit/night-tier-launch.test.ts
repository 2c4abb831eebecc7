import { describe, expect, it } from 'vitest';
import { codex } from '../../harnesses/codex/index.js';
import { CODEX_SLOW_STREAM_IDLE_MS } from '../../harnesses/codex/gateway.js';
import { nightTierEnv, type MintBatchToken } from '../../musher/engine/night-tier.js';

/**
 * The half-price tier's launch of a node's harness (issue 15 § 3): Codex, which ties a thread to its provider, is
 * given a provider of sleds' own for the threads sleds starts, and keeps a thread's own provider otherwise; the
 * token is in the environment only; a harness that cannot reach the gateway at all is refused by name.
 */
const TOKEN = 'sleds_gw_night_token_0123';
const URL = 'http://127.0.0.1:4999/v1';
const target = (t: { sessionProvider?: string | null; ownSessions?: boolean; slow?: boolean }) => ({ token: TOKEN, anthropicBaseUrl: 'http://127.0.0.1:4999', openaiBaseUrl: URL, ...t });
const OWN = [
  '-c', 'model_provider="sleds"',
  '-c', 'model_providers.sleds.name="sleds gateway"',
  '-c', 'model_providers.sleds.wire_api="responses"',
  '-c', `model_providers.sleds.base_url="${URL}"`,
  '-c', 'model_providers.sleds.env_key="SLEDS_GATEWAY_TOKEN"',
];
const SLOW = (p: string) => ['-c', `model_providers.${p}.stream_idle_timeout_ms=${CODEX_SLOW_STREAM_IDLE_MS}`];

describe('Codex on the gateway', () => {
  it.each([
    ['a thread sleds starts, slow (the night)', { ownSessions: true, slow: true }, [...OWN, ...SLOW('sleds')]],
    ['a thread sleds starts', { ownSessions: true }, OWN],
    ['a thread whose rollout names sleds\' provider', { sessionProvider: 'sleds' }, OWN],
    ['a thread on its own custom provider', { sessionProvider: 'fake' }, ['-c', `model_providers.fake.base_url="${URL}"`, '-c', 'model_providers.fake.env_key="SLEDS_GATEWAY_TOKEN"']],
    ['a thread on its own provider, by night: its provider kept over sleds\' own', { sessionProvider: 'fake', ownSessions: true, slow: true }, ['-c', `model_providers.fake.base_url="${URL}"`, '-c', 'model_providers.fake.env_key="SLEDS_GATEWAY_TOKEN"', ...SLOW('fake')]],
  ])('%s: the overrides that reach the gateway, the token in the environment', (_, t, args) => {
    const launch = codex.gatewayLaunch(target(t));
    expect(launch).toEqual({ ok: true, env: { SLEDS_GATEWAY_TOKEN: TOKEN }, args });
  });

  it.each([
    ['a thread whose provider is unknown', {}, /does not say which provider/],
    ['a ChatGPT thread (the built-in openai provider)', { sessionProvider: 'openai', ownSessions: true }, /will not resume a thread signed in with ChatGPT/],
    ['a provider id that is not a plain TOML key', { sessionProvider: 'a.b="x"' }, /cannot be pointed at the gateway/],
  ])('refuses %s, saying why', (_, t, why) => {
    expect(codex.gatewayLaunch(target(t))).toEqual({ ok: false, why: expect.stringMatching(why) });
  });
});

describe('nightTierEnv', () => {
  const minted: string[] = [];
  const mint: MintBatchToken = async (req) => {
    minted.push(req.sessionId);
    return { ok: true, token: TOKEN, baseUrl: 'http://127.0.0.1:4999', openaiBaseUrl: URL };
  };
  const route = { key: 'eng-503', title: 't', tracker: null, notes: null, repoRoot: '/r' };
  const node = { routeKey: 'eng-503', nodeId: 'job' };

  it('sends a Codex node to the half-price tier on sleds\' own provider, told to wait for slow answers', async () => {
    expect(await nightTierEnv(mint, route, node, 'codex', 3_600_000)).toEqual({ ok: true, env: { SLEDS_GATEWAY_TOKEN: TOKEN }, args: [...OWN, ...SLOW('sleds')] });
    expect(minted).toEqual(['night:eng-503/job']);
  });

  it('sends a Claude Code node there by its environment alone', async () => {
    const r = await nightTierEnv(mint, route, node, 'claude-code', 3_600_000);
    expect(r).toMatchObject({ ok: true, args: [], env: { ANTHROPIC_BASE_URL: 'http://127.0.0.1:4999', API_FORCE_IDLE_TIMEOUT: '0' } });
  });

  it('refuses a harness that cannot reach the gateway at all, by name, before minting a token', async () => {
    minted.length = 0;
    expect(await nightTierEnv(mint, route, node, 'cursor-agent', 3_600_000)).toEqual({ ok: false, why: expect.stringMatching(/^Cursor.* cannot be sent to the half-price tier: .*Cursor's backend/) });
    expect(minted).toEqual([]);
  });
});
