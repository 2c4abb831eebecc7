import { createHash } from 'node:crypto';

/** The secret names of the platform keys, per provider the gateway serves. */
export const PLATFORM_KEY_SECRETS = { anthropic: 'anthropic-api-key', openai: 'openai-api-key' } as const;
export type PlatformKeyProvider = keyof typeof PLATFORM_KEY_SECRETS;

export function isPlatformKeyProvider(s: string | undefined): s is PlatformKeyProvider {
  return s === 'anthropic' || s === 'openai';
}

/** What may be shown of a secret: the first 8 hex digits of its sha256. */
export function fingerprint(value: string): string {
  return createHash('sha256').update(value).digest('hex').slice(0, 8);
}
