import { harnessById, storedHarness, type HarnessId } from '../../harnesses/registry.js';
import { rosterHarness } from './harness-words.js';
import { deliveredLine, deliveryPendingLine, handedOffLine, NO_SLACK_TOKEN, noSlackIdWords, pickupCommand, type PickedUp } from '../../core/handoff/answer.js';
import { mkdir, readFile, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { othersThan, teammateByHandle, type RosterFile } from '../../core/roster.js';
import { BundleIdSchema } from '../../core/handoff/header.js';
import type { SledsPaths } from '../../core/paths.js';
import type { Clock } from '../clock.js';
import { writeFileAtomic } from '../fs-atomic.js';
import type { Log } from '../log.js';
import type { SecretStore } from '../secrets/store.js';
import { readSnapshot } from '../snapshot/files.js';
import type { HandoffRow, HandoffStore } from '../store/handoffs.js';
import type { WallRow } from '../store/wall-book.js';
import { notifyDesktop, notifyHandoff, notifyPickedUp, SLACK_BOT_TOKEN_SECRET, type NotifySettings } from '../notify/index.js';
import { pickedUpDesktopWords } from '../../core/notify/messages.js';
import { packSnapshotContent, unpackSnapshotContent, type SnapshotContent } from './bundle-content.js';
import { openGitTransport } from './git-transport.js';
import { FolderTransport } from './folder-transport.js';
import { repoTopLevel } from './git-plumbing.js';
import type { HandoffTransport } from './transport.js';
import { assertHandoffId } from './transport.js';
import { loadSeatKeys, seatHandle } from './keys.js';
import { seatPublicKeys, type HandoffTrust } from './trust-gate.js';
import { newBundleId, open, readHeader, readHeaderFromPrefix, seal } from './seal.js';
import { historyFor } from './work-in-progress.js';
import type { HistoryStore } from '../store/histories.js';
import { installPickup, parseJournal, undoPickup, type PickupStep } from './pickup.js';

/** What a hand-off carries: a session's snapshot, taken at its wall or (a hand-off asked for mid-work) just now. */
export type HandoffSource = Pick<WallRow, 'sessionId' | 'harness' | 'snapshotId'> & { wallId: string | null };

export interface HandoffDeps {
  paths: SledsPaths;
  clock: Clock;
  log: Log;
  secrets: SecretStore;
  handoffs: HandoffStore;
  /** Where pickups record the sender's history they install (absent only where a test builds the service alone). */
  histories?: HistoryStore;
  timeZone: string;
  claudeConfigDir: string;
  codexHome: string;
  /** The team roster of the repository a folder is in (null when it has none, or it is broken). */
  rosterFor(cwd: string): RosterFile | null;
  /** The shared folder the policy of a folder's repository names for hand-offs (`handoff.folder`); null: its remote. */
  folderFor?(cwd: string): string | null;
  /** The teammates' keys pinned on this seat: the roster of a working tree is checked against them both ways. */
  trust: HandoffTrust;
  /** Called as a pickup completes each step (tests stop the process there, to prove a retry mends it). */
  onPickupStep?(step: PickupStep): void | Promise<void>;
  /** Slack's API URL and the desktop notifier, from config.yml (default: slack.com, the notifier on PATH). */
  notify?: NotifySettings;
}

/** A pickup done: what the answer needs (`dir` is the worktree holding the sender's work), and the brief. */
export interface PickedUpSession extends PickedUp {
  /** Checked to be one of sleds' own (storedHarness). */
  harness: HarnessId;
  brief: string;
  /** True when this seat had picked it up before: nothing was installed again, the answer says where it is. */
  again: boolean;
}

/** A listing reads only the bundle's first bytes: its header. */
const readExpiry = (prefix: Buffer): number | null => {
  try {
    return readHeaderFromPrefix(prefix).expiresAt;
  } catch {
    // A bundle whose header does not read: no expiry to list (opening it says why).
    return null;
  }
};

/** Who this seat is now: read at each hand-off, so a handle set with `sleds keys init --handle` needs no restart. */
function me(): string | null {
  return seatHandle();
}

/** What a received row's note holds once its pickup completed. */
interface ReceivedNote {
  dir?: string;
  briefFile?: string;
}

/** What a sent row's note holds once pushed: where it went, and Slack's post (or why there is none). */
interface SentNote {
  transport?: string;
  slack?: { channel?: string; ts?: string; error?: string; code?: string };
}

/** What a sent row's note holds while it is being sent: where it was sent from (a retry after a restart needs it). */
interface SendingNote {
  cwd?: string;
}

/**
 * Hand-offs between seats: at a wall `/sled 5` seals the session's snapshot — its transcript and its work in
 * progress — to a teammate and sends the sealed bundle over the repository's remote (or the policy's shared folder);
 * on their machine `/sled pickup <id>` verifies, decrypts, rebuilds the worktree and installs the transcript.
 * Nothing is written on the teammate's side before the bundle's signature, recipient, id, dates and every path in it
 * have been checked; a pickup is one journal, undone as a whole when it does not complete.
 */
export class HandoffService {
  constructor(private readonly d: HandoffDeps) {}

  /** Whether this seat can send hand-offs at all (its keys exist). */
  async ready(): Promise<boolean> {
    try {
      return (await loadSeatKeys(this.d.secrets)) !== null;
    } catch {
      // Keys that cannot be read: not ready (a send reports loadSeatKeys's error itself).
      return false;
    }
  }

  /**
   * Where a hand-off's harness keeps its sessions here: musher's resolved homes, handed to the adapter as the
   * environment it reads them from (so the adapter, not this service, knows which home is whose).
   */
  private harnessHome(harness: string): string {
    const env = { CLAUDE_CONFIG_DIR: this.d.claudeConfigDir, CODEX_HOME: this.d.codexHome };
    const found = harnessById(harness);
    if (!found.ok) throw new Error(found.error);
    return found.adapter.sessions.home(env, '/');
  }

  private outboxFile(id: string): string {
    return join(this.d.paths.stateDir, 'handoffs', 'outbox', `${id}.sleds`);
  }

  /**
   * `/sled 5 [handle]`: sealed now (the hook's answer must come within its budget, and it names the id) and kept in
   * the outbox; pushed and announced in `after`, once the answer has gone. A failed push marks the hand-off failed
   * with its reason, shown in `sleds handoffs`; a musher stopped before the push retries it at its next start.
   */
  async send(wall: HandoffSource, cwd: string | null, recipientArg: string | null, fallback: string | null): Promise<{ id: string; line: string; after: () => Promise<void>; settled: () => string }> {
    const self = me();
    if (!self) throw new Error('this seat has no handle — run `sleds keys init --handle <your roster handle>`');
    if (!cwd) throw new Error("the session's folder is not known");
    if (!wall.snapshotId) throw new Error(wall.wallId ? 'the wall has no snapshot to hand off' : 'the session could not be snapshotted');
    const roster = this.d.rosterFor(cwd);
    if (!roster) throw new Error('no roster in this repository — add .sleds/roster.yml with your teammates');
    const handle = (recipientArg ?? fallback ?? '').toLowerCase();
    if (!handle) {
      const others = othersThan(roster, self).map((t) => t.handle);
      throw new Error(others.length === 0 ? 'no teammate in the roster (.sleds/roster.yml) to hand it to' : `to whom? nobody in the roster owns the changed files — name one: ${others.map((h) => `/sled handoff ${h}`).join(' or ')}`);
    }
    const keys = await loadSeatKeys(this.d.secrets);
    if (!keys) throw new Error('this seat has no hand-off keys — run `sleds keys init` and commit the roster entry it prints');
    // The key sealed to is the one pinned for them (pinned now when first used; a changed one is refused).
    const recipient = this.d.trust.recipientForSealing(roster, seatPublicKeys(self, keys), handle);
    if (!recipient.ok) throw new Error(recipient.error.message);
    const id = newBundleId();
    // The commits the base needs that the remote lacks travel sealed with the rest (no branch is pushed).
    const snap = await readSnapshot(this.d.paths, wall.snapshotId);
    const top = snap.manifest.git !== null ? await repoTopLevel(cwd).catch(() => null) : null;
    const history = top !== null ? await historyFor(top, id, snap.manifest.git?.head ?? null, { scratchDir: this.d.paths.stateDir }) : { history: null, note: null };
    if (history.note !== null) this.d.log.warn(`hand-off ${id}: ${history.note}`);
    const content = await packSnapshotContent(this.d.paths, snap.id, { history: history.history, historyNote: history.note });
    const bundle = seal(content, { sender: { handle: self, signingKey: keys.ed25519.privateKey }, recipient: { handle, x25519: recipient.x25519 }, nowMs: this.d.clock.now(), id });
    const header = readHeader(bundle);
    const name = recipient.name ?? handle;
    await mkdir(join(this.d.paths.stateDir, 'handoffs', 'outbox'), { recursive: true, mode: 0o700 });
    await writeFileAtomic(this.outboxFile(id), bundle);
    this.d.handoffs.record({
      id,
      direction: 'sent',
      wallId: wall.wallId,
      sessionId: wall.sessionId,
      harness: wall.harness,
      peer: handle,
      createdAt: header.createdAt,
      expiresAt: header.expiresAt,
      transport: 'git',
      ref: null,
      branch: null,
      state: 'sending',
      note: JSON.stringify({ cwd } satisfies SendingNote),
    });
    const mate = teammateByHandle(roster, handle);
    const there = rosterHarness(mate?.harnesses ?? []);
    const handed = handedOffLine(name, id, there, wall.harness);
    const pickup = pickupCommand(id, there);
    const words = (delivery: string): string => [handed, delivery, recipient.note].filter((l) => l !== null).join(' ');
    return {
      id,
      line: words(deliveryPendingLine(name, pickup, await this.slackBlocker(handle, mate?.slack ?? null))),
      after: async () => {
        await this.push(id, cwd, bundle);
      },
      settled: () => words(this.deliveredWords(id, name, pickup)),
    };
  }

  /** Why Slack will not tell the teammate (no token, no slack id for them); null when it is set up for them. */
  private async slackBlocker(handle: string, slackId: string | null): Promise<string | null> {
    const token = await this.d.secrets.get(SLACK_BOT_TOKEN_SECRET).catch(() => null);
    if (!token?.trim()) return NO_SLACK_TOKEN;
    return slackId ? null : noSlackIdWords(handle);
  }

  /** What became of a hand-off once its push ran: where it went, what Slack said (from its row). */
  private deliveredWords(id: string, name: string, pickup: string): string {
    const row = this.d.handoffs.get(id);
    const note = JSON.parse(row?.note ?? '{}') as SentNote & { error?: string };
    if (!row || row.state === 'failed' || row.state === 'sending') return `Not sent: ${note.error ?? 'the push did not finish'} — sleds handoffs shows it.`;
    const slack = note.slack;
    const slackError = !slack || slack.channel ? null : slack.code === 'no_token' ? NO_SLACK_TOKEN : slack.code === 'no_channel' ? noSlackIdWords(row.peer) : (slack.error ?? 'Slack did not say why');
    return deliveredLine(note.transport ?? 'the remote', name, pickup, slackError);
  }

  /** Sends a sealed bundle from the outbox and announces it; the row says how it went. Never throws. */
  private async push(id: string, cwd: string, bundle: Buffer): Promise<boolean> {
    const row = this.d.handoffs.get(id);
    if (!row) return false;
    try {
      const transport = await this.transportFor(cwd);
      const sent = await transport.send({ id, bundle });
      const roster = this.d.rosterFor(cwd);
      const slackId = roster ? (teammateByHandle(roster, row.peer)?.slack ?? null) : null;
      const slack = await notifyHandoff(
        { sender: me() ?? 'someone', title: `session ${(row.sessionId ?? '').slice(0, 8)}`, handoffId: id, expiresAt: row.expiresAt, timeZone: this.d.timeZone, to: { handle: row.peer, slackId } },
        { slack: { secrets: this.d.secrets, log: this.d.log, baseUrl: this.d.notify?.slackApiUrl }, desktop: { binaries: this.d.notify?.binaries } },
      );
      const note: Pick<SentNote, 'slack'> = slack.slack.ok ? { slack: { channel: slack.slack.channel, ts: slack.slack.ts } } : { slack: { error: slack.slack.error, code: slack.slack.code } };
      this.d.handoffs.sent(id, sent.ref, null, JSON.stringify({ ...note, transport: transport.describe() }), this.d.clock.now());
      this.d.log.info(`hand-off ${id} of session ${row.sessionId} sent to ${row.peer} over ${transport.describe()}`);
      await unlink(this.outboxFile(id)).catch(() => undefined);
      return true;
    } catch (e) {
      this.d.handoffs.setState(id, 'failed', this.d.clock.now(), JSON.stringify({ error: (e as Error).message }));
      this.d.log.error(`hand-off ${id} to ${row.peer} failed: ${(e as Error).message}`);
      await unlink(this.outboxFile(id)).catch(() => undefined);
      return false;
    }
  }

  /**
   * At musher's start: a hand-off left in `sending` by a musher that stopped is sent again from the outbox (or
   * marked failed when its bundle is gone or expired), and the sender is told on the desktop when it failed; a
   * pickup left half-done is undone, so the next try starts clean.
   */
  async recover(): Promise<void> {
    for (const row of this.d.handoffs.inState('picking')) {
      await this.oneAtATime(row.id, async () => {
        // A pickup of it may have begun (and undone it itself) since the list was read.
        const now = this.d.handoffs.get(row.id);
        if (now?.state !== 'picking' || now.note !== row.note) return;
        try {
          await undoPickup(parseJournal(row.note), this.d.log);
          this.d.handoffs.dropPickup(row.id, this.d.clock.now());
          this.d.histories?.forget(row.id);
          this.d.log.warn(`hand-off ${row.id}: a pickup that did not finish was undone — pick it up again`);
        } catch (e) {
          this.d.log.error(`hand-off ${row.id}: a pickup that did not finish could not be undone: ${(e as Error).message}`);
        }
      });
    }
    for (const row of this.d.handoffs.inState('sending')) {
      const cwd = (JSON.parse(row.note ?? '{}') as SendingNote).cwd;
      const bundle = await readFile(this.outboxFile(row.id)).catch(() => null);
      const lost = bundle === null || !cwd ? 'its sealed bundle is gone' : row.expiresAt <= this.d.clock.now() ? 'it has expired since' : null;
      // push() marks a failed push itself, and empties the outbox either way.
      if (lost === null && (await this.push(row.id, cwd!, bundle!))) continue;
      if (lost !== null) {
        this.d.handoffs.setState(row.id, 'failed', this.d.clock.now(), JSON.stringify({ error: `musher stopped while sending it, and ${lost} — hand it off again` }));
        await unlink(this.outboxFile(row.id)).catch(() => undefined);
      }
      const why = (JSON.parse(this.d.handoffs.get(row.id)?.note ?? '{}') as { error?: string }).error ?? 'it could not be sent';
      this.d.log.error(`hand-off ${row.id} to ${row.peer} was not sent: ${why}`);
      await notifyDesktop(`Hand-off to ${row.peer} not sent`, `${row.id}: ${why}`, { binaries: this.d.notify?.binaries }).catch(() => undefined);
    }
  }

  /**
   * `/sled pickup <id>` or `sleds pickup <id>` in `cwd`, a checkout of the same repository — one rule for every
   * path. Verifies before it writes anything of the sender's: the bundle is read through a scratch place, opened
   * (signature, recipient, id, dates) and unpacked (every path and id in its shape); only then is the pickup
   * journalled and installed — base commit, worktree, transcript, brief — then recorded, then marked on the remote.
   * A second try by this seat after it completed installs nothing and says where the work is; a try after one that
   * died midway first undoes what that one left; anyone else's pickup before is a refusal.
   */
  async pickup(idArg: string, cwd: string): Promise<PickedUpSession> {
    const idOk = BundleIdSchema.safeParse(idArg);
    if (!idOk.success) throw new Error(`${JSON.stringify(idArg.slice(0, 40))} is not a hand-off id — copy the 12 characters from the hand-off message`);
    const id = assertHandoffId(idOk.data);
    // One pickup of a bundle at a time on this machine (two prompts typing it, a start's undo): the second waits.
    return this.oneAtATime(id, () => this.pickupNow(id, cwd));
  }

  private readonly busy = new Map<string, Promise<unknown>>();

  /** Runs `work` after whatever else runs for hand-off `id`. */
  private oneAtATime<T>(id: string, work: () => Promise<T>): Promise<T> {
    const before = this.busy.get(id) ?? Promise.resolve();
    const mine = before.catch(() => undefined).then(work);
    const settled = mine.catch(() => undefined);
    this.busy.set(id, settled);
    void settled.then(() => {
      if (this.busy.get(id) === settled) this.busy.delete(id);
    });
    return mine;
  }

  private async pickupNow(id: string, cwd: string): Promise<PickedUpSession> {
    const self = me();
    if (!self) throw new Error('this seat has no handle — run `sleds keys init --handle <your roster handle>`');
    const prior = this.d.handoffs.get(id);
    if (prior?.direction === 'sent') throw new Error(`hand-off ${id} was sent from this seat, to ${prior.peer} — it is picked up on their machine`);
    const keys = await loadSeatKeys(this.d.secrets);
    if (!keys) throw new Error('this seat has no hand-off keys — run `sleds keys init` and commit the roster entry it prints');
    const roster = this.d.rosterFor(cwd);
    if (!roster) throw new Error('no roster in this repository — pull the one your team committed (.sleds/roster.yml)');
    const transport = await this.transportFor(cwd);

    if (prior?.direction === 'received' && (prior.state === 'received' || prior.state === 'resumed')) {
      // Done before: the mark may be all that a crash left out (asked first, so a second try writes nothing).
      if ((await transport.isPickedUp(id)) === null) await transport.markPickedUp(id, self);
      return this.pickedUpFrom(prior, true);
    }
    if (prior?.direction === 'received' && prior.state === 'picking') {
      await undoPickup(parseJournal(prior.note), this.d.log);
      this.d.handoffs.dropPickup(id, this.d.clock.now());
      this.d.histories?.forget(id);
    }
    const picked = await transport.isPickedUp(id);
    if (picked && picked.by !== self) throw new Error(`hand-off ${id} was already picked up by ${picked.by} — one pickup per hand-off`);

    const bundle = await transport.fetch(id);
    // The sender's key must be the one pinned on this seat before it is trusted to verify anything; a refusal is
    // thrown as it is (its kind and the teammate it names reach the caller: the CLI asks to pin them).
    const verdict = this.d.trust.checkSender(roster, seatPublicKeys(self, keys), readHeader(bundle).sender, id);
    if (!verdict.ok) throw verdict.error;
    const opened = open(bundle, { roster, me: { handle: self, x25519PrivateKey: keys.x25519.privateKey }, nowMs: this.d.clock.now(), expectId: id });
    const content: SnapshotContent = unpackSnapshotContent(opened.content);
    const step = async (s: PickupStep): Promise<void> => {
      await this.d.onPickupStep?.(s);
    };
    await step('opened');
    const installed = await installPickup(
      {
        id,
        cwd,
        sender: opened.header.sender,
        content,
        harnessHome: this.harnessHome(content.manifest.harness),
        briefFile: join(this.d.paths.stateDir, 'handoffs', `${id}.md`),
        scratchDir: this.d.paths.stateDir,
      },
      {
        log: this.d.log,
        step,
        begin: (journal) =>
          this.d.handoffs.beginPickup({
            id,
            wallId: null,
            sessionId: content.manifest.sessionId,
            harness: content.manifest.harness,
            peer: opened.header.sender,
            createdAt: opened.header.createdAt,
            expiresAt: opened.header.expiresAt,
            transport: transport.describe(),
            ref: null,
            branch: journal.branch,
            note: JSON.stringify(journal),
          }, this.d.clock.now()),
        journal: (journal) => this.d.handoffs.journal(id, JSON.stringify(journal)),
        finish: (note) => this.d.handoffs.finishPickup(id, JSON.stringify(note), this.d.clock.now()),
        mark: () => transport.markPickedUp(id, self),
        history: (h) => this.d.histories?.installed({ ...h, seat: opened.header.sender, handoffId: id, at: this.d.clock.now() }),
        drop: () => {
          this.d.handoffs.dropPickup(id, this.d.clock.now());
          this.d.histories?.forget(id);
        },
      },
    );
    this.d.log.info(`hand-off ${id} from ${opened.header.sender} picked up into ${installed.dir}`);
    const m = content.manifest;
    return { id, sender: opened.header.sender, harness: m.harness, sessionId: m.sessionId, dir: installed.dir, branch: installed.branch, brief: content.brief, again: false };
  }

  private async pickedUpFrom(row: HandoffRow, again: boolean): Promise<PickedUpSession> {
    const note = JSON.parse(row.note ?? '{}') as ReceivedNote;
    const harness = storedHarness(row.harness);
    // A row naming a harness this sleds does not know is reported, never resumed as another harness's session.
    if (!harness.ok) throw new Error(`hand-off ${row.id}: ${harness.error}`);
    const brief = note.briefFile ? await readFile(note.briefFile, 'utf8').catch(() => '') : '';
    return {
      id: row.id,
      sender: row.peer,
      harness: harness.id,
      sessionId: row.sessionId ?? '',
      dir: note.dir ?? '',
      branch: row.branch ?? '',
      brief,
      again,
    };
  }

  /**
   * The sender's Slack hears of the pickup in the hand-off post's own thread (the sender holds its channel and ts;
   * the teammate may have no Slack token at all), and the sender's desktop shows it.
   */
  private async tellPickedUp(h: HandoffRow, by: string, at: number): Promise<void> {
    const post = (JSON.parse(h.note ?? '{}') as { slack?: { channel?: string; ts?: string } }).slack;
    const words = { by, at, handoffId: h.id, title: `session ${(h.sessionId ?? '').slice(0, 8)}`, timeZone: this.d.timeZone };
    if (post?.channel && post.ts) {
      const r = await notifyPickedUp({ ...words, channel: post.channel, threadTs: post.ts }, { slack: { secrets: this.d.secrets, log: this.d.log, baseUrl: this.d.notify?.slackApiUrl }, desktop: { binaries: this.d.notify?.binaries } });
      if (!r.slack.ok) this.d.log.warn(`hand-off ${h.id}: Slack did not take the pickup note: ${r.slack.error}`);
    } else {
      const words2 = pickedUpDesktopWords(words);
      await notifyDesktop(words2.title, words2.body, { binaries: this.d.notify?.binaries });
    }
  }

  /** The policy's shared folder when it names one, else the repository's own remote. */
  private async transportFor(cwd: string): Promise<HandoffTransport> {
    const folder = this.d.folderFor?.(cwd) ?? null;
    if (folder !== null) return new FolderTransport({ dir: folder, readExpiry, clock: this.d.clock });
    return openGitTransport({ repoDir: cwd, readExpiry, clock: this.d.clock });
  }

  /** `sleds handoffs prune`: removes the expired hand-offs from the remote of the repository `cwd` is in. */
  async prune(cwd: string): Promise<string[]> {
    const transport = await this.transportFor(cwd);
    const pruned = await transport.prune(this.d.clock.now());
    // A pickup under way is left to finish or be undone: the life cycle refuses to expire it (SPEC.md § handoff).
    for (const id of pruned) if (this.d.handoffs.get(id)) this.d.handoffs.setState(id, 'expired', this.d.clock.now());
    return pruned;
  }

  private lastRefresh = Number.NEGATIVE_INFINITY;

  /**
   * The sender's side: marks sent hand-offs that their teammate has picked up since. Each asks the remote
   * (`git ls-remote`), so a caller on a frequent path passes `maxAgeMs` to reuse a recent answer.
   */
  async refreshSent(cwdOf: (sessionId: string) => string | null, maxAgeMs = 0): Promise<void> {
    const now = this.d.clock.now();
    if (now - this.lastRefresh < maxAgeMs) return;
    this.lastRefresh = now;
    for (const h of this.d.handoffs.list(50)) {
      if (h.direction !== 'sent' || h.state !== 'sent' || !h.sessionId || h.expiresAt <= now) continue;
      const cwd = cwdOf(h.sessionId);
      if (!cwd) continue;
      try {
        const transport = await this.transportFor(cwd);
        const picked = await transport.isPickedUp(h.id);
        if (picked) {
          const at = picked.atMs ?? this.d.clock.now();
          this.d.handoffs.pickedUp(h.id, picked.by, at);
          await this.tellPickedUp(h, picked.by, at);
        }
      } catch (e) {
        this.d.log.warn(`hand-off ${h.id}: could not check its pickup: ${(e as Error).message}`);
      }
    }
  }
}
