/** The environment variable a Codex session resumed on the gateway reads its local token from. */
export const CODEX_GATEWAY_TOKEN_ENV = 'SLEDS_GATEWAY_TOKEN';

/** The model provider sleds defines for a thread it starts on the gateway itself (an overnight node's). */
export const CODEX_GATEWAY_PROVIDER = 'sleds';

/**
 * How long Codex waits for the next event of a stream on the half-price tier: flex answers in up to 15 minutes
 * (musher/gateway/flex.ts), after the gateway has waited out "resource unavailable" 429s. Codex's own default (5 min)
 * would drop the stream and send the request again, paying twice.
 */
export const CODEX_SLOW_STREAM_IDLE_MS = 30 * 60_000;

const toml = (v: string) => JSON.stringify(v);

/**
 * Codex on the gateway: the thread's OWN provider pointed at it. Codex 0.169 refuses to resume a thread under
 * another provider ("Cannot change this thread's model provider from `fake` to `x` on resume", measured), but takes
 * `-c` overrides of the same provider's base_url and env_key. Null when the provider id is not a plain TOML key.
 */
export function codexGatewayArgs(provider: string, openaiBaseUrl: string, slow = false): string[] | null {
  if (!/^[A-Za-z0-9_-]+$/.test(provider)) return null;
  return [
    '-c',
    `model_providers.${provider}.base_url=${toml(openaiBaseUrl)}`,
    '-c',
    `model_providers.${provider}.env_key=${toml(CODEX_GATEWAY_TOKEN_ENV)}`,
    ...(slow ? ['-c', `model_providers.${provider}.stream_idle_timeout_ms=${CODEX_SLOW_STREAM_IDLE_MS}`] : []),
  ];
}

/**
 * A thread sleds starts on the gateway: a provider of its own (`sleds`), defined whole by `-c` overrides and chosen
 * as the run's provider. The thread keeps that id in its rollout (`session_meta.model_provider`), so the same
 * overrides resume it (`exec resume`) on the gateway again, whatever the gateway's port is by then. The token is
 * read from the environment (`env_key`), never given in argv.
 */
export function codexOwnProviderArgs(openaiBaseUrl: string, slow: boolean): string[] {
  const p = CODEX_GATEWAY_PROVIDER;
  return [
    '-c',
    `model_provider=${toml(p)}`,
    '-c',
    `model_providers.${p}.name=${toml('sleds gateway')}`,
    '-c',
    `model_providers.${p}.wire_api="responses"`,
    ...codexGatewayArgs(p, openaiBaseUrl, slow)!,
  ];
}
