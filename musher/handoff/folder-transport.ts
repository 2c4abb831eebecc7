import { pathExists, writeFileAtomic } from '../fs-atomic.js';
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, open, readdir, readFile, rename, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import type { Clock } from '../clock.js';
import { firstLine, gitExec, gitOk } from './git-exec.js';
import { assertHandoffId, isExpired, type HandoffTransport, type ListedHandoff, type PickedUp, type ReadExpiry, type SentHandoff, type WipSource } from './transport.js';
import { buildWipCommit, localWipRef, repoTopLevel } from './wip-branch.js';

/**
 * The shared-folder transport, for teams without a common remote (a synced or mounted folder named in the policy).
 * Each hand-off is up to three files, all 0600: `<id>.sleds` (the bundle), `<id>.wip.bundle` (a `git bundle` of
 * the WIP commit with its whole history, since the teammate may have none of it) and `<id>.picked` (the pickup
 * mark, created exclusively so a second pickup finds it there).
 */

const PickedSchema = z.object({ by: z.string(), atMs: z.number().nullable().optional() });

export interface FolderTransportOptions {
  dir: string;
  /** The repository the WIP is built from (sender) or fetched into (teammate); null to carry bundles only. */
  repoDir: string | null;
  readExpiry: ReadExpiry;
  clock: Clock;
  /** Where the temporary index is made (the state dir); the system temp dir otherwise. */
  scratchDir?: string;
}

function code(e: unknown): string | undefined {
  return (e as NodeJS.ErrnoException).code;
}


export class FolderTransport implements HandoffTransport {
  constructor(private readonly opts: FolderTransportOptions) {}

  get dir(): string {
    return this.opts.dir;
  }

  describe(): string {
    return `shared folder ${this.opts.dir}`;
  }

  bundlePath(id: string): string {
    return join(this.opts.dir, `${id}.sleds`);
  }
  wipPath(id: string): string {
    return join(this.opts.dir, `${id}.wip.bundle`);
  }
  private pickedPath(id: string): string {
    return join(this.opts.dir, `${id}.picked`);
  }

  async send(b: { id: string; bundle: Buffer; wip: WipSource | null }): Promise<SentHandoff> {
    const id = assertHandoffId(b.id);
    try {
      await mkdir(this.opts.dir, { recursive: true, mode: 0o700 });
    } catch (e) {
      throw new Error(`cannot use the shared folder ${this.opts.dir} (${code(e) ?? (e as Error).message}) — check the policy's handoff.folder`);
    }
    if (await pathExists(this.bundlePath(id))) throw new Error(`a hand-off ${id} is already in ${this.opts.dir} — send it under a new id`);
    let branch: string | null = null;
    if (b.wip !== null) {
      if (this.opts.repoDir === null) throw new Error(`hand-off ${id} has work in progress but no repository to build it from`);
      await this.writeWip(id, b.wip, this.opts.repoDir);
      branch = this.wipPath(id);
    }
    // The bundle last: a hand-off is listed once its bundle is there, and its WIP is complete by then.
    await writeFileAtomic(this.bundlePath(id), b.bundle);
    return { ref: this.bundlePath(id), branch };
  }

  async fetch(id: string): Promise<Buffer> {
    assertHandoffId(id);
    let bundle: Buffer;
    try {
      bundle = await readFile(this.bundlePath(id));
    } catch (e) {
      if (code(e) === 'ENOENT') throw new Error(`no hand-off ${id} in ${this.describe()} — check the id; an expired one is pruned`);
      throw new Error(`cannot read hand-off ${id} in ${this.describe()}: ${code(e) ?? (e as Error).message}`);
    }
    return bundle;
  }

  async bringWip(id: string): Promise<void> {
    assertHandoffId(id);
    if (this.opts.repoDir !== null && (await pathExists(this.wipPath(id)))) {
      const top = await repoTopLevel(this.opts.repoDir);
      const r = await gitExec(['fetch', '-q', '--no-tags', '--no-write-fetch-head', this.wipPath(id), `+${localWipRef(id)}:${localWipRef(id)}`], { cwd: top });
      if (r.code !== 0) throw new Error(`the work in progress of hand-off ${id} in ${this.describe()} could not be read: ${firstLine(r.stderr)}`);
    }
  }

  async list(): Promise<ListedHandoff[]> {
    let names: string[];
    try {
      names = await readdir(this.opts.dir);
    } catch (e) {
      if (code(e) === 'ENOENT') return [];
      throw new Error(`cannot read ${this.describe()}: ${code(e) ?? (e as Error).message}`);
    }
    const out: ListedHandoff[] = [];
    for (const name of names.sort()) {
      const m = /^([0-9a-z]{4,64})\.sleds$/.exec(name);
      if (m === null) continue;
      let expiresAt: number | null = null;
      try {
        expiresAt = this.opts.readExpiry(await readFile(join(this.opts.dir, name)));
      } catch {
        // unreadable: listed without an expiry, never pruned on a guess
      }
      out.push({ id: m[1]!, expiresAt });
    }
    return out;
  }

  async prune(nowMs: number): Promise<string[]> {
    const expired = (await this.list()).filter((h) => isExpired(h.expiresAt, nowMs)).map((h) => h.id);
    for (const id of expired) {
      // The bundle first: once it is gone the hand-off is gone, whatever else a failure leaves.
      for (const path of [this.bundlePath(id), this.wipPath(id), this.pickedPath(id)]) await unlink(path).catch(() => undefined);
    }
    return expired;
  }

  async markPickedUp(id: string, by: string): Promise<void> {
    assertHandoffId(id);
    if (!(await pathExists(this.bundlePath(id)))) throw new Error(`no hand-off ${id} in ${this.describe()} — check the id; an expired one is pruned`);
    let fh;
    try {
      fh = await open(this.pickedPath(id), 'wx', 0o600);
    } catch (e) {
      if (code(e) !== 'EEXIST') throw new Error(`could not mark hand-off ${id} picked up in ${this.describe()}: ${code(e) ?? (e as Error).message}`);
      const prior = await this.isPickedUp(id);
      const at = prior?.atMs != null ? ` at ${new Date(prior.atMs).toISOString()}` : '';
      throw new Error(`hand-off ${id} was already picked up by ${prior?.by ?? 'someone'}${at} — one pickup per hand-off`);
    }
    try {
      await fh.writeFile(`${JSON.stringify({ id, by, atMs: this.opts.clock.now() })}\n`);
    } finally {
      await fh.close();
    }
  }

  async isPickedUp(id: string): Promise<PickedUp | null> {
    assertHandoffId(id);
    let text: string;
    try {
      text = await readFile(this.pickedPath(id), 'utf8');
    } catch (e) {
      if (code(e) === 'ENOENT') return null;
      throw new Error(`cannot read the pickup mark of ${id} in ${this.describe()}: ${code(e) ?? (e as Error).message}`);
    }
    try {
      const r = PickedSchema.safeParse(JSON.parse(text));
      if (r.success) return { by: r.data.by, atMs: r.data.atMs ?? null };
    } catch {
      // fall through: a mark being written, or not ours; it still means picked up
    }
    return { by: 'someone', atMs: null };
  }

  /** The WIP commit as a git bundle with its whole history, through a short-lived ref (bundles name refs). */
  private async writeWip(id: string, wip: WipSource, repoDir: string): Promise<void> {
    const top = await repoTopLevel(repoDir);
    const commit = await buildWipCommit(top, id, wip, this.opts.scratchDir);
    const temp = join(this.opts.dir, `.tmp-${process.pid}-${randomBytes(6).toString('hex')}.bundle`);
    await gitOk(['update-ref', localWipRef(id), commit], { cwd: top }, `could not name the work in progress of ${id}`);
    try {
      await gitOk(['bundle', 'create', temp, localWipRef(id)], { cwd: top }, `could not bundle the work in progress of ${id}`);
      await chmod(temp, 0o600);
      await rename(temp, this.wipPath(id));
    } catch (e) {
      await unlink(temp).catch(() => undefined);
      throw e;
    } finally {
      await gitExec(['update-ref', '-d', localWipRef(id)], { cwd: top });
    }
  }


}
