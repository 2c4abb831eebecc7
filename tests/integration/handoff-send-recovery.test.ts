/**
 * A hand-off left in `sending` by a musher that stopped before its push (a crash, a kill, a laptop closed) is sent
 * again from the sealed outbox at the next start — or marked failed with its reason when it cannot be, and the
 * sender is told.
 */
import { existsSync, mkdirSync, readdirSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { RosterFile } from '../../core/roster.js';
import { generateSeatKeys, saveSeatKeys, type SeatKeys } from '../../musher/handoff/keys.js';
import { HandoffService } from '../../musher/handoff/service.js';
import type { Log } from '../../musher/log.js';
import { FileSecretStore } from '../../musher/secrets/store.js';
import { HandoffStore } from '../../musher/store/handoffs.js';
import { pinnedTrust } from '../support/trust-pins.js';
import { resolvePaths } from '../../core/paths.js';
import { openStore } from '../../musher/store/db.js';
import { disposeWorld, makeWorld as makeSledsWorld, startMusher, stopMusher, waitFor } from '../support/sleds-env.js';
import { DAY, disposeWorlds, git, makeWorld, NOW, SESSION, type World } from './handoff-transport-world.js';

const seat = process.env.SLEDS_SEAT;
afterEach(() => {
  disposeWorlds();
  if (seat === undefined) delete process.env.SLEDS_SEAT;
  else process.env.SLEDS_SEAT = seat;
});

async function samsMachine(w: World, nowMs: () => number) {
  const keys = { sam: generateSeatKeys(), dana: generateSeatKeys() };
  const entry = (handle: string, k: SeatKeys) => ({ handle, keys: { x25519: k.x25519.publicKey, ed25519: k.ed25519.publicKey } });
  const roster = RosterFile.parse({ teammates: [entry('sam', keys.sam), entry('dana', keys.dana)] });
  const secrets = new FileSecretStore(join(w.root, 'sam-config'));
  await saveSeatKeys(secrets, keys.sam);
  mkdirSync(join(w.root, 'sam-data'));
  const trust = pinnedTrust(join(w.root, 'sam-data'), {});
  const logged: string[] = [];
  const log: Log = { info: (l) => logged.push(l), warn: (l) => logged.push(l), error: (l) => logged.push(l) };
  process.env.SLEDS_SEAT = 'sam';
  const handoffs = new HandoffStore(w.db);
  // Each start of musher makes its service afresh.
  const musher = () =>
    new HandoffService({
      paths: { ...w.paths, stateDir: join(w.root, 'sam-state') },
      clock: { now: nowMs },
      log,
      secrets,
      handoffs,
      timeZone: 'UTC',
      claudeConfigDir: join(w.root, 'sam-home', '.claude'),
      codexHome: join(w.root, 'sam-home', '.codex'),
      rosterFor: () => roster,
      trust,
    });
  return { musher, handoffs, logged };
}

describe('a hand-off musher stopped before sending', () => {
  it('is sent at the next start from its sealed outbox, and the outbox is emptied', async () => {
    const w = await makeWorld();
    const sam = await samsMachine(w, () => NOW);
    const sent = await sam.musher().send({ sessionId: SESSION, harness: 'claude-code', snapshotId: w.snapshotId, wallId: null }, w.a, 'dana', null);
    // The answer went out; musher died before `after` pushed it.
    expect(sam.handoffs.get(sent.id)?.state).toBe('sending');
    expect(git(w.shared, 'for-each-ref', 'refs/sleds/')).toBe('');
    const outbox = join(w.root, 'sam-state', 'handoffs', 'outbox');
    expect(readdirSync(outbox)).toEqual([`${sent.id}.sleds`]);

    await sam.musher().recover();
    expect(sam.handoffs.get(sent.id)?.state).toBe('sent');
    expect(git(w.shared, 'for-each-ref', '--format=%(refname)', 'refs/sleds/')).toBe(`refs/sleds/handoffs/${sent.id}`);
    expect(readdirSync(outbox)).toEqual([]);
  });

  it('whose sealed bundle is gone, or which expired meanwhile, is marked failed with the reason, and the sender is told', async () => {
    const w = await makeWorld();
    let now = NOW;
    const sam = await samsMachine(w, () => now);
    const lost = await sam.musher().send({ sessionId: SESSION, harness: 'claude-code', snapshotId: w.snapshotId, wallId: null }, w.a, 'dana', null);
    unlinkSync(join(w.root, 'sam-state', 'handoffs', 'outbox', `${lost.id}.sleds`));
    const old = await sam.musher().send({ sessionId: SESSION, harness: 'claude-code', snapshotId: w.snapshotId, wallId: null }, w.a, 'dana', null);
    now = NOW + 8 * DAY;

    await sam.musher().recover();
    expect(sam.handoffs.get(lost.id)).toMatchObject({ state: 'failed', note: JSON.stringify({ error: 'musher stopped while sending it, and its sealed bundle is gone — hand it off again' }) });
    expect(sam.handoffs.get(old.id)).toMatchObject({ state: 'failed', note: JSON.stringify({ error: 'musher stopped while sending it, and it has expired since — hand it off again' }) });
    expect(sam.logged).toContain(`hand-off ${lost.id} to dana was not sent: musher stopped while sending it, and its sealed bundle is gone — hand it off again`);
    expect(git(w.shared, 'for-each-ref', 'refs/sleds/')).toBe('');
    expect(existsSync(join(w.root, 'sam-state', 'handoffs', 'outbox', `${old.id}.sleds`))).toBe(false);
    // A second start finds nothing left to do.
    sam.logged.length = 0;
    await sam.musher().recover();
    expect(sam.logged).toEqual([]);
  });

  it('a real musher does it as it starts: the row left in sending is sent, with nothing else asked of it', async () => {
    const w = await makeWorld();
    const seatWorld = makeSledsWorld({ SLEDS_SEAT: 'sam', SLEDS_NO_AUTOSTART: '1' });
    try {
      // What a musher killed between sealing and pushing leaves: the row and the sealed bundle in the outbox.
      const paths = resolvePaths({ SLEDS_HOME: seatWorld.sledsHome }, seatWorld.home);
      const db = openStore(paths.dbFile);
      new HandoffStore(db).record({ id: 'lft2k2m9qa4p', direction: 'sent', wallId: null, sessionId: SESSION, harness: 'claude-code', peer: 'dana', createdAt: Date.now(), expiresAt: Date.now() + DAY, transport: 'git', ref: null, branch: null, state: 'sending', note: JSON.stringify({ cwd: w.a }) });
      db.close();
      mkdirSync(join(paths.stateDir, 'handoffs', 'outbox'), { recursive: true });
      writeFileSync(join(paths.stateDir, 'handoffs', 'outbox', 'lft2k2m9qa4p.sleds'), 'sealed bytes');
      await startMusher(seatWorld);
      await waitFor('the push at start', async () => git(w.shared, 'for-each-ref', '--format=%(refname)', 'refs/sleds/') === 'refs/sleds/handoffs/lft2k2m9qa4p' || null, 30_000);
      await stopMusher(seatWorld);
      const after = openStore(paths.dbFile);
      expect(new HandoffStore(after).get('lft2k2m9qa4p')?.state).toBe('sent');
      after.close();
    } finally {
      await disposeWorld(seatWorld);
    }
  });
});

