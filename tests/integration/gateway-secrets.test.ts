import { chmodSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FileSecretStore, openSecretStore } from '../../musher/secrets/store.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function configDir(): string {
  const root = mkdtempSync(join(tmpdir(), 'sl-sec-'));
  dirs.push(root);
  return join(root, 'config');
}

describe('the secret store', () => {
  it('SLEDS_KEYRING=file: a 0600 file in a 0700 folder, generic names, set/get/delete, nothing left behind', async () => {
    const dir = configDir();
    const store = openSecretStore({ configDir: dir }, { env: { SLEDS_KEYRING: 'file' } });
    expect(store.describe()).toEqual({ backend: 'file', location: join(dir, 'secrets.json') });
    expect(await store.get('anthropic-api-key')).toBeNull();
    await store.set('anthropic-api-key', 'sk-ant-1');
    await store.set('handoff.private-key', '-----BEGIN KEY-----');
    expect(await store.get('anthropic-api-key')).toBe('sk-ant-1');
    expect(await store.get('handoff.private-key')).toBe('-----BEGIN KEY-----');
    expect(statSync(join(dir, 'secrets.json')).mode & 0o777).toBe(0o600);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(await store.delete('anthropic-api-key')).toBe(true);
    expect(await store.delete('anthropic-api-key')).toBe(false);
    expect(await store.get('handoff.private-key')).toBe('-----BEGIN KEY-----');
    expect(readdirSync(dir)).toEqual(['secrets.json']); // no temp files from the atomic writes
    await expect(store.set('../escape', 'x')).rejects.toThrow(/secret name '..\/escape' is not valid/);
  });

  it('a value replaced by another process (sleds key set while musher runs) is read at once', async () => {
    const dir = configDir();
    const musher = new FileSecretStore(dir);
    const cli = new FileSecretStore(dir);
    await cli.set('openai-api-key', 'sk-old');
    expect(await musher.get('openai-api-key')).toBe('sk-old');
    await cli.set('openai-api-key', 'sk-new');
    expect(await musher.get('openai-api-key')).toBe('sk-new');
  });

  it('a file others can read, or one that is not a secrets file, is refused in one line that says what to do', async () => {
    const dir = configDir();
    const store = new FileSecretStore(dir);
    await store.set('anthropic-api-key', 'sk-1');
    const file = join(dir, 'secrets.json');
    writeFileSync(file, '{"version":1,"secrets":{"anthropic-api-key":"sk-1"}}', { mode: 0o640 });
    chmodSync(file, 0o640);
    await expect(store.get('anthropic-api-key')).rejects.toThrow(`${file} can be read by other users (mode 640) — run 'chmod 600 ${file}' and try again`);
    chmodSync(file, 0o600);
    writeFileSync(file, 'not json');
    await expect(store.get('anthropic-api-key')).rejects.toThrow(`${file} is not valid JSON — fix it or remove it and set the keys again`);
  });
});
