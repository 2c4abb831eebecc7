import { execFile, execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { generateSeatKeys, keyFingerprint, type SeatKeys } from '../../musher/handoff/keys.js';
import { open, readHeader, seal } from '../../musher/handoff/seal.js';
import { HandoffTrust, seatPublicKeys } from '../../musher/handoff/trust-gate.js';
import { TrustStore, trustFilePath } from '../../musher/handoff/trust-store.js';
import type { Log } from '../../musher/log.js';
import { RosterReader } from '../../musher/roster/reader.js';
import { CLI, disposeWorld, makeWorld, sleds, type RunResult, type SledsWorld } from '../support/sleds-env.js';

const worlds: SledsWorld[] = [];
afterEach(async () => {
  for (const w of worlds.splice(0)) await disposeWorld(w);
});

const SILENT: Log = { info: () => undefined, warn: () => undefined, error: () => undefined };
const clock = { now: () => Date.parse('2026-11-30T15:00:00Z') };

/** Jo's seat, and a checkout of the team's repository whose working tree holds the roster. */
function setup(): { w: SledsWorld; repo: string; jo: SeatKeys; dana: SeatKeys; writeRoster: (danaKeys: SeatKeys) => void; pinFile: string } {
  const w = makeWorld({ SLEDS_KEYRING: 'file', SLEDS_SEAT: 'jo' });
  worlds.push(w);
  const repo = join(w.root, 'repo');
  mkdirSync(join(repo, '.sleds'), { recursive: true });
  execFileSync('git', ['init', '-q', repo]);
  const jo = generateSeatKeys();
  const dana = generateSeatKeys();
  const writeRoster = (danaKeys: SeatKeys) =>
    writeFileSync(
      join(repo, '.sleds', 'roster.yml'),
      stringify({
        teammates: [
          { handle: 'jo', name: 'Jo Park', keys: { x25519: jo.x25519.publicKey, ed25519: jo.ed25519.publicKey } },
          { handle: 'dana', name: 'Dana Lee', keys: { x25519: danaKeys.x25519.publicKey, ed25519: danaKeys.ed25519.publicKey } },
        ],
      }),
    );
  writeRoster(dana);
  return { w, repo, jo, dana, writeRoster, pinFile: trustFilePath({ dataDir: join(w.sledsHome, 'data') }) };
}

const fps = (k: SeatKeys) => ({ x25519: keyFingerprint(k.x25519.publicKey), ed25519: keyFingerprint(k.ed25519.publicKey) });

/** `sleds <args>` on a real pseudo-terminal (python's pty, argv passed as a list), with `input` typed into it. */
function sledsOnTty(w: SledsWorld, args: string[], input: string, cwd: string): Promise<RunResult> {
  const spawnPty = 'import pty, sys; sys.exit(pty.spawn(sys.argv[1:]) >> 8)';
  return new Promise((resolveRun) => {
    const child = execFile('python3', ['-c', spawnPty, process.execPath, ...CLI, ...args], { env: w.env, cwd, timeout: 60_000 }, (err, stdout, stderr) => {
      resolveRun({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
    });
    child.stdin!.end(input);
  });
}

describe('sleds keys trust: a trust root a branch cannot change', () => {
  it('pins from the roster, lists the pins, refuses a changed key (CLI and the pickup check), and untrust + trust pins the new one', async () => {
    const { w, repo, jo, dana, writeRoster, pinFile } = setup();
    // The gate musher would hold, made before any pin: it must see the CLI's pins without being made again.
    const gate = new HandoffTrust(new TrustStore(pinFile, clock));
    const rosterNow = () => new RosterReader(SILENT).rosterAt(repo)!;
    const seat = seatPublicKeys('jo', jo);
    const danaFp = fps(dana);

    // Before any pin, a bundle from dana is refused at pickup with the fingerprint to compare and the command.
    const before = gate.checkSender(rosterNow(), seat, 'dana', 'jd7k2m9qa4zp');
    expect(before.ok ? null : before.error.message).toBe(
      `hand-off jd7k2m9qa4zp comes from 'dana', whose keys are not pinned on this seat (roster ed25519 ${danaFp.ed25519}, x25519 ${danaFp.x25519}) — nothing was written; compare them with dana out of band (they run 'sleds keys show'), then run 'sleds keys trust dana' and pick it up again`,
    );

    const pinned = await sleds(w, ['keys', 'trust', 'dana', '--yes', '--json'], undefined, {}, repo);
    expect(pinned.stderr).toBe('');
    expect(pinned.code).toBe(0);
    const answer = JSON.parse(pinned.stdout);
    expect(answer).toMatchObject({ handle: 'dana', name: 'Dana Lee', changed: false, alreadyPinned: false, previous: null });
    expect(answer.pinned).toEqual({ handle: 'dana', name: 'Dana Lee', x25519: dana.x25519.publicKey, ed25519: dana.ed25519.publicKey, fingerprints: danaFp, pinnedAt: expect.any(Number) });

    // The pin file: 0600, public keys and names only.
    expect(statSync(pinFile).mode & 0o777).toBe(0o600);
    const text = readFileSync(pinFile, 'utf8');
    expect(text).not.toContain('PRIVATE');
    for (const k of [dana.x25519.privateKey, dana.ed25519.privateKey, jo.x25519.privateKey, jo.ed25519.privateKey]) {
      const body = k.export({ format: 'der', type: 'pkcs8' }).toString('base64');
      expect(text).not.toContain(body.slice(-44));
    }
    expect(Object.keys(JSON.parse(text).pins[0]).sort()).toEqual(['ed25519', 'handle', 'name', 'pinnedAt', 'x25519']);

    const listed = await sleds(w, ['keys', 'trusted', '--json']);
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.stdout).pins).toEqual([answer.pinned]);
    expect(gate.checkSender(rosterNow(), seat, 'dana', 'jd7k2m9qa4zp')).toEqual({ ok: true, keys: { x25519: dana.x25519.publicKey, ed25519: dana.ed25519.publicKey } });

    // A branch swaps dana's keys in the roster for an attacker's, who signs a bundle as dana.
    const attacker = generateSeatKeys();
    writeRoster(attacker);
    const forged = seal(Buffer.from('rm -rf ~'), { sender: { handle: 'dana', signingKey: attacker.ed25519.privateKey }, recipient: { handle: 'jo', x25519: jo.x25519.publicKey }, nowMs: clock.now() });
    // The roster alone would let it through: that is the hole this closes.
    expect(open(forged, { roster: rosterNow(), me: { handle: 'jo', x25519PrivateKey: jo.x25519.privateKey }, nowMs: clock.now() }).content.toString()).toBe('rm -rf ~');
    const attackerFp = fps(attacker);
    const changedLine = `.sleds/roster.yml has keys for 'dana' other than the ones pinned on this seat (x25519 pinned ${danaFp.x25519} → roster ${attackerFp.x25519}; ed25519 pinned ${danaFp.ed25519} → roster ${attackerFp.ed25519}) — confirm the new keys with dana out of band (they run 'sleds keys show'), then run 'sleds keys trust dana' to pin them`;
    const refused = gate.checkSender(rosterNow(), seat, readHeader(forged).sender, readHeader(forged).id);
    expect(refused.ok ? null : [refused.error.kind, refused.error.message]).toEqual(['key-changed', changedLine]);
    // A send to dana is refused the same way: nothing is sealed to the attacker's key.
    const toDana = gate.recipientForSealing(rosterNow(), seat, 'dana');
    expect(toDana.ok ? null : toDana.error.message).toBe(changedLine);

    // The CLI, without --yes and without a terminal, refuses with the handle and both fingerprints, and pins nothing.
    const cantAsk = await sleds(w, ['keys', 'trust', 'dana'], undefined, {}, repo);
    expect(cantAsk.code).toBe(1);
    expect(cantAsk.stderr).toBe(
      `sleds: 'dana' has other keys in .sleds/roster.yml than the ones pinned on this seat (x25519 pinned ${danaFp.x25519} → roster ${attackerFp.x25519}; ed25519 pinned ${danaFp.ed25519} → roster ${attackerFp.ed25519}) and there is no terminal to ask on — confirm the new keys with dana out of band, then run 'sleds keys trust dana --yes' to pin them\n`,
    );
    const cantAskJson = await sleds(w, ['keys', 'trust', 'dana', '--json'], undefined, {}, repo);
    expect(cantAskJson.code).toBe(1);
    expect(JSON.parse(cantAskJson.stdout)).toEqual({ error: cantAsk.stderr.slice('sleds: '.length, -1) });
    expect(JSON.parse((await sleds(w, ['keys', 'trusted', '--json'])).stdout).pins).toEqual([answer.pinned]);

    // dana confirms out of band that these are her new keys: untrust, then trust again.
    const removed = await sleds(w, ['keys', 'untrust', 'dana', '--json']);
    expect(removed.code).toBe(0);
    expect(JSON.parse(removed.stdout).removed).toEqual(answer.pinned);
    expect(JSON.parse((await sleds(w, ['keys', 'trusted', '--json'])).stdout).pins).toEqual([]);
    const again = await sleds(w, ['keys', 'trust', 'dana', '--yes', '--json'], undefined, {}, repo);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout).pinned).toMatchObject({ x25519: attacker.x25519.publicKey, ed25519: attacker.ed25519.publicKey, fingerprints: attackerFp });
    expect(gate.checkSender(rosterNow(), seat, 'dana', 'jd7k2m9qa4zp').ok).toBe(true);
    expect(statSync(pinFile).mode & 0o777).toBe(0o600);
  });

  it('re-pinning a changed key with --yes says old → new', async () => {
    const { w, repo, dana, writeRoster } = setup();
    expect((await sleds(w, ['keys', 'trust', 'dana', '--yes'], undefined, {}, repo)).code).toBe(0);
    const next = generateSeatKeys();
    writeRoster(next);
    const r = await sleds(w, ['keys', 'trust', 'dana', '--yes'], undefined, {}, repo);
    expect(r.code).toBe(0);
    const [a, b] = [fps(dana), fps(next)];
    expect(r.stdout.split('\n').at(-2)).toBe(`Pinned dana's new keys: x25519 ${a.x25519} → ${b.x25519}, ed25519 ${a.ed25519} → ${b.ed25519}.`);
    const json = await sleds(w, ['keys', 'trust', 'dana', '--yes', '--json'], undefined, {}, repo);
    expect(JSON.parse(json.stdout)).toMatchObject({ alreadyPinned: true, changed: false });
  });

  it('on a terminal it shows the handle, name and fingerprints and asks; only a yes pins', async () => {
    const { w, repo, dana, pinFile } = setup();
    const f = fps(dana);
    const no = await sledsOnTty(w, ['keys', 'trust', 'dana'], 'n\n', repo);
    expect(no.stdout).toContain(`dana (Dana Lee) in .sleds/roster.yml, not pinned on this seat yet:`);
    expect(no.stdout).toContain(`x25519  ${f.x25519}`);
    expect(no.stdout).toContain(`ed25519 ${f.ed25519}`);
    expect(no.stdout).toContain('Trust these keys? [y/N] ');
    expect(no.stdout).toContain("nothing pinned — dana's keys are not trusted on this seat");
    expect(no.code).toBe(1);
    expect(new TrustStore(pinFile, clock).list()).toEqual([]);

    const yes = await sledsOnTty(w, ['keys', 'trust', 'dana'], 'y\n', repo);
    expect(yes.code).toBe(0);
    expect(yes.stdout).toContain(`Pinned dana's keys (x25519 ${f.x25519}, ed25519 ${f.ed25519}).`);
    expect(new TrustStore(pinFile, clock).list().map((p) => [p.handle, p.x25519, p.ed25519])).toEqual([['dana', dana.x25519.publicKey, dana.ed25519.publicKey]]);
  });

  it('refuses what it cannot trust: its own handle, a handle not in the roster, no checkout, a pin file others can write', async () => {
    const { w, repo, pinFile } = setup();
    const self = await sleds(w, ['keys', 'trust', 'jo', '--yes', '--json'], undefined, {}, repo);
    expect([self.code, JSON.parse(self.stdout).error]).toEqual([1, `'jo' is this seat — your own keys are checked against this seat's, not pinned; 'sleds keys show' prints them`]);
    const absent = await sleds(w, ['keys', 'trust', 'sam', '--yes'], undefined, {}, repo);
    expect([absent.code, absent.stderr]).toEqual([1, `sleds: 'sam' is not in .sleds/roster.yml here — pull the latest roster, or check the handle\n`]);
    const nowhere = await sleds(w, ['keys', 'trust', 'dana', '--yes', '--json'], undefined, {}, w.root);
    expect(JSON.parse(nowhere.stdout).error).toMatch(/^this is not a git checkout — /);
    const notPinned = await sleds(w, ['keys', 'untrust', 'dana', '--json']);
    expect([notPinned.code, JSON.parse(notPinned.stdout)]).toEqual([1, { error: `'dana' is not pinned — 'sleds keys trusted' lists the pins` }]);

    expect((await sleds(w, ['keys', 'trust', 'dana', '--yes'], undefined, {}, repo)).code).toBe(0);
    chmodSync(pinFile, 0o666);
    const loose = await sleds(w, ['keys', 'trusted', '--json']);
    expect([loose.code, JSON.parse(loose.stdout).error]).toEqual([1, `${pinFile} can be written by other users (mode 666) — run 'chmod go-w ${pinFile}', check the pins with 'sleds keys trusted', and try again`]);
    const gate = new HandoffTrust(new TrustStore(pinFile, clock));
    expect(() => gate.checkSender(new RosterReader(SILENT).rosterAt(repo)!, null, 'dana', 'jd7k2m9qa4zp')).toThrow(/can be written by other users/);
  });
});

describe('recipientForSealing: trust on first use at a send', () => {
  it('pins an unpinned recipient, says so once, and seals to that key from then on', () => {
    const { repo, jo, dana, pinFile } = setup();
    const store = new TrustStore(pinFile, clock);
    const gate = new HandoffTrust(store);
    const roster = new RosterReader(SILENT).rosterAt(repo)!;
    const first = gate.recipientForSealing(roster, seatPublicKeys('jo', jo), 'dana');
    const f = fps(dana);
    expect(first).toMatchObject({ ok: true, x25519: dana.x25519.publicKey, note: `pinned dana's keys on first use (x25519 ${f.x25519}, ed25519 ${f.ed25519}) — compare them with dana out of band; 'sleds keys trusted' lists the pinned keys` });
    expect(store.list()).toEqual([{ handle: 'dana', name: 'Dana Lee', x25519: dana.x25519.publicKey, ed25519: dana.ed25519.publicKey, pinnedAt: clock.now() }]);
    expect(statSync(pinFile).mode & 0o777).toBe(0o600);
    expect(gate.recipientForSealing(roster, seatPublicKeys('jo', jo), 'dana')).toMatchObject({ ok: true, pin: null, note: null });
  });
});
