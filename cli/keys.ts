import { homedir, userInfo } from 'node:os';
import { stringify } from 'yaml';
import { resolvePaths } from '../core/paths.js';
import { generateSeatKeys, keyFingerprint, loadSeatKeys, saveSeatKeys, seatHandle, seatKeysPresent, type SeatKeys } from '../musher/handoff/keys.js';
import { openSecretStore, type SecretStore } from '../musher/secrets/store.js';

/**
 * `sleds keys init|show`: the seat's hand-off keys. The private halves go to the secret store and are never
 * printed; what is printed is the roster entry (handle, name, public keys) to commit to `.sleds/roster.yml`.
 * `sleds keys trust|trusted|untrust`: the teammates' keys this seat pins (keys-trust.ts).
 */
function fail(json: boolean, message: string, code = 1): number {
  if (json) process.stdout.write(`${JSON.stringify({ error: message })}\n`);
  else process.stderr.write(`sleds: ${message}\n`);
  return code;
}

function flagValue(args: string[], name: string): string | null {
  const i = args.indexOf(name);
  return i >= 0 && args[i + 1] !== undefined && !args[i + 1]!.startsWith('--') ? args[i + 1]! : null;
}

function osUser(): string | null {
  try {
    return userInfo().username;
  } catch {
    return null;
  }
}

function rosterEntry(handle: string, name: string, keys: SeatKeys) {
  return { handle, name, keys: { x25519: keys.x25519.publicKey, ed25519: keys.ed25519.publicKey } };
}

function report(store: SecretStore, handle: string, name: string, keys: SeatKeys, json: boolean, created: boolean): void {
  const entry = rosterEntry(handle, name, keys);
  const yaml = stringify([entry]);
  const fingerprints = { x25519: keyFingerprint(keys.x25519.publicKey), ed25519: keyFingerprint(keys.ed25519.publicKey) };
  const where = store.describe();
  if (json) {
    process.stdout.write(`${JSON.stringify({ created, entry, fingerprints, roster: yaml, backend: where.backend, location: where.location }, null, 2)}\n`);
    return;
  }
  const head = created ? `Hand-off keys made for ${handle}; the private keys are in ${where.location}.` : `Hand-off keys of ${handle} (private keys in ${where.location}).`;
  process.stdout.write(
    `${head}\nFingerprints: x25519 ${fingerprints.x25519} · ed25519 ${fingerprints.ed25519}\n` +
      `Add this entry under 'teammates:' in .sleds/roster.yml and commit it:\n\n${yaml}`,
  );
}

async function init(args: string[], json: boolean): Promise<number> {
  const handle = seatHandle(process.env, osUser());
  if (!handle) return fail(json, `no usable handle for this seat — set SLEDS_SEAT to your roster handle (letters, digits, '.', '_' or '-') and run again`, 2);
  const name = flagValue(args, '--name') ?? handle;
  const store = openSecretStore(resolvePaths(process.env, homedir()));
  try {
    const present = await seatKeysPresent(store);
    if (present.length > 0 && !args.includes('--force')) {
      return fail(json, `this seat already has hand-off keys — 'sleds keys show' prints them; 'sleds keys init --force' replaces them (bundles sealed to the old key can no longer be opened)`);
    }
    const keys = generateSeatKeys();
    await saveSeatKeys(store, keys);
    report(store, handle, name, keys, json, true);
    return 0;
  } catch (e) {
    return fail(json, `could not make the keys: ${(e as Error).message}`);
  }
}

async function show(args: string[], json: boolean): Promise<number> {
  const handle = seatHandle(process.env, osUser()) ?? 'me';
  const store = openSecretStore(resolvePaths(process.env, homedir()));
  try {
    const keys = await loadSeatKeys(store);
    if (!keys) return fail(json, `this seat has no hand-off keys yet — run 'sleds keys init'`);
    report(store, handle, flagValue(args, '--name') ?? handle, keys, json, false);
    return 0;
  } catch (e) {
    return fail(json, (e as Error).message);
  }
}

export async function runKeys(args: string[], json: boolean): Promise<number> {
  const [sub, ...rest] = args;
  switch (sub) {
    case 'init':
      return init(rest, json);
    case 'show':
      return show(rest, json);
    case 'trust':
    case 'trusted':
    case 'untrust': {
      const { runKeysTrust } = await import('./keys-trust.js');
      return runKeysTrust(sub, rest, json, seatHandle(process.env, osUser()));
    }
    default:
      return fail(json, `keys takes init, show, trust, trusted or untrust — e.g. sleds keys init`, 2);
  }
}
