import { constants } from 'node:fs';
import { mkdir, open, readdir, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { Clock } from '../clock.js';
import { pathExists, writeFileAtomic } from '../fs-atomic.js';
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
 * The shared-folder transport, for teams without a common remote (a synced or mounted folder named in the policy).
 * Each hand-off is two files, both 0600: `<id>.sleds` (the sealed bundle, the work in progress inside it) and
 * `<id>.picked` (the pickup mark, created exclusively so a second pickup finds it there). Anyone who can write the
 * folder is a stranger: files are opened without following symlinks, must be regular files, and are refused over
 * their size cap before they are read.
 */

export interface FolderTransportOptions {
  dir: string;
  readExpiry: ReadExpiry;
  clock: Clock;
  /** The largest bundle read (default MAX_BUNDLE_BYTES). */
  maxBundleBytes?: number;
}

const MAX_PICKED_BYTES = 4096;

function code(e: unknown): string | undefined {
  return (e as NodeJS.ErrnoException).code;
}

/** Reads a regular file without following a symlink: at most `maxBytes` (`prefix`: only the first bytes of it). */
async function readConfined(path: string, maxBytes: number, prefix = false): Promise<{ bytes: Buffer } | { tooLarge: number } | { notFile: true }> {
  const fh = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  try {
    const st = await fh.stat();
    if (!st.isFile()) return { notFile: true };
    if (st.size > maxBytes) return { tooLarge: st.size };
    const want = prefix ? Math.min(st.size, BUNDLE_HEADER_PREFIX_BYTES) : st.size;
    const buf = Buffer.alloc(want);
    let at = 0;
    while (at < want) {
      const { bytesRead } = await fh.read(buf, at, want - at, at);
      if (bytesRead === 0) break;
      at += bytesRead;
    }
    return { bytes: buf.subarray(0, at) };
  } finally {
    await fh.close();
  }
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
  private pickedPath(id: string): string {
    return join(this.opts.dir, `${id}.picked`);
  }
  private get maxBundleBytes(): number {
    return this.opts.maxBundleBytes ?? MAX_BUNDLE_BYTES;
  }

  async send(b: { id: string; bundle: Buffer }): Promise<SentHandoff> {
    const id = assertHandoffId(b.id);
    try {
      await mkdir(this.opts.dir, { recursive: true, mode: 0o700 });
    } catch (e) {
      throw new Error(`cannot use the shared folder ${this.opts.dir} (${code(e) ?? (e as Error).message}) — check the policy's handoff.folder`);
    }
    if (await pathExists(this.bundlePath(id))) {
      // A retried send (musher stopped before it recorded the write) finds its own bundle there already.
      const there = await readConfined(this.bundlePath(id), this.maxBundleBytes).catch(() => null);
      if (there !== null && 'bytes' in there && there.bytes.equals(b.bundle)) return { ref: this.bundlePath(id) };
      throw new Error(`a hand-off ${id} is already in ${this.opts.dir} — send it under a new id`);
    }
    await writeFileAtomic(this.bundlePath(id), b.bundle);
    return { ref: this.bundlePath(id) };
  }

  async fetch(id: string): Promise<Buffer> {
    assertHandoffId(id);
    let got;
    try {
      got = await readConfined(this.bundlePath(id), this.maxBundleBytes);
    } catch (e) {
      if (code(e) === 'ENOENT') throw new Error(`no hand-off ${id} in ${this.describe()} — check the id; an expired one is pruned`);
      if (code(e) === 'ELOOP') throw new Error(`hand-off ${id} in ${this.describe()} is a symlink — it was not made by sleds; nothing was read`);
      throw new Error(`cannot read hand-off ${id} in ${this.describe()}: ${code(e) ?? (e as Error).message}`);
    }
    if ('notFile' in got) throw new Error(`hand-off ${id} in ${this.describe()} is not a file — it was not made by sleds; nothing was read`);
    if ('tooLarge' in got) throw new Error(`hand-off ${id} in ${this.describe()} is ${got.tooLarge} bytes, over the ${this.maxBundleBytes}-byte limit of a bundle — it was not made by sleds; nothing was read`);
    return got.bytes;
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
        const got = await readConfined(join(this.opts.dir, name), this.maxBundleBytes, true);
        if ('bytes' in got) expiresAt = this.opts.readExpiry(got.bytes);
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
      // The bundle first: once it is gone the hand-off is gone, whatever else a failure leaves. `.wip.bundle`: what
      // sleds before the sealed work in progress left beside it.
      for (const path of [this.bundlePath(id), join(this.opts.dir, `${id}.wip.bundle`), this.pickedPath(id)]) await unlink(path).catch(() => undefined);
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
      if (prior?.by === by) return;
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
    let got;
    try {
      got = await readConfined(this.pickedPath(id), MAX_PICKED_BYTES);
    } catch (e) {
      if (code(e) === 'ENOENT') return null;
      // A mark we cannot read (a symlink, unreadable) still means someone picked it up.
      return { by: 'someone', atMs: null };
    }
    return 'bytes' in got ? readPickedMark(got.bytes.toString('utf8')) : { by: 'someone', atMs: null };
  }
}
