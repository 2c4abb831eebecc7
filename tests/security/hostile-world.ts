/**
 * A world for hostile hand-offs: everything — sam's repository and seat, the shared remote, dana's clone, her
 * Claude and Codex homes, her sleds state — lives under one temp folder the test watches, so "nothing was written
 * outside its place" is a comparison of that folder's whole tree before and after. Bundles are built here from any
 * manifest a sender could make up, then sealed and signed with sam's real roster key (pinned on dana's seat), so each
 * refusal comes from the content, not from a signature.
 */
import { claudeProjectSlug } from '../../harnesses/claude-code/project-slug.js';
import { pickupWorktreeDir } from '../../musher/handoff/work-in-progress.js';
import { createHash } from 'node:crypto';
import { lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { RosterFile } from '../../core/roster.js';
import type { SnapshotManifest } from '../../core/snapshot.js';
import { encodeSnapshotContent } from '../../musher/handoff/bundle-content.js';
import { openGitTransport } from '../../musher/handoff/git-transport.js';
import { generateSeatKeys, saveSeatKeys, type SeatKeys } from '../../musher/handoff/keys.js';
import { seal } from '../../musher/handoff/seal.js';
import { HandoffService, type HandoffDeps } from '../../musher/handoff/service.js';
import { historyFor } from '../../musher/handoff/work-in-progress.js';
import type { Log } from '../../musher/log.js';
import { readSnapshot } from '../../musher/snapshot/files.js';
import { FileSecretStore } from '../../musher/secrets/store.js';
import { HandoffStore } from '../../musher/store/handoffs.js';
import { makeWorld, NOW, SESSION, type World } from '../integration/handoff-transport-world.js';
import { pinnedTrust } from '../support/trust-pins.js';

export { NOW, SESSION };
export const DAY = 86_400_000;
const quiet: Log = { info: () => undefined, warn: () => undefined, error: () => undefined };

export const sha256 = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

/** A transcript line of the session, as Claude Code writes it. */
export const TRANSCRIPT = Buffer.from(`${JSON.stringify({ type: 'user', sessionId: SESSION, message: { role: 'user', content: 'remember PELICAN' } })}\n`);
export const TRANSCRIPT_PATH = `projects/-home-sam-shop/${SESSION}.jsonl`;

/** Where dana's pickup of `id` from her checkout `b` installs the transcript: its worktree's own project folder. */
export function installedTranscriptPath(b: string, id: string): string {
  return `projects/${claudeProjectSlug(pickupWorktreeDir(realpathSync(b), id))}/${SESSION}.jsonl`;
}

export interface HostileWorld {
  w: World;
  keys: { sam: SeatKeys; dana: SeatKeys };
  danaHome: string;
  claudeDir: string;
  codexHome: string;
  handoffs: HandoffStore;
  /** Dana's hand-off service at `nowMs` (default a day after sam sealed). */
  dana(opts?: { nowMs?: number; onPickupStep?: HandoffDeps['onPickupStep'] }): HandoffService;
  /** Sam's real manifest (his work in progress) with a transcript, and its blobs: what an honest bundle holds. */
  honest(): Promise<{ manifest: SnapshotManifest; blobs: Map<string, Buffer>; history: Buffer | null }>;
  /** Seals a content of sam's making to dana and pushes it under `ref` (its id unless told otherwise). */
  send(id: string, content: { manifest: unknown; blobs: Map<string, Buffer>; history?: Buffer | null }, opts?: { nowMs?: number; ref?: string; signer?: SeatKeys }): Promise<Buffer>;
  /** The roster dana's working tree holds from now on (a branch can change it): sam's entry with other keys. */
  rosterSays(samKeys: SeatKeys): void;
  /** What tests/security/fixtures/pickup-child.mjs needs to pick `id` up as dana in a process of its own. */
  childConfig(id: string, killAt: string | null): Record<string, unknown>;
  /** Every path under the watched folder but the sender's side, with its kind and content (a symlink's target). */
  tree(skip?: (path: string) => boolean): string;
}

export async function hostileWorld(): Promise<HostileWorld> {
  const w = await makeWorld();
  const keys = { sam: generateSeatKeys(), dana: generateSeatKeys() };
  const entry = (handle: string, k: SeatKeys) => ({ handle, keys: { x25519: k.x25519.publicKey, ed25519: k.ed25519.publicKey } });
  let roster = RosterFile.parse({ teammates: [entry('sam', keys.sam), entry('dana', keys.dana)] });
  const danaHome = join(w.root, 'dana-home');
  const claudeDir = join(danaHome, '.claude');
  const codexHome = join(danaHome, '.codex');
  mkdirSync(join(claudeDir, 'projects'), { recursive: true });
  mkdirSync(join(codexHome, 'sessions'), { recursive: true });
  const secrets = new FileSecretStore(join(w.root, 'dana-config'));
  await saveSeatKeys(secrets, keys.dana);
  mkdirSync(join(w.root, 'dana-data'));
  const trust = pinnedTrust(join(w.root, 'dana-data'), { sam: keys.sam });
  const handoffs = new HandoffStore(w.db);
  process.env.SLEDS_SEAT = 'dana';

  const danaPaths = { ...w.paths, stateDir: join(w.root, 'dana-state') };
  const childConfig: HostileWorld['childConfig'] = (id, killAt) => ({
    id,
    killAt,
    cwd: w.b,
    nowMs: NOW + DAY,
    dbFile: w.paths.dbFile,
    paths: danaPaths,
    secretsDir: join(w.root, 'dana-config'),
    trustFile: join(w.root, 'dana-data', 'trusted-keys.json'),
    claudeDir,
    codexHome,
    roster,
  });
  const dana: HostileWorld['dana'] = (opts = {}) =>
    new HandoffService({
      paths: danaPaths,
      clock: { now: () => opts.nowMs ?? NOW + DAY },
      log: quiet,
      secrets,
      handoffs,
      timeZone: 'UTC',
      claudeConfigDir: claudeDir,
      codexHome,
      rosterFor: () => roster,
      trust,
      ...(opts.onPickupStep ? { onPickupStep: opts.onPickupStep } : {}),
    });

  const honest: HostileWorld['honest'] = async () => {
    const snap = await readSnapshot(w.paths, w.snapshotId);
    const blobs = new Map<string, Buffer>();
    const m = structuredClone(snap.manifest);
    for (const u of m.git?.untracked ?? []) blobs.set(u.hash, await snap.readBlob(u.hash));
    if (m.git?.patch) blobs.set(m.git.patch.hash, await snap.readBlob(m.git.patch.hash));
    m.transcript = [{ role: 'session', sessionId: SESSION, path: TRANSCRIPT_PATH, sourcePath: `/home/sam/.claude/${TRANSCRIPT_PATH}`, hash: sha256(TRANSCRIPT), bytes: TRANSCRIPT.length }];
    blobs.set(sha256(TRANSCRIPT), TRANSCRIPT);
    return { manifest: m, blobs, history: (await historyFor(w.a, 'history', w.aHead)).history };
  };

  const send: HostileWorld['send'] = async (id, content, opts = {}) => {
    const bytes = encodeSnapshotContent({ snapshotId: 'hostile2k2m9', manifest: content.manifest as SnapshotManifest, blobs: content.blobs, history: content.history ?? null, historyNote: null });
    const bundle = seal(bytes, { sender: { handle: 'sam', signingKey: (opts.signer ?? keys.sam).ed25519.privateKey }, recipient: { handle: 'dana', x25519: keys.dana.x25519.publicKey }, nowMs: opts.nowMs ?? NOW, id });
    const t = await openGitTransport({ repoDir: w.a, readExpiry: () => null, clock: { now: () => NOW } });
    await t.send({ id: opts.ref ?? id, bundle });
    return bundle;
  };

  const senderSide = new Set([join(w.root, 'shop'), w.shared, join(w.root, 'sleds')]);
  const tree = (skip: (path: string) => boolean = () => false): string => {
    const lines: string[] = [];
    const walk = (dir: string): void => {
      for (const name of readdirSync(dir).sort()) {
        const path = join(dir, name);
        if (senderSide.has(path) || skip(path)) continue;
        const st = lstatSync(path);
        // Content, not times: git rewrites its own files (config, packed-refs) with the same bytes on the way.
        const what = st.isSymbolicLink() ? `link→${readlinkSync(path)}` : st.isDirectory() ? 'dir' : `file ${st.size} ${st.size <= 1 << 20 ? sha256(readFileSync(path)) : st.mtimeMs}`;
        lines.push(`${path.slice(w.root.length)} ${what}`);
        if (st.isDirectory()) walk(path);
      }
    };
    walk(w.root);
    return lines.join('\n');
  };

  const rosterSays: HostileWorld['rosterSays'] = (samKeys) => {
    roster = RosterFile.parse({ teammates: [entry('sam', samKeys), entry('dana', keys.dana)] });
  };
  return { rosterSays, w, keys, danaHome, claudeDir, codexHome, handoffs, dana, honest, send, tree, childConfig };
}
