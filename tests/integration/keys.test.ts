import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { RosterFile } from '../../core/roster.js';
import { loadSeatKeys, SEAT_KEY_SECRETS } from '../../musher/handoff/keys.js';
import { open, seal } from '../../musher/handoff/seal.js';
import { FileSecretStore } from '../../musher/secrets/store.js';
import { disposeWorld, makeWorld, sleds, type SledsWorld } from '../support/sleds-env.js';

const worlds: SledsWorld[] = [];
afterEach(async () => {
  for (const w of worlds.splice(0)) await disposeWorld(w);
});

function world(seat: string): SledsWorld {
  const w = makeWorld({ SLEDS_KEYRING: 'file', SLEDS_SEAT: seat });
  worlds.push(w);
  return w;
}

const secretsFile = (w: SledsWorld) => join(w.sledsHome, 'config', 'secrets.json');

describe('sleds keys', () => {
  it('init makes the keys once (0600 file, private keys never printed), refuses a second time, and --force replaces them', async () => {
    const w = world('dana');
    const first = await sleds(w, ['keys', 'init', '--name', 'Dana Lee']);
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    expect(first.stdout).toContain("Add this entry under 'teammates:' in .sleds/roster.yml and commit it:");
    expect(statSync(secretsFile(w)).mode & 0o777).toBe(0o600);
    const secrets = JSON.parse(readFileSync(secretsFile(w), 'utf8')).secrets as Record<string, string>;
    expect(Object.keys(secrets).sort()).toEqual([SEAT_KEY_SECRETS.ed25519, SEAT_KEY_SECRETS.x25519]);
    // Neither the PEM nor its base64 body is in what was printed.
    for (const pem of Object.values(secrets)) {
      const body = pem.split('\n').filter((l) => l && !l.startsWith('-----')).join('');
      expect(first.stdout).not.toContain(body);
      expect(first.stdout).not.toContain('PRIVATE KEY');
    }

    const again = await sleds(w, ['keys', 'init']);
    expect(again.code).toBe(1);
    expect(again.stderr).toBe(
      "sleds: this seat already has hand-off keys — 'sleds keys show' prints them; 'sleds keys init --force' replaces them (bundles sealed to the old key can no longer be opened)\n",
    );
    expect(JSON.parse(readFileSync(secretsFile(w), 'utf8')).secrets).toEqual(secrets);

    const forced = await sleds(w, ['keys', 'init', '--force', '--json']);
    expect(forced.code).toBe(0);
    const out = JSON.parse(forced.stdout);
    expect(out.created).toBe(true);
    expect(JSON.parse(readFileSync(secretsFile(w), 'utf8')).secrets[SEAT_KEY_SECRETS.x25519]).not.toBe(secrets[SEAT_KEY_SECRETS.x25519]);
    expect(forced.stdout).not.toContain('PRIVATE');

    const shown = await sleds(w, ['keys', 'show', '--json']);
    expect(shown.code).toBe(0);
    expect(JSON.parse(shown.stdout).entry).toEqual(out.entry);
    expect(JSON.parse(shown.stdout).fingerprints.x25519).toMatch(/^[0-9a-f]{4}( [0-9a-f]{4}){3}$/);
  });

  it('show without keys says what to do', async () => {
    const w = world('jo');
    const r = await sleds(w, ['keys', 'show']);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe("sleds: this seat has no hand-off keys yet — run 'sleds keys init'\n");
  });

  it('the printed roster entries parse with RosterFile, and the two seats seal and open with them', async () => {
    const jo = world('jo');
    const dana = world('Dana');
    const a = await sleds(jo, ['keys', 'init']);
    const b = await sleds(dana, ['keys', 'init', '--name', 'Dana Lee']);
    expect([a.code, b.code]).toEqual([0, 0]);
    // What a person commits: the YAML block after the instruction line, pasted under teammates:.
    const block = (s: string) => s.slice(s.indexOf('commit it:\n\n') + 'commit it:\n\n'.length);
    const roster = RosterFile.parse({ teammates: [...parse(block(a.stdout)), ...parse(block(b.stdout))] });
    expect(roster.teammates.map((t) => [t.handle, t.name])).toEqual([
      ['jo', 'jo'],
      ['dana', 'Dana Lee'],
    ]);

    const joKeys = (await loadSeatKeys(new FileSecretStore(join(jo.sledsHome, 'config'))))!;
    const danaKeys = (await loadSeatKeys(new FileSecretStore(join(dana.sledsHome, 'config'))))!;
    expect(roster.teammates[0]!.keys).toEqual({ x25519: joKeys.x25519.publicKey, ed25519: joKeys.ed25519.publicKey });
    const now = Date.parse('2026-11-30T15:00:00Z');
    const bundle = seal(Buffer.from('hello dana'), { sender: { handle: 'jo', signingKey: joKeys.ed25519.privateKey }, recipient: { handle: 'dana', x25519: roster.teammates[1]!.keys!.x25519 }, nowMs: now });
    const opened = open(bundle, { roster, me: { handle: 'dana', x25519PrivateKey: danaKeys.x25519.privateKey }, nowMs: now + 60_000 });
    expect(opened.content.toString()).toBe('hello dana');
  });
});
