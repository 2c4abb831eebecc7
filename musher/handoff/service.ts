import { handedOffLine, type PickedUp } from '../../core/handoff/answer.js';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { userInfo } from 'node:os';
import { teammateByHandle, type RosterFile } from '../../core/roster.js';
import { isHandoffError } from '../../core/handoff/errors.js';
import type { SledsPaths } from '../../core/paths.js';
import type { Clock } from '../clock.js';
import type { Log } from '../log.js';
import type { SecretStore } from '../secrets/store.js';
import { readSnapshot } from '../snapshot/files.js';
import type { HandoffRow, HandoffStore } from '../store/handoffs.js';
import type { WallRow } from '../store/wall-book.js';
import { notifyDesktop, notifyHandoff, notifyPickedUp, type NotifySettings } from '../notify/index.js';
import { pickedUpDesktopWords } from '../../core/notify/messages.js';
import { packSnapshotContent, unpackSnapshotContent } from './bundle-content.js';
import { openGitTransport, checkoutWip } from './git-transport.js';
import { FolderTransport } from './folder-transport.js';
import type { HandoffTransport } from './transport.js';
import { loadSeatKeys, seatHandle } from './keys.js';
import { open, readHeader, seal } from './seal.js';
import { wipFromSnapshot } from './wip-branch.js';

/** What a hand-off carries: a session's snapshot, taken at its wall or (a hand-off asked for mid-work) just now. */
export type HandoffSource = Pick<WallRow, 'sessionId' | 'harness' | 'snapshotId'> & { wallId: string | null };

export interface HandoffDeps {
  paths: SledsPaths;
  clock: Clock;
  log: Log;
  secrets: SecretStore;
  handoffs: HandoffStore;
  timeZone: string;
  claudeConfigDir: string;
  codexHome: string;
  /** The team roster of the repository a folder is in (null when it has none, or it is broken). */
  rosterFor(cwd: string): RosterFile | null;
  /** The shared folder the policy of a folder's repository names for hand-offs (`handoff.folder`); null: its remote. */
  folderFor?(cwd: string): string | null;
  /** Slack's API URL and the desktop notifier, from config.yml (default: slack.com, the notifier on PATH). */
  notify?: NotifySettings;
}

/** A pickup done: what the answer needs (`dir` is the worktree holding the sender's work), and the brief. */
export interface PickedUpSession extends PickedUp {
  brief: string;
}

const readExpiry = (bundle: Buffer): number | null => {
  try {
    return readHeader(bundle).expiresAt;
  } catch {
    return null;
  }
};

function me(): string | null {
  let osUser: string | null = null;
  try {
    osUser = userInfo().username;
  } catch {
    // no passwd entry
  }
  return seatHandle(process.env, osUser);
}

/**
 * Hand-offs between seats: at a wall `/sled 5` seals the session's snapshot to a teammate and sends it over the
 * repository's remote; on their machine `/sled pickup <id>` verifies, decrypts and checks it out. Nothing is written
 * on the teammate's side before the bundle's signature, recipient and expiry have been checked.
 */
export class HandoffService {
  constructor(private readonly d: HandoffDeps) {}

  /** Whether this seat can send hand-offs at all (its keys exist). */
  async ready(): Promise<boolean> {
    try {
      return (await loadSeatKeys(this.d.secrets)) !== null;
    } catch {
      return false;
    }
  }

  /**
   * `/sled 5 [handle]`: sealed now (the hook's answer must come within its budget, and it names the id), pushed and
   * announced in `after`, once the answer has gone. A failed push marks the hand-off failed with its reason, shown in
   * `sleds handoffs` and at the next prompt.
   */
  async send(wall: HandoffSource, cwd: string | null, recipientArg: string | null, fallback: string | null): Promise<{ id: string; line: string; after: () => Promise<void> }> {
    const self = me();
    if (!self) throw new Error('this seat has no handle — set SLEDS_SEAT, or run `sleds keys init`');
    if (!cwd) throw new Error("the session's folder is not known");
    if (!wall.snapshotId) throw new Error(wall.wallId ? 'the wall has no snapshot to hand off' : 'the session could not be snapshotted');
    const roster = this.d.rosterFor(cwd);
    if (!roster) throw new Error('no roster in this repository — add .sleds/roster.yml with your teammates');
    const handle = (recipientArg ?? fallback ?? '').toLowerCase();
    if (!handle) throw new Error('to whom? /sled 5 <handle> (the roster names nobody who owns these files)');
    const teammate = teammateByHandle(roster, handle);
    if (!teammate) throw new Error(`'${handle}' is not in .sleds/roster.yml`);
    if (!teammate.keys) throw new Error(`${handle} has no keys in the roster — they run \`sleds keys init\` and commit the entry it prints`);
    const keys = await loadSeatKeys(this.d.secrets);
    if (!keys) throw new Error('this seat has no hand-off keys — run `sleds keys init` and commit the roster entry it prints');
    const content = await packSnapshotContent(this.d.paths, wall.snapshotId);
    const bundle = seal(content, { sender: { handle: self, signingKey: keys.ed25519.privateKey }, recipient: { handle, x25519: teammate.keys.x25519 }, nowMs: this.d.clock.now() });
    const header = readHeader(bundle);
    const name = teammate.name ?? handle;
    this.d.handoffs.record({
      id: header.id,
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
      note: null,
    });
    const snapshotId = wall.snapshotId;
    const after = async (): Promise<void> => {
      try {
        const transport = await this.transportFor(cwd);
        const wip = await wipFromSnapshot(await readSnapshot(this.d.paths, snapshotId));
        const sent = await transport.send({ id: header.id, bundle, wip });
        const slack = await notifyHandoff(
          { sender: self, title: `session ${wall.sessionId.slice(0, 8)}`, handoffId: header.id, expiresAt: header.expiresAt, timeZone: this.d.timeZone, to: { handle, slackId: teammate.slack ?? null } },
          { slack: { secrets: this.d.secrets, log: this.d.log, baseUrl: this.d.notify?.slackApiUrl }, desktop: { binaries: this.d.notify?.binaries } },
        );
        const note = slack.slack.ok ? { slack: { channel: slack.slack.channel, ts: slack.slack.ts } } : { slack: { error: slack.slack.error } };
        this.d.handoffs.sent(header.id, sent.ref, sent.branch, JSON.stringify({ ...note, transport: transport.describe() }));
        this.d.log.info(`hand-off ${header.id} of session ${wall.sessionId} sent to ${handle} over ${transport.describe()}`);
      } catch (e) {
        this.d.handoffs.setState(header.id, 'failed', JSON.stringify({ error: (e as Error).message }));
        this.d.log.error(`hand-off ${header.id} to ${handle} failed: ${(e as Error).message}`);
      }
    };
    return {
      id: header.id,
      line: handedOffLine(name, header.id, teammate.harnesses, wall.harness),
      after,
    };
  }

  /**
   * `/sled pickup <id>` (or `sleds pickup <id>`) in `cwd`, a checkout of the same repository. Verifies before it
   * writes anything of the sender's: the bundle is read through a scratch repository and opened; only then is the
   * pickup marked, the work fetched and checked out into a new worktree, and the transcript installed where the
   * harness resumes it.
   */
  async pickup(id: string, cwd: string): Promise<PickedUpSession> {
    const self = me();
    if (!self) throw new Error('this seat has no handle — set SLEDS_SEAT, or run `sleds keys init`');
    const keys = await loadSeatKeys(this.d.secrets);
    if (!keys) throw new Error('this seat has no hand-off keys — run `sleds keys init` and commit the roster entry it prints');
    const roster = this.d.rosterFor(cwd);
    if (!roster) throw new Error('no roster in this repository — pull the one your team committed (.sleds/roster.yml)');
    const transport = await this.transportFor(cwd);
    const picked = await transport.isPickedUp(id);
    if (picked) throw new Error(`hand-off ${id} was already picked up by ${picked.by} — one pickup per hand-off`);
    const bundle = await transport.fetch(id);
    let opened;
    try {
      opened = open(bundle, { roster, me: { handle: self, x25519PrivateKey: keys.x25519.privateKey }, nowMs: this.d.clock.now() });
    } catch (e) {
      if (isHandoffError(e)) throw new Error(e.message);
      throw e;
    }
    const content = unpackSnapshotContent(opened.content);
    await transport.markPickedUp(id, self);
    await transport.bringWip(id);
    const wip = await checkoutWip(cwd, id, 'worktree');
    const m = content.manifest;
    // The transcript where the harness finds it by id (Claude Code searches every projects/*/; Codex its sessions/).
    const base = m.harness === 'codex' ? this.d.codexHome : this.d.claudeConfigDir;
    for (const t of m.transcript) {
      const target = join(base, t.path);
      const bytes = content.blobs.get(t.hash);
      if (!bytes || existsSync(target)) continue;
      mkdirSync(dirname(target), { recursive: true });
      writeFileSync(target, bytes, { mode: 0o600, flag: 'wx' });
    }
    // The brief, for a harness other than the sender's: started with it as the first prompt.
    const briefFile = join(this.d.paths.stateDir, 'handoffs', `${id}.md`);
    mkdirSync(dirname(briefFile), { recursive: true, mode: 0o700 });
    writeFileSync(briefFile, content.brief, { mode: 0o600 });
    this.d.handoffs.record({
      id,
      direction: 'received',
      wallId: null,
      sessionId: m.sessionId,
      harness: m.harness,
      peer: opened.header.sender,
      createdAt: opened.header.createdAt,
      expiresAt: opened.header.expiresAt,
      transport: transport.describe(),
      ref: null,
      branch: wip.branch,
      state: 'received',
      note: JSON.stringify({ dir: wip.dir, briefFile }),
    });
    this.d.log.info(`hand-off ${id} from ${opened.header.sender} picked up into ${wip.dir}`);
    return { id, sender: opened.header.sender, harness: m.harness, sessionId: m.sessionId, dir: wip.dir, branch: wip.branch, brief: content.brief };
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
  private async transportFor(cwd: string): Promise<HandoffTransport & Required<Pick<HandoffTransport, 'markPickedUp' | 'isPickedUp'>>> {
    const folder = this.d.folderFor?.(cwd) ?? null;
    if (folder !== null) return new FolderTransport({ dir: folder, repoDir: cwd, readExpiry, clock: this.d.clock, scratchDir: this.d.paths.stateDir });
    return openGitTransport({ repoDir: cwd, readExpiry, clock: this.d.clock, scratchDir: this.d.paths.stateDir });
  }

  /** `sleds handoffs prune`: removes the expired hand-offs from the remote of the repository `cwd` is in. */
  async prune(cwd: string): Promise<string[]> {
    const transport = await this.transportFor(cwd);
    const pruned = await transport.prune(this.d.clock.now());
    for (const id of pruned) if (this.d.handoffs.get(id)) this.d.handoffs.setState(id, 'expired');
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
