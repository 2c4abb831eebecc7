import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { z } from 'zod';
import type { Clock } from '../clock.js';
import { redactRemote } from '../snapshot/git-state.js';
import { firstLine, gitExec, gitOk } from './git-exec.js';
import { assertHandoffId, isExpired, type HandoffTransport, type ListedHandoff, type PickedUp, type ReadExpiry, type SentHandoff, type WipSource } from './transport.js';
import { buildWipCommit, commitOneFile, localWipRef, repoTopLevel, wipBranchName } from './wip-branch.js';

export { checkoutWip } from './wip-branch.js';

/**
 * The default transport: the repository's own remote (origin, else the first). The bundle travels as a ref
 * `refs/sleds/handoffs/<id>` to a parentless commit holding one file `bundle.sleds` (a commit, not a bare blob or
 * tag, because every host accepts commits under any ref); the WIP as the branch `sleds/handoff/<id>`, whose push
 * carries the sender's HEAD along when the remote lacks it; a pickup as `refs/sleds/picked/<id>`, pushed without
 * force so the second pickup of a bundle is rejected by the remote itself. Nothing here touches the user's index,
 * worktree or HEAD. On the receiving side the bundle and the pickup mark are read through a scratch repository (nothing
 * written before the bundle is verified); the verified WIP is then kept under refs/sleds/ (out of the branch list).
 */

export const BUNDLE_FILE = 'bundle.sleds';
const PICKED_FILE = 'picked-up.json';

export function handoffRef(id: string): string {
  return `refs/sleds/handoffs/${id}`;
}
export function pickedRef(id: string): string {
  return `refs/sleds/picked/${id}`;
}

export const NO_REMOTE = 'this repository has no remote — set one, or a shared folder in the policy: handoff: {folder: …}';

const PickedSchema = z.object({ by: z.string(), atMs: z.number().nullable().optional() });

export interface GitTransportOptions {
  /** A folder inside the session's repository (the sender's, or the teammate's clone on pickup). */
  repoDir: string;
  readExpiry: ReadExpiry;
  clock: Clock;
  /** Where the temporary index is made (the state dir); the system temp dir otherwise. */
  scratchDir?: string;
  /** A remote name to use instead of origin / the first. */
  remote?: string;
}

const MISSING_REF = /couldn't find remote ref|no such remote ref|not our ref/i;

/** Resolves the repository and its remote; throws NO_REMOTE when it has none. */
export async function openGitTransport(opts: GitTransportOptions): Promise<GitTransport> {
  const top = await repoTopLevel(opts.repoDir);
  const names = (await gitOk(['remote'], { cwd: top }, `could not list the remotes of ${top}`)).toString('utf8').split('\n').filter((n) => n.length > 0);
  const name = opts.remote ?? (names.includes('origin') ? 'origin' : names[0]);
  if (name === undefined) throw new Error(NO_REMOTE);
  if (!names.includes(name)) throw new Error(`this repository has no remote '${name}' — its remotes: ${names.join(', ') || 'none'}`);
  const url = (await gitOk(['remote', 'get-url', name], { cwd: top }, `could not read remote ${name}`)).toString('utf8').trim();
  return new GitTransport(top, name, redactRemote(url), url, opts);
}

export class GitTransport implements HandoffTransport {
  constructor(
    readonly top: string,
    readonly remote: string,
    /** Without credentials: safe for messages. */
    readonly remoteUrl: string,
    /** As configured (credentials included): used to fetch, never shown. */
    private readonly rawUrl: string,
    private readonly opts: GitTransportOptions,
  ) {}

  describe(): string {
    return `git remote ${this.remote} (${this.remoteUrl})`;
  }

  async send(b: { id: string; bundle: Buffer; wip: WipSource | null }): Promise<SentHandoff> {
    const id = assertHandoffId(b.id);
    const bundleCommit = await commitOneFile(this.top, BUNDLE_FILE, b.bundle, `sleds hand-off ${id}`);
    const specs = [`${bundleCommit}:${handoffRef(id)}`];
    let branch: string | null = null;
    if (b.wip !== null) {
      const wipCommit = await buildWipCommit(this.top, id, b.wip, this.opts.scratchDir);
      branch = wipBranchName(id);
      specs.push(`${wipCommit}:refs/heads/${branch}`);
    }
    await this.push(specs, `hand-off ${id}`);
    return { ref: handoffRef(id), branch };
  }

  async fetch(id: string): Promise<Buffer> {
    assertHandoffId(id);
    const bundle = await this.readUnverified(handoffRef(id), BUNDLE_FILE, `hand-off ${id}`);
    if (bundle === null) throw new Error(`no hand-off ${id} on ${this.describe()} — check the id; an expired one is pruned`);
    return bundle;
  }

  async bringWip(id: string): Promise<void> {
    assertHandoffId(id);
    // A hand-off sent from outside a repository has no WIP: checkoutWip says so.
    await this.fetchRef(`refs/heads/${wipBranchName(id)}`, localWipRef(id));
  }

  async list(): Promise<ListedHandoff[]> {
    const remote = await this.lsRemote();
    const ids = [...remote.keys()].map((ref) => /^refs\/sleds\/handoffs\/([^/]+)$/.exec(ref)?.[1]).filter((x): x is string => x !== undefined);
    if (ids.length === 0) return [];
    await this.runFetch([`+refs/sleds/handoffs/*:refs/sleds/handoffs/*`]);
    const out: ListedHandoff[] = [];
    for (const id of ids.sort()) {
      let expiresAt: number | null = null;
      try {
        expiresAt = this.opts.readExpiry(await this.readFile(handoffRef(id), BUNDLE_FILE, `hand-off ${id}`));
      } catch {
        // unreadable bundle: listed without an expiry, never pruned on a guess
      }
      out.push({ id, expiresAt });
    }
    return out;
  }

  async prune(nowMs: number): Promise<string[]> {
    const expired = (await this.list()).filter((h) => isExpired(h.expiresAt, nowMs)).map((h) => h.id);
    if (expired.length === 0) return [];
    const remote = await this.lsRemote();
    const deletes: string[] = [];
    for (const id of expired) {
      for (const ref of [handoffRef(id), `refs/heads/${wipBranchName(id)}`, pickedRef(id)]) if (remote.has(ref)) deletes.push(`:${ref}`);
    }
    await this.push(deletes, `pruning ${expired.length} expired hand-off${expired.length === 1 ? '' : 's'}`);
    for (const id of expired) {
      for (const ref of [handoffRef(id), localWipRef(id), pickedRef(id)]) await gitExec(['update-ref', '-d', ref], { cwd: this.top });
    }
    return expired;
  }

  async markPickedUp(id: string, by: string): Promise<void> {
    assertHandoffId(id);
    const body = Buffer.from(`${JSON.stringify({ id, by, atMs: this.opts.clock.now() })}\n`, 'utf8');
    const commit = await commitOneFile(this.top, PICKED_FILE, body, `sleds hand-off ${id} picked up by ${by}`);
    const r = await this.pushRaw([`${commit}:${pickedRef(id)}`]);
    if (r.ok) return;
    const prior = await this.isPickedUp(id);
    if (prior !== null) throw new Error(`hand-off ${id} was already picked up by ${prior.by}${prior.atMs !== null ? ` at ${new Date(prior.atMs).toISOString()}` : ''} — one pickup per hand-off`);
    throw new Error(`could not mark hand-off ${id} picked up on ${this.describe()}: ${r.why}`);
  }

  async isPickedUp(id: string): Promise<PickedUp | null> {
    assertHandoffId(id);
    const bytes = await this.readUnverified(pickedRef(id), PICKED_FILE, `the pickup mark of ${id}`);
    if (bytes === null) return null;
    let parsed: z.infer<typeof PickedSchema> | null = null;
    try {
      const r = PickedSchema.safeParse(JSON.parse(bytes.toString('utf8')));
      parsed = r.success ? r.data : null;
    } catch {
      parsed = null;
    }
    // A mark that does not parse still means someone picked it up.
    return parsed !== null ? { by: parsed.by, atMs: parsed.atMs ?? null } : { by: 'someone', atMs: null };
  }

  /**
   * One file of a remote ref, read through a scratch bare repository that is removed afterwards, so nothing of a
   * bundle not yet verified lands in the user's repository (not even unreferenced objects). Null: no such ref.
   */
  private async readUnverified(ref: string, file: string, what: string): Promise<Buffer | null> {
    // The system's temp folder, not sleds' state: it exists on a machine that has never run sleds before.
    const scratch = await mkdtemp(join(tmpdir(), 'sleds-fetch-'));
    try {
      await gitOk(['init', '-q', '--bare', scratch], { cwd: scratch }, 'could not make a scratch repository');
      const r = await gitExec(['fetch', '-q', '--no-tags', '--no-write-fetch-head', this.fetchUrl, `+${ref}:${ref}`], { cwd: scratch });
      if (r.code !== 0) {
        if (MISSING_REF.test(r.stderr)) return null;
        throw new Error(`could not fetch from ${this.describe()}: ${firstLine(r.stderr)}`);
      }
      const blob = await gitExec(['cat-file', 'blob', `${ref}:${file}`], { cwd: scratch });
      if (blob.code !== 0) throw new Error(`${what} on ${this.describe()} holds no ${file} — it was not made by sleds`);
      return blob.stdout;
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  }

  /** The remote's URL as git fetches it from a scratch repository: a relative local path is made absolute. */
  private get fetchUrl(): string {
    const url = this.rawUrl;
    return /^[a-z][a-z0-9+.-]*:\/\//i.test(url) || /^[^/]+@[^/]+:/.test(url) || isAbsolute(url) ? url : resolve(this.top, url);
  }

  /** The remote's sleds refs: ref → sha. */
  private async lsRemote(): Promise<Map<string, string>> {
    const r = await gitExec(['ls-remote', this.remote, 'refs/sleds/*', 'refs/heads/sleds/handoff/*'], { cwd: this.top });
    if (r.code !== 0) throw new Error(`could not reach ${this.describe()}: ${firstLine(r.stderr)}`);
    const out = new Map<string, string>();
    for (const line of r.stdout.toString('utf8').split('\n')) {
      const [sha, ref] = line.split('\t');
      if (sha !== undefined && ref !== undefined && ref.length > 0) out.set(ref, sha);
    }
    return out;
  }

  private runFetch(specs: string[]) {
    return gitExec(['fetch', '-q', '--no-tags', '--no-write-fetch-head', this.remote, ...specs], { cwd: this.top });
  }

  /** Fetches one remote ref into a local one; false when the remote has no such ref. */
  private async fetchRef(remoteRef: string, localRef: string): Promise<boolean> {
    const r = await this.runFetch([`+${remoteRef}:${localRef}`]);
    if (r.code === 0) return true;
    if (MISSING_REF.test(r.stderr)) return false;
    throw new Error(`could not fetch from ${this.describe()}: ${firstLine(r.stderr)}`);
  }

  private async readFile(ref: string, file: string, what: string): Promise<Buffer> {
    const r = await gitExec(['cat-file', 'blob', `${ref}:${file}`], { cwd: this.top });
    if (r.code !== 0) throw new Error(`${what} on ${this.describe()} holds no ${file} — it was not made by sleds`);
    return r.stdout;
  }

  private async pushRaw(specs: string[]): Promise<{ ok: true } | { ok: false; why: string }> {
    const r = await gitExec(['push', '--porcelain', '--no-verify', this.remote, ...specs], { cwd: this.top });
    if (r.code === 0) return { ok: true };
    // --porcelain puts each refused ref on stdout: "!\t<src>:<dst>\t[rejected] (fetch first)".
    const refused = r.stdout
      .toString('utf8')
      .split('\n')
      .find((l) => l.startsWith('!'));
    const why = refused !== undefined ? (refused.split('\t').slice(2).join(' ').trim() || 'rejected') : firstLine(r.stderr);
    return { ok: false, why };
  }

  private async push(specs: string[], what: string): Promise<void> {
    const r = await this.pushRaw(specs);
    if (!r.ok) throw new Error(`push of ${what} to ${this.describe()} was rejected: ${r.why} — check that you may push there, or use a shared folder (handoff: {folder: …})`);
  }
}
