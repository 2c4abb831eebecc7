/**
 * A pickup that must be refused writes nothing on the teammate's machine: no ref or object in their repository, no
 * worktree, no transcript, no record, no pickup mark on the remote. The real transport over a bare remote, the real
 * seal, the real service; only the bundle is made bad.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { RosterFile } from '../../core/roster.js';
import { openGitTransport } from '../../musher/handoff/git-transport.js';
import { FolderTransport } from '../../musher/handoff/folder-transport.js';
import { packSnapshotContent } from '../../musher/handoff/bundle-content.js';
import { historyFor } from '../../musher/handoff/work-in-progress.js';
import { PolicyLoader } from '../../musher/policy/loader.js';
import { policyPort } from '../../musher/policy/port.js';
import { generateSeatKeys, saveSeatKeys, type SeatKeys } from '../../musher/handoff/keys.js';
import { seal } from '../../musher/handoff/seal.js';
import { HandoffService } from '../../musher/handoff/service.js';
import type { Log } from '../../musher/log.js';
import { FileSecretStore } from '../../musher/secrets/store.js';
import { HandoffStore } from '../../musher/store/handoffs.js';
import { DAY, disposeWorlds, git, makeWorld, NOW, SESSION, type World } from './handoff-transport-world.js';
import { pinnedTrust } from '../support/trust-pins.js';

const log: Log = { info: () => undefined, warn: () => undefined, error: () => undefined };
const seat = process.env.SLEDS_SEAT;
afterEach(() => {
  disposeWorlds();
  if (seat === undefined) delete process.env.SLEDS_SEAT;
  else process.env.SLEDS_SEAT = seat;
});

function entry(handle: string, keys: SeatKeys) {
  return { handle, keys: { x25519: keys.x25519.publicKey, ed25519: keys.ed25519.publicKey } };
}

/**
 * Dana's side in `w`: a home, her seat keys in her secret store, SLEDS_SEAT=dana, and the hand-off service that picks
 * up at `nowMs` (with the policy's shared folder when `folderFor` is given).
 */
async function danasMachine(w: World, danaKeys: SeatKeys, roster: RosterFile, opts: { nowMs: number; folderFor?: (cwd: string) => string | null; trusts: Record<string, SeatKeys> }) {
  const home = join(w.root, 'dana-home');
  mkdirSync(home);
  mkdirSync(join(w.root, 'dana-data'));
  const secrets = new FileSecretStore(join(w.root, 'dana-config'));
  await saveSeatKeys(secrets, danaKeys);
  process.env.SLEDS_SEAT = 'dana';
  const service = new HandoffService({
    paths: { ...w.paths, stateDir: join(w.root, 'dana-state') },
    clock: { now: () => opts.nowMs },
    log,
    secrets,
    handoffs: new HandoffStore(w.db),
    timeZone: 'UTC',
    claudeConfigDir: join(home, '.claude'),
    codexHome: join(home, '.codex'),
    rosterFor: () => roster,
    trust: pinnedTrust(join(w.root, 'dana-data'), opts.trusts),
    ...(opts.folderFor ? { folderFor: opts.folderFor } : {}),
  });
  return { home, service };
}

/** What the teammate's machine holds that a pickup could write to. */
function footprint(w: World, home: string): string {
  return [
    git(w.b, 'for-each-ref'),
    git(w.b, 'count-objects', '-v'),
    git(w.b, 'worktree', 'list', '--porcelain'),
    git(w.b, 'status', '--porcelain', '--untracked-files=all'),
    readdirSync(home, { recursive: true }).sort().join('\n'),
    git(w.shared, 'for-each-ref', 'refs/sleds/picked/'),
  ].join('\n---\n');
}

type Case = { name: string; make: (k: { sam: SeatKeys; dana: SeatKeys; mallory: SeatKeys }) => Buffer; clockMs?: number; refusal: RegExp };

const sealed = (k: { sam: SeatKeys; dana: SeatKeys }, opts: { signer?: SeatKeys; to?: string; toKey?: string } = {}): Buffer =>
  seal(Buffer.from('the snapshot content'), {
    sender: { handle: 'sam', signingKey: (opts.signer ?? k.sam).ed25519.privateKey },
    recipient: { handle: opts.to ?? 'dana', x25519: opts.toKey ?? k.dana.x25519.publicKey },
    nowMs: NOW,
    id: 'bad2k2m9qa4p',
  });

const CASES: Case[] = [
  {
    name: 'a byte of the ciphertext changed',
    make: (k) => {
      const b = sealed(k);
      b[b.length - 40]! ^= 0x01;
      return b;
    },
    refusal: /^hand-off bad2k2m9qa4p: bad signature or tampered bytes/,
  },
  { name: 'signed by a key that is not sam\'s', make: (k) => sealed(k, { signer: k.mallory }), refusal: /^hand-off bad2k2m9qa4p: bad signature or tampered bytes/ },
  { name: 'sealed to someone else', make: (k) => sealed(k, { to: 'mallory', toKey: k.mallory.x25519.publicKey }), refusal: /^hand-off bad2k2m9qa4p is for 'mallory', not for you \('dana'\)/ },
  { name: 'expired by the clock', make: (k) => sealed(k), clockMs: NOW + 7 * DAY, refusal: /^hand-off bad2k2m9qa4p expired at 2026-12-07T15:00:00.000Z/ },
];

describe('a refused pickup writes nothing on the teammate\'s machine', () => {
  it.each(CASES)('$name', async (c) => {
    const w = await makeWorld();
    const keys = { sam: generateSeatKeys(), dana: generateSeatKeys(), mallory: generateSeatKeys() };
    const roster = RosterFile.parse({ teammates: [entry('sam', keys.sam), entry('dana', keys.dana)] });
    const sender = await openGitTransport({ repoDir: w.a, readExpiry: () => NOW + 7 * DAY, clock: { now: () => NOW } });
    await sender.send({ id: 'bad2k2m9qa4p', bundle: c.make(keys) });

    const { home, service } = await danasMachine(w, keys.dana, roster, { nowMs: c.clockMs ?? NOW + DAY, trusts: { sam: keys.sam } });
    const before = footprint(w, home);
    await expect(service.pickup('bad2k2m9qa4p', w.b)).rejects.toThrow(c.refusal);
    expect(footprint(w, home)).toBe(before);
    expect(new HandoffStore(w.db).get('bad2k2m9qa4p')).toBeNull();
    expect(existsSync(join(w.root, 'dana-state', 'handoffs'))).toBe(false);
  });
});

describe("the policy's shared folder carries the hand-off instead of the remote", () => {
  it('handoff.folder in .sleds/policy.yml: the bundle and WIP go to the folder, the pickup comes from it, the remote sees nothing', async () => {
    const w = await makeWorld();
    const keys = { sam: generateSeatKeys(), dana: generateSeatKeys() };
    const roster = RosterFile.parse({ teammates: [entry('sam', keys.sam), entry('dana', keys.dana)] });
    const shared = join(w.root, 'team-share');
    mkdirSync(shared);
    // Dana's clone holds the policy (as the team committed it); the loader reads it like musher does.
    mkdirSync(join(w.b, '.sleds'));
    writeFileSync(join(w.b, '.sleds', 'policy.yml'), `handoff:\n  folder: ${shared}\n`);
    const policy = policyPort(new PolicyLoader({ configDir: join(w.root, 'dana-config') }), w.root);
    expect(policy.forDirectory(w.b).handoffFolder).toBe(shared);

    // Sam's HEAD is not on the remote: the commits it needs travel sealed with the rest.
    const { history } = await historyFor(w.a, 'fxd2k2m9qa4p', w.aHead);
    const bundle = seal(await packSnapshotContent(w.paths, w.snapshotId, { history }), {
      sender: { handle: 'sam', signingKey: keys.sam.ed25519.privateKey },
      recipient: { handle: 'dana', x25519: keys.dana.x25519.publicKey },
      nowMs: NOW,
      id: 'fxd2k2m9qa4p',
    });
    await new FolderTransport({ dir: shared, readExpiry: () => NOW + 7 * DAY, clock: { now: () => NOW } }).send({ id: 'fxd2k2m9qa4p', bundle });

    const { service } = await danasMachine(w, keys.dana, roster, { nowMs: NOW + DAY, folderFor: (cwd) => policy.forDirectory(cwd).handoffFolder, trusts: { sam: keys.sam } });
    const picked = await service.pickup('fxd2k2m9qa4p', w.b);
    expect(picked).toMatchObject({ id: 'fxd2k2m9qa4p', sender: 'sam', sessionId: SESSION, branch: 'sleds/handoff/fxd2k2m9qa4p' });
    expect(readFileSync(join(picked.dir, 'a.txt'), 'utf8')).toBe('one\nTWO\nthree\nfour\n');
    expect(readFileSync(join(picked.dir, 'notes.md'), 'utf8')).toBe('# notes\nuntracked\n');
    expect(existsSync(join(shared, 'fxd2k2m9qa4p.picked'))).toBe(true);
    expect(git(w.shared, 'for-each-ref', 'refs/sleds/', 'refs/heads/sleds/')).toBe('');
    expect(new HandoffStore(w.db).get('fxd2k2m9qa4p')).toMatchObject({ direction: 'received', peer: 'sam', transport: `shared folder ${shared}` });
    // A second pickup by dana installs nothing and says where the work is.
    expect(await service.pickup('fxd2k2m9qa4p', w.b)).toMatchObject({ again: true, dir: picked.dir, sessionId: SESSION });
  });
});
