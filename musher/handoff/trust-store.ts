import { type Stats, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { sameHandle } from '../../core/handoff/header.js';
import { TrustFileSchema, type PinRequest, type PinnedKeys } from '../../core/handoff/trust.js';
import type { SledsPaths } from '../../core/paths.js';
import type { Clock } from '../clock.js';
import { writePrivateFileSync } from '../fs-atomic.js';

/**
 * The teammates' public keys this seat trusts, pinned locally: a 0600 JSON file in the data dir, replaced
 * atomically (temp file born 0600, fsync, rename), so the CLI writes it without musher and musher reads it fresh on
 * every call (no restart to see a pin). It holds public keys and names only (the schema is strict). It is refused
 * when another user could have written it: a trust root anyone can edit is none.
 */
export const TRUST_FILE_NAME = 'trusted-keys.json';

export function trustFilePath(paths: Pick<SledsPaths, 'dataDir'>): string {
  return join(paths.dataDir, TRUST_FILE_NAME);
}

export class TrustStoreError extends Error {}

export interface PinOutcome {
  pinned: PinnedKeys;
  /** What was pinned for the handle before, when anything was. */
  previous: PinnedKeys | null;
}

export class TrustStore {
  constructor(
    readonly path: string,
    private readonly clock: Clock,
  ) {}

  /** Every pin, read from the file now; none when there is no file. Throws TrustStoreError on a bad or loose file. */
  load(): PinnedKeys[] {
    let st: Stats;
    try {
      st = statSync(this.path);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw e;
    }
    this.checkOwnership(st, this.path);
    this.checkOwnership(statSync(dirname(this.path)), dirname(this.path));
    let json: unknown;
    try {
      json = JSON.parse(readFileSync(this.path, 'utf8'));
    } catch {
      throw new TrustStoreError(`${this.path} is not valid JSON — remove it and pin your teammates again with 'sleds keys trust <handle>'`);
    }
    const file = TrustFileSchema.safeParse(json);
    if (!file.success) throw new TrustStoreError(`${this.path} is not a sleds pin file — remove it and pin your teammates again with 'sleds keys trust <handle>'`);
    return file.data.pins;
  }

  /** The pins, by handle. */
  list(): PinnedKeys[] {
    return [...this.load()].sort((a, b) => a.handle.localeCompare(b.handle));
  }

  get(handle: string): PinnedKeys | null {
    return this.load().find((p) => sameHandle(p.handle, handle)) ?? null;
  }

  /** Pins (or re-pins) a handle's keys, stamped now. */
  pin(request: PinRequest): PinOutcome {
    const pins = this.load();
    const handle = request.handle.toLowerCase();
    const previous = pins.find((p) => sameHandle(p.handle, handle)) ?? null;
    const pinned: PinnedKeys = { handle, name: request.name, x25519: request.x25519, ed25519: request.ed25519, pinnedAt: this.clock.now() };
    this.write([...pins.filter((p) => !sameHandle(p.handle, handle)), pinned]);
    return { pinned, previous };
  }

  /** Removes a handle's pin; what was removed, or null when it was not pinned. */
  unpin(handle: string): PinnedKeys | null {
    const pins = this.load();
    const previous = pins.find((p) => sameHandle(p.handle, handle)) ?? null;
    if (previous) this.write(pins.filter((p) => p !== previous));
    return previous;
  }

  private checkOwnership(st: Stats, path: string): void {
    const mode = Number(st.mode);
    const uid = process.getuid?.();
    if (uid !== undefined && Number(st.uid) !== uid) {
      throw new TrustStoreError(`${path} belongs to another user — pinned keys must be this user's alone: remove it and pin your teammates again`);
    }
    if ((mode & 0o022) !== 0) {
      throw new TrustStoreError(`${path} can be written by other users (mode ${(mode & 0o777).toString(8)}) — run 'chmod go-w ${path}', check the pins with 'sleds keys trusted', and try again`);
    }
  }

  private write(pins: PinnedKeys[]): void {
    // What we write must be what we would read back.
    const body = TrustFileSchema.parse({ v: 1, pins });
    writePrivateFileSync(this.path, `${JSON.stringify(body, null, 2)}\n`);
  }
}
