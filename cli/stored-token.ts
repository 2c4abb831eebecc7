import { homedir } from 'node:os';
import { resolvePaths } from '../core/paths.js';
import { openSecretStore, type SecretStore } from '../musher/secrets/store.js';
import { fingerprint } from '../musher/secrets/platform-keys.js';
import { readSecretInput } from './key.js';
import { fail as reportFailure } from './fail.js';

/**
 * `sleds slack|github set-token` and `rm`: a service token read from stdin only (never argv: other users see argv in
 * ps, and shells keep it in history), kept in the secret store, and never printed — only its fingerprint.
 */

const MAX_TOKEN_CHARS = 512;

export interface StoredToken {
  /** The command that sets it: "sleds slack set-token". */
  command: string;
  /** "Slack bot token", "GitHub token". */
  label: string;
  /** What the stdin prompt asks for: "the Slack bot token (xoxb-…)". */
  prompt: string;
  secret: string;
}

export function fail(message: string, code: 1 | 2 = 1): number {
  return reportFailure(message, code);
}

export function openStore(): SecretStore {
  return openSecretStore(resolvePaths(process.env, homedir()));
}

/** Reads, checks and saves the token. `refuse` names a value that must not be saved; `warn` one worth a note. */
export async function saveToken(
  t: StoredToken,
  args: string[],
  json: boolean,
  checks: { refuse?: (value: string) => string | null; warn?: (value: string) => string | null } = {},
): Promise<number> {
  if (args.filter((a) => a !== '--json').length > 0) {
    return fail(`the token is read from stdin, never from the command line (other users see argv in ps, and shells keep it in history) — run '${t.command}' and paste it, or pipe it in: ${t.command} < tokenfile`, 2);
  }
  let value: string;
  try {
    value = (await readSecretInput(t.prompt)).trim();
  } catch (e) {
    return fail((e as Error).message);
  }
  if (value === '') return fail(`no token on stdin — pipe it in (${t.command} < tokenfile) or paste it at the prompt`, 2);
  if (/\s/.test(value) || value.length > MAX_TOKEN_CHARS) return fail(`that does not look like one ${t.label} (it holds spaces or is very long) — nothing saved`, 2);
  const refused = checks.refuse?.(value) ?? null;
  if (refused) return fail(refused, 2);
  const store = openStore();
  try {
    await store.set(t.secret, value);
  } catch (e) {
    return fail(`could not save the token: ${(e as Error).message}`);
  }
  const where = store.describe();
  const fp = fingerprint(value);
  const warning = checks.warn?.(value) ?? null;
  if (json) process.stdout.write(`${JSON.stringify({ saved: true, fingerprint: fp, backend: where.backend, location: where.location, ...(checks.warn ? { warning } : {}) })}\n`);
  else process.stdout.write(`${t.label[0]!.toUpperCase()}${t.label.slice(1)} saved (fingerprint ${fp}) in ${where.location}${warning ? ` — note: ${warning}` : ''}\n`);
  return 0;
}

/** `rm`: removes the token; `after` says what happens without it. */
export async function removeToken(t: StoredToken, json: boolean, after = ''): Promise<number> {
  let removed: boolean;
  try {
    removed = await openStore().delete(t.secret);
  } catch (e) {
    return fail((e as Error).message);
  }
  if (json) process.stdout.write(`${JSON.stringify({ removed })}\n`);
  else process.stdout.write(removed ? `${t.label[0]!.toUpperCase()}${t.label.slice(1)} removed${after}\n` : `no ${t.label} was set\n`);
  return 0;
}
