import { homedir } from 'node:os';
import { stringify } from 'yaml';
import { resolvePaths } from '../core/paths.js';
import { fail } from './fail.js';
import { isHandle, seatIdentity, writeHandle } from '../musher/config/handle.js';
import { generateSeatKeys, keyFingerprint, loadSeatKeys, saveSeatKeys, seatHandle, seatKeysPresent, type SeatKeys } from '../musher/handoff/keys.js';
import { openSecretStore, type SecretStore } from '../musher/secrets/store.js';

/**
 * `sleds keys init|show`: the seat's hand-off keys. The private halves go to the secret store and are never
 * printed; what is printed is the roster entry (handle, name, public keys) to commit to `.sleds/roster.yml`.
 * `--handle <h>` stores the seat's handle in config.yml (musher/config/handle.ts), read by every sleds process.
 * `sleds keys trust|trusted|untrust`: the teammates' keys this seat pins (keys-trust.ts).
 */
function flagValue(args: string[], name: string): string | null {
  const i = args.indexOf(name);
  return i >= 0 && args[i + 1] !== undefined && !args[i + 1]!.startsWith('--') ? args[i + 1]! : null;
}

function rosterEntry(handle: string, name: string, keys: SeatKeys) {
  return { handle, name, keys: { x25519: keys.x25519.publicKey, ed25519: keys.ed25519.publicKey } };
}

function report(store: SecretStore, handle: string, name: string, keys: SeatKeys, json: boolean, created: boolean, handleFile: string | null = null): void {
  const entry = rosterEntry(handle, name, keys);
  const yaml = stringify([entry]);
  const fingerprints = { x25519: keyFingerprint(keys.x25519.publicKey), ed25519: keyFingerprint(keys.ed25519.publicKey) };
  const where = store.describe();
  if (json) {
    process.stdout.write(`${JSON.stringify({ created, entry, fingerprints, roster: yaml, backend: where.backend, location: where.location, handleFile }, null, 2)}\n`);
    return;
  }
  const set = handleFile ? `Handle set to ${handle} in ${handleFile}; ` : '';
  const head = created
    ? `${set}${set ? 'h' : 'H'}and-off keys made for ${handle}; the private keys are in ${where.location}.`
    : handleFile
      ? `${set}the hand-off keys are unchanged (private keys in ${where.location}).`
      : `Hand-off keys of ${handle} (private keys in ${where.location}).`;
  process.stdout.write(
    `${head}\nFingerprints: x25519 ${fingerprints.x25519} · ed25519 ${fingerprints.ed25519}\n` +
      `Add this entry under 'teammates:' in .sleds/roster.yml and commit it:\n\n${yaml}`,
  );
}

const NOT_A_HANDLE = "letters, digits, '.', '_' or '-', starting with a letter or digit — e.g. sleds keys init --handle dana";

async function init(args: string[], json: boolean): Promise<number> {
  const asked = args.includes('--handle') ? flagValue(args, '--handle') : null;
  if (args.includes('--handle') && asked === null) return fail(`--handle takes your roster handle: ${NOT_A_HANDLE}`, 2);
  let handleFile: string | null = null;
  if (asked !== null) {
    const wanted = asked.trim().toLowerCase();
    if (!isHandle(wanted)) return fail(`'${asked}' is not a handle: ${NOT_A_HANDLE}`, 2);
    try {
      handleFile = writeHandle(process.env, homedir(), wanted);
    } catch (e) {
      return fail(`could not store the handle: ${(e as Error).message}`);
    }
  }
  const who = seatIdentity(process.env, homedir());
  const handle = who.handle;
  if (!handle) return fail(`no usable handle for this seat — run 'sleds keys init --handle <your roster handle>' (${NOT_A_HANDLE.split(' — ')[0]})`, 2);
  if (handleFile && who.source === 'SLEDS_SEAT' && handle !== asked!.trim().toLowerCase()) {
    process.stderr.write(`sleds: stored the handle ${asked!.trim().toLowerCase()} in ${handleFile}, but SLEDS_SEAT=${handle} overrides it here — unset SLEDS_SEAT to use it\n`);
  }
  const name = flagValue(args, '--name') ?? handle;
  const store = openSecretStore(resolvePaths(process.env, homedir()));
  try {
    const present = await seatKeysPresent(store);
    if (present.length > 0 && !args.includes('--force')) {
      // A new handle for a seat that has its keys: the keys stay (bundles sealed to them still open).
      const kept = handleFile ? await loadSeatKeys(store) : null;
      if (kept) {
        report(store, handle, name, kept, json, false, handleFile);
        return 0;
      }
      return fail(`this seat already has hand-off keys — 'sleds keys show' prints them; 'sleds keys init --force' replaces them (bundles sealed to the old key can no longer be opened)`);
    }
    const keys = generateSeatKeys();
    await saveSeatKeys(store, keys);
    report(store, handle, name, keys, json, true, handleFile);
    return 0;
  } catch (e) {
    return fail(`could not make the keys: ${(e as Error).message}`);
  }
}

async function show(args: string[], json: boolean): Promise<number> {
  const handle = seatHandle() ?? 'me';
  const store = openSecretStore(resolvePaths(process.env, homedir()));
  try {
    const keys = await loadSeatKeys(store);
    if (!keys) return fail(`this seat has no hand-off keys yet — run 'sleds keys init'`);
    report(store, handle, flagValue(args, '--name') ?? handle, keys, json, false);
    return 0;
  } catch (e) {
    return fail((e as Error).message);
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
      return runKeysTrust(sub, rest, json, seatHandle());
    }
    default:
      return fail(`keys takes init, show, trust, trusted or untrust — e.g. sleds keys init`, 2);
  }
}
