import { readFileSync, statSync } from 'node:fs';
import { writePrivateFileSync } from '../fs-atomic.js';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { z } from 'zod';
import type { SledsPaths } from '../../core/paths.js';

/**
 * Where sleds keeps secrets (the platform keys; later the hand-off's private keys): the OS keyring when it works,
 * else one 0600 JSON file in the config dir. Values are never logged and never leave through this module except
 * by `get`. Names are generic (`anthropic-api-key`, `openai-api-key`, …).
 */
export interface SecretStore {
  get(name: string): Promise<string | null>;
  set(name: string, value: string): Promise<void>;
  delete(name: string): Promise<boolean>;
  describe(): SecretStoreInfo;
}

export interface SecretStoreInfo {
  backend: 'keyring' | 'file';
  location: string;
  /** Why the keyring is not used, when it was tried and failed. */
  keyringUnavailable?: string;
}

export const KEYRING_SERVICE = 'sleds';
export const SECRETS_FILE = 'secrets.json';

const NAME_RE = /^[a-z0-9][a-z0-9._-]{0,63}$/;

function checkName(name: string): void {
  if (!NAME_RE.test(name)) throw new Error(`secret name '${name}' is not valid — use lower-case letters, digits, '.', '_' or '-'`);
}

const SecretsFile = z.object({ version: z.literal(1), secrets: z.record(z.string(), z.string()) });

export class SecretsFileError extends Error {}

/** A 0600 file in a 0700 folder, replaced atomically (temp file, fsync, rename), refused when others can read it. */
export class FileSecretStore implements SecretStore {
  readonly path: string;
  constructor(
    dir: string,
    private readonly keyringUnavailable?: string,
  ) {
    this.path = join(dir, SECRETS_FILE);
  }

  /** The last file read, keyed by what a replacement (always a rename: a new inode) or an edit would change. */
  private cache: { stamp: string; secrets: Record<string, string> } | null = null;

  private read(): Record<string, string> {
    let st: ReturnType<typeof statSync>;
    try {
      st = statSync(this.path);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return {};
      throw e;
    }
    const mode = Number(st.mode);
    if ((mode & 0o077) !== 0) {
      throw new SecretsFileError(`${this.path} can be read by other users (mode ${(mode & 0o777).toString(8)}) — run 'chmod 600 ${this.path}' and try again`);
    }
    const stamp = `${st.ino}:${st.size}:${st.mtimeMs}`;
    if (this.cache?.stamp === stamp) return { ...this.cache.secrets };
    let parsed: unknown;
    try {
      parsed = JSON.parse(readFileSync(this.path, 'utf8'));
    } catch {
      throw new SecretsFileError(`${this.path} is not valid JSON — fix it or remove it and set the keys again`);
    }
    const file = SecretsFile.safeParse(parsed);
    if (!file.success) throw new SecretsFileError(`${this.path} is not a sleds secrets file — fix it or remove it and set the keys again`);
    this.cache = { stamp, secrets: file.data.secrets };
    return { ...file.data.secrets };
  }

  private write(secrets: Record<string, string>): void {
    // Born 0600: no moment at which the value is readable by others.
    writePrivateFileSync(this.path, `${JSON.stringify({ version: 1, secrets }, null, 2)}\n`);
  }

  async get(name: string): Promise<string | null> {
    checkName(name);
    return this.read()[name] ?? null;
  }

  async set(name: string, value: string): Promise<void> {
    checkName(name);
    this.write({ ...this.read(), [name]: value });
  }

  async delete(name: string): Promise<boolean> {
    checkName(name);
    const secrets = this.read();
    if (!(name in secrets)) return false;
    delete secrets[name];
    this.write(secrets);
    return true;
  }

  describe(): SecretStoreInfo {
    return { backend: 'file', location: this.path, ...(this.keyringUnavailable ? { keyringUnavailable: this.keyringUnavailable } : {}) };
  }
}

/** The slice of @napi-rs/keyring sleds uses. */
interface KeyringModule {
  Entry: new (service: string, account: string, options?: { linux?: { store?: 'secret-service' | 'keyutils' } }) => { getPassword(): string | null };
  AsyncEntry: new (
    service: string,
    account: string,
    options?: { linux?: { store?: 'secret-service' | 'keyutils' } },
  ) => { getPassword(): Promise<string | null>; setPassword(v: string): Promise<void>; deleteCredential(): Promise<boolean> };
}

// On Linux the default falls back to the kernel keyring, which forgets everything at logout and reboot: a platform
// key must survive both, so sleds asks for the Secret Service only (or uses the file).
const ENTRY_OPTIONS = process.platform === 'linux' ? { linux: { store: 'secret-service' as const } } : undefined;

class KeyringSecretStore implements SecretStore {
  constructor(private readonly keyring: KeyringModule) {}
  private entry(name: string) {
    checkName(name);
    return new this.keyring.AsyncEntry(KEYRING_SERVICE, name, ENTRY_OPTIONS);
  }
  get(name: string): Promise<string | null> {
    return this.entry(name).getPassword();
  }
  set(name: string, value: string): Promise<void> {
    return this.entry(name).setPassword(value);
  }
  delete(name: string): Promise<boolean> {
    return this.entry(name).deleteCredential();
  }
  describe(): SecretStoreInfo {
    return { backend: 'keyring', location: `OS keyring, service "${KEYRING_SERVICE}"` };
  }
}

/** Loads the keyring and reads a name that is never set: throws with the platform's reason when it cannot work. */
function probeKeyring(): KeyringModule {
  const keyring = createRequire(import.meta.url)('@napi-rs/keyring') as KeyringModule;
  new keyring.Entry(KEYRING_SERVICE, '__sleds_probe__', ENTRY_OPTIONS).getPassword();
  return keyring;
}

export interface OpenSecretStoreOptions {
  /** SLEDS_KEYRING=file forces the file (tests, headless boxes). Default: process.env. */
  env?: Record<string, string | undefined>;
}

export function openSecretStore(paths: Pick<SledsPaths, 'configDir'>, opts: OpenSecretStoreOptions = {}): SecretStore {
  const env = opts.env ?? process.env;
  if (env.SLEDS_KEYRING === 'file') return new FileSecretStore(paths.configDir);
  try {
    return new KeyringSecretStore(probeKeyring());
  } catch (e) {
    const reason = ((e as Error).message ?? String(e)).split('\n')[0]!.slice(0, 200);
    return new FileSecretStore(paths.configDir, reason);
  }
}
