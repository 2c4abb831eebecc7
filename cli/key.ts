import { homedir } from 'node:os';
import { resolvePaths } from '../core/paths.js';
import { openSecretStore, type SecretStore } from '../musher/secrets/store.js';
import { fail as reportFailure } from './fail.js';
import { fingerprint, isPlatformKeyProvider, PLATFORM_KEY_SECRETS, type PlatformKeyProvider } from '../musher/secrets/platform-keys.js';

/**
 * `sleds key set|status|rm`: the platform keys the gateway spends. A key is read from stdin only — never argv,
 * which other users see in `ps` and shells keep in history — and never printed: status shows a fingerprint.
 */
const PROVIDERS = Object.keys(PLATFORM_KEY_SECRETS) as PlatformKeyProvider[];
const MAX_KEY_CHARS = 4096;

function fail(message: string, code: 1 | 2 = 1): number {
  return reportFailure(message, code);
}

function open(): SecretStore {
  return openSecretStore(resolvePaths(process.env, homedir()));
}

/** Reads stdin to its end; on a terminal, one line typed without echo. `what`: "the anthropic API key". */
export async function readSecretInput(what: string): Promise<string> {
  const stdin = process.stdin;
  if (!stdin.isTTY) {
    const chunks: Buffer[] = [];
    for await (const c of stdin) chunks.push(c as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  }
  process.stderr.write(`Paste ${what} and press Enter (it is not shown): `);
  stdin.setRawMode(true);
  stdin.resume();
  return new Promise((resolve, reject) => {
    let value = '';
    const done = (err: Error | null): void => {
      stdin.setRawMode(false);
      stdin.pause();
      stdin.off('data', onData);
      process.stderr.write('\n');
      if (err) reject(err);
      else resolve(value);
    };
    const onData = (buf: Buffer): void => {
      for (const ch of buf.toString('utf8')) {
        if (ch === '\r' || ch === '\n') return done(null);
        if (ch === '\u0003' || ch === '\u0004') return done(new Error('cancelled — no key was saved'));
        if (ch === '\u007f' || ch === '\b') value = value.slice(0, -1);
        else value += ch;
      }
    };
    stdin.on('data', onData);
  });
}

async function set(args: string[], json: boolean): Promise<number> {
  const [provider, ...extra] = args.filter((a) => a !== '--json');
  if (!isPlatformKeyProvider(provider)) return fail(`which key? sleds key set ${PROVIDERS.join('|')} (the key itself comes on stdin)`, 2);
  if (extra.length > 0) {
    return fail(`the key is read from stdin, never from the command line (other users see argv in ps, and shells keep it in history) — run 'sleds key set ${provider}' and paste it, or pipe it in: sleds key set ${provider} < keyfile`, 2);
  }
  let value: string;
  try {
    value = (await readSecretInput(`the ${provider} API key`)).trim();
  } catch (e) {
    return fail((e as Error).message);
  }
  if (value === '') return fail(`no key on stdin — pipe it in (sleds key set ${provider} < keyfile) or paste it at the prompt`, 2);
  if (/\s/.test(value) || value.length > MAX_KEY_CHARS) return fail('that does not look like one API key (it holds spaces or is very long) — nothing saved', 2);
  const store = open();
  try {
    await store.set(PLATFORM_KEY_SECRETS[provider], value);
  } catch (e) {
    return fail(`could not save the key: ${(e as Error).message}`);
  }
  const where = store.describe();
  const fp = fingerprint(value);
  if (json) process.stdout.write(`${JSON.stringify({ provider, saved: true, fingerprint: fp, backend: where.backend, location: where.location })}\n`);
  else process.stdout.write(`${provider} key saved (fingerprint ${fp}) in ${where.location}\n`);
  return 0;
}

async function status(json: boolean): Promise<number> {
  const store = open();
  const where = store.describe();
  const keys: Array<{ provider: PlatformKeyProvider; configured: boolean; fingerprint: string | null }> = [];
  try {
    for (const provider of PROVIDERS) {
      const value = await store.get(PLATFORM_KEY_SECRETS[provider]);
      keys.push({ provider, configured: value !== null, fingerprint: value === null ? null : fingerprint(value) });
    }
  } catch (e) {
    return fail((e as Error).message);
  }
  if (json) {
    process.stdout.write(`${JSON.stringify({ backend: where.backend, location: where.location, keyringUnavailable: where.keyringUnavailable ?? null, keys }, null, 2)}\n`);
    return 0;
  }
  const lines = [`Secrets: ${where.backend} · ${where.location}`];
  if (where.keyringUnavailable) lines.push(`  (OS keyring not used: ${where.keyringUnavailable})`);
  for (const k of keys) {
    lines.push(`  ${k.provider.padEnd(10)} ${k.configured ? `set · fingerprint ${k.fingerprint}` : `not set — sleds key set ${k.provider}`}`);
  }
  process.stdout.write(`${lines.join('\n')}\n`);
  return 0;
}

async function remove(args: string[], json: boolean): Promise<number> {
  const [provider] = args.filter((a) => a !== '--json');
  if (!isPlatformKeyProvider(provider)) return fail(`which key? sleds key rm ${PROVIDERS.join('|')}`, 2);
  let removed: boolean;
  try {
    removed = await open().delete(PLATFORM_KEY_SECRETS[provider]);
  } catch (e) {
    return fail((e as Error).message);
  }
  if (json) process.stdout.write(`${JSON.stringify({ provider, removed })}\n`);
  else process.stdout.write(removed ? `${provider} key removed\n` : `no ${provider} key was set\n`);
  return 0;
}

export async function runKey(args: string[], json: boolean): Promise<number> {
  const [sub, ...rest] = args;
  switch (sub) {
    case 'set':
      return set(rest, json);
    case 'status':
      return status(json);
    case 'rm':
      return remove(rest, json);
    default:
      return fail(`key takes set, status or rm — e.g. sleds key set anthropic < keyfile`, 2);
  }
}
