/** The environment variable a Codex session resumed on the gateway reads its local token from. */
export const CODEX_GATEWAY_TOKEN_ENV = 'SLEDS_GATEWAY_TOKEN';

/**
 * Codex on the gateway: the thread's OWN provider pointed at it. Codex 0.169 refuses to resume a thread under
 * another provider ("Cannot change this thread's model provider from `fake` to `x` on resume", measured), but takes
 * `-c` overrides of the same provider's base_url and env_key. Null when the provider id is not a plain TOML key.
 */
export function codexGatewayArgs(provider: string, openaiBaseUrl: string): string[] | null {
  if (!/^[A-Za-z0-9_-]+$/.test(provider)) return null;
  return ['-c', `model_providers.${provider}.base_url=${JSON.stringify(openaiBaseUrl)}`, '-c', `model_providers.${provider}.env_key=${JSON.stringify(CODEX_GATEWAY_TOKEN_ENV)}`];
}
