import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import type { Clock } from '../clock.js';
import { redactRemote } from '../snapshot/git-state.js';
import { firstLine, gitExec, gitOk } from './git-exec.js';
import { commitOneFile, repoTopLevel } from './git-plumbing.js';
import {
  assertHandoffId,
  BUNDLE_HEADER_PREFIX_BYTES,
  isExpired,
  MAX_BUNDLE_BYTES,
  readPickedMark,
  type HandoffTransport,
  type ListedHandoff,
  type PickedUp,
  type ReadExpiry,
  type SentHandoff,
} from './transport.js';

/**
 * The default transport: the repository's own remote (origin, else the first). The sealed bundle travels as a ref
 * `refs/sleds/handoffs/<id>` to a parentless commit holding one file `bundle.sleds` (a commit, not a bare blob or
 * tag, because every host accepts commits under any ref), and a pickup as `refs/sleds/picked/<id>`, pushed without
 * force so the second pickup of a bundle is rejected by the remote itself. Nothing else of a hand-off travels: the
 * work in progress is inside the seal. Nothing here touches the user's index, worktree or HEAD, and nothing read
 * from the remote lands in the user's repository: bundles and marks are read through a scratch bare repository that
 * is removed afterwards, each refused over its size cap before it is read.
 */

export const BUNDLE_FILE = 'bundle.sleds';
const PICKED_FILE = 'picked-up.json';
/** A pickup mark is a line of JSON. */
const MAX_PICKED_BYTES = 4096;

export function handoffRef(id: string): string {
  return `refs/sleds/handoffs/${id}`;
}
export function pickedRef(id: string): string {
  return `refs/sleds/picked/${id}`;
}
/** Where sleds before the sealed work in progress pushed it in the clear; prune removes what is left of them. */
function legacyWipBranch(id: string): string {
  return `refs/heads/sleds/handoff/${id}`;
}

export const NO_REMOTE = 'this repository has no remote — set one, or a shared folder in the policy: handoff: {folder: …}';

export interface GitTransportOptions {
  /** A folder inside the session's repository (the sender's, or the teammate's clone on pickup). */
  repoDir: string;
  readExpiry: ReadExpiry;
  clock: Clock;
  /** A remote name to use instead of origin / the first. */
  remote?: string;
  /** The largest bundle read (default MAX_BUNDLE_BYTES). */
  maxBundleBytes?: number;
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

/** A bare repository in the system's temp folder for reading what the remote holds; removed by `done`. */
interface Scratch {
  dir: string;
  /** Fetches remote refs into the scratch repository; false when the remote has none of them. */
  fetch(specs: string[]): Promise<boolean>;
  /** A file of a fetched ref: its bytes (at most `maxBytes`: bigger is null with its size), or null when absent. */
  read(ref: string, file: string, maxBytes: number, prefixOnly?: boolean): Promise<{ bytes: Buffer; size: number } | { tooLarge: number } | null>;
  done(): Promise<void>;
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

  private get maxBundleBytes(): number {
    return this.opts.maxBundleBytes ?? MAX_BUNDLE_BYTES;
  }

  async send(b: { id: string; bundle: Buffer }): Promise<SentHandoff> {
    const id = assertHandoffId(b.id);
    const bundleCommit = await commitOneFile(this.top, BUNDLE_FILE, b.bundle, `sleds hand-off ${id}`);
    const r = await this.pushRaw([`${bundleCommit}:${handoffRef(id)}`]);
    if (!r.ok) {
      // A retried send (musher stopped before it recorded the push) finds its own bundle there already.
      const there = await this.lsRemote();
      if (!there.has(handoffRef(id))) throw new Error(`push of hand-off ${id} to ${this.describe()} was rejected: ${r.why} — check that you may push there, or use a shared folder (handoff: {folder: …})`);
    }
    return { ref: handoffRef(id) };
  }

  async fetch(id: string): Promise<Buffer> {
    assertHandoffId(id);
    const scratch = await this.scratch();
    try {
      if (!(await scratch.fetch([`+${handoffRef(id)}:${handoffRef(id)}`]))) throw new Error(`no hand-off ${id} on ${this.describe()} — check the id; an expired one is pruned`);
      const got = await scratch.read(handoffRef(id), BUNDLE_FILE, this.maxBundleBytes);
      if (got === null) throw new Error(`hand-off ${id} on ${this.describe()} holds no ${BUNDLE_FILE} — it was not made by sleds`);
      if ('tooLarge' in got) throw new Error(`hand-off ${id} on ${this.describe()} is ${got.tooLarge} bytes, over the ${this.maxBundleBytes}-byte limit of a bundle — it was not made by sleds; nothing was read`);
      return got.bytes;
    } finally {
      await scratch.done();
    }
  }

  async list(): Promise<ListedHandoff[]> {
    const remote = await this.lsRemote();
    const ids = [...remote.keys()].map((ref) => /^refs\/sleds\/handoffs\/([0-9a-z]{4,64})$/.exec(ref)?.[1]).filter((x): x is string => x !== undefined);
    if (ids.length === 0) return [];
    const scratch = await this.scratch();
    try {
      await scratch.fetch(['+refs/sleds/handoffs/*:refs/sleds/handoffs/*']);
      const out: ListedHandoff[] = [];
      for (const id of ids.sort()) {
        let expiresAt: number | null = null;
        try {
          const got = await scratch.read(handoffRef(id), BUNDLE_FILE, this.maxBundleBytes, true);
          if (got !== null && 'bytes' in got) expiresAt = this.opts.readExpiry(got.bytes);
        } catch {
          // unreadable bundle: listed without an expiry, never pruned on a guess
        }
        out.push({ id, expiresAt });
      }
      return out;
    } finally {
      await scratch.done();
    }
  }

  async prune(nowMs: number): Promise<string[]> {
    const expired = (await this.list()).filter((h) => isExpired(h.expiresAt, nowMs)).map((h) => h.id);
    if (expired.length === 0) return [];
    const remote = await this.lsRemote();
    const deletes: string[] = [];
    for (const id of expired) {
      for (const ref of [handoffRef(id), legacyWipBranch(id), pickedRef(id)]) if (remote.has(ref)) deletes.push(`:${ref}`);
    }
    await this.push(deletes, `pruning ${expired.length} expired hand-off${expired.length === 1 ? '' : 's'}`);
    // What sleds before the scratch reads kept locally of them.
    for (const id of expired) {
      for (const ref of [handoffRef(id), `refs/sleds/wip/${id}`, pickedRef(id)]) await gitExec(['update-ref', '-d', ref], { cwd: this.top });
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
    if (prior !== null) {
      if (prior.by === by) return;
      throw new Error(`hand-off ${id} was already picked up by ${prior.by}${prior.atMs !== null ? ` at ${new Date(prior.atMs).toISOString()}` : ''} — one pickup per hand-off`);
    }
    throw new Error(`could not mark hand-off ${id} picked up on ${this.describe()}: ${r.why}`);
  }

  async isPickedUp(id: string): Promise<PickedUp | null> {
    assertHandoffId(id);
    const scratch = await this.scratch();
    try {
      if (!(await scratch.fetch([`+${pickedRef(id)}:${pickedRef(id)}`]))) return null;
      const got = await scratch.read(pickedRef(id), PICKED_FILE, MAX_PICKED_BYTES, true);
      // A mark that cannot be read still means someone picked it up.
      return got !== null && 'bytes' in got ? readPickedMark(got.bytes.toString('utf8')) : { by: 'someone', atMs: null };
    } finally {
      await scratch.done();
    }
  }

  /** A scratch bare repository (the system's temp folder: it exists on a machine that never ran sleds). */
  private async scratch(): Promise<Scratch> {
    const dir = await mkdtemp(join(tmpdir(), 'sleds-fetch-'));
    await gitOk(['init', '-q', '--bare', dir], { cwd: dir }, 'could not make a scratch repository');
    const describe = this.describe();
    const url = this.fetchUrl;
    return {
      dir,
      fetch: async (specs) => {
        const r = await gitExec(['fetch', '-q', '--no-tags', '--no-write-fetch-head', url, ...specs], { cwd: dir });
        if (r.code === 0) return true;
        if (MISSING_REF.test(r.stderr)) return false;
        throw new Error(`could not fetch from ${describe}: ${firstLine(r.stderr)}`);
      },
      read: async (ref, file, maxBytes, prefixOnly = false) => {
        const spec = `${ref}:${file}`;
        const size = await gitExec(['cat-file', '-s', spec], { cwd: dir });
        if (size.code !== 0) return null;
        const n = Number(size.stdout.toString('utf8').trim());
        if (!Number.isSafeInteger(n) || n > maxBytes) return { tooLarge: n };
        const blob = await gitExec(['cat-file', 'blob', spec], { cwd: dir, ...(prefixOnly ? { maxStdoutBytes: BUNDLE_HEADER_PREFIX_BYTES } : {}) });
        if (blob.code !== 0) return null;
        return { bytes: blob.stdout, size: n };
      },
      done: () => rm(dir, { recursive: true, force: true }),
    };
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
