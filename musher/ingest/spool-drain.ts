import { mkdirSync, readdirSync, readFileSync, renameSync, unlinkSync, watch, type FSWatcher } from 'node:fs';
import { z } from 'zod';
import { DEFAULT_HARNESS_ID } from '../../harnesses/hook-defaults.js';
import type { Log } from '../log.js';

/**
 * Drains the hook spool: events the hooks wrote while musher was away (or before they could reach it).
 * Each file is handed to the same path a live hook takes, and removed once that path has taken it. Event ids make a
 * re-delivered event a no-op, so draining twice, or draining an event that also arrived live, never counts it twice.
 * A file that cannot be read or whose delivery fails is never lost and never takes musher down: it is moved to
 * `failed/` with one line in the log, and tried once more at musher's next start.
 */
const Envelope = z.object({
  eventId: z.string().min(1),
  event: z.string().min(1),
  // Envelopes from before hooks named their harness came from the default harness's hooks.
  harness: z.string().default(DEFAULT_HARNESS_ID),
  receivedAt: z.number(),
  raw: z.string(),
});
export type SpooledEvent = z.infer<typeof Envelope>;

export const FAILED_DIR = 'failed';

export class SpoolDrain {
  private watcher: FSWatcher | null = null;
  private draining: Promise<number> | null = null;
  private again = false;
  private stopped = false;

  constructor(
    private readonly dir: string,
    private readonly deliver: (event: SpooledEvent) => unknown,
    private readonly log: Log,
  ) {}

  /** The events that failed before go back in line; drains now, then again whenever a hook adds a file. */
  async start(): Promise<number> {
    this.stopped = false;
    this.requeueFailed();
    const n = await this.drain();
    try {
      this.watcher = watch(this.dir, () => void this.drain());
      this.watcher.on('error', () => undefined);
    } catch (e) {
      this.log.warn(`cannot watch the spool ${this.dir}: ${(e as Error).message}`);
    }
    return n;
  }

  stop(): void {
    this.stopped = true;
    this.watcher?.close();
    this.watcher = null;
  }

  /** Delivers every spooled file, in name (time) order; resolves to how many were delivered. Never rejects. */
  drain(): Promise<number> {
    if (this.draining) {
      this.again = true;
      return this.draining;
    }
    this.draining = this.drainAll().finally(() => (this.draining = null));
    return this.draining;
  }

  private async drainAll(): Promise<number> {
    let delivered = 0;
    do {
      this.again = false;
      for (const name of this.spooledFiles()) {
        if (this.stopped) return delivered;
        const file = `${this.dir}/${name}`;
        try {
          const event = this.read(name, file);
          if (!event) throw new Error('not a spool file name');
          await this.deliver(event);
          delivered++;
        } catch (e) {
          this.keepFailed(name, file, (e as Error).message);
          continue;
        }
        try {
          unlinkSync(file);
        } catch {
          // already drained by an earlier pass
        }
      }
    } while (this.again && !this.stopped);
    return delivered;
  }

  private spooledFiles(): string[] {
    try {
      return readdirSync(this.dir, { withFileTypes: true })
        .filter((d) => d.isFile() && !d.name.startsWith('.'))
        .map((d) => d.name)
        .sort();
    } catch {
      // No spool folder: nothing was spooled.
      return [];
    }
  }

  private keepFailed(name: string, file: string, why: string): void {
    const failedDir = `${this.dir}/${FAILED_DIR}`;
    try {
      mkdirSync(failedDir, { recursive: true, mode: 0o700 });
      renameSync(file, `${failedDir}/${name}`);
      this.log.error(`spool ${name}: ${why.split('\n')[0]} — kept in ${failedDir}/${name}; musher tries it again at its next start`);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      // Gone: an earlier pass took it. Otherwise it stays where it is, for the next drain.
      if (code !== 'ENOENT') this.log.error(`spool ${name}: ${why.split('\n')[0]} — left in the spool (could not move it to ${FAILED_DIR}/: ${code ?? (e as Error).message})`);
    }
  }

  /** Files that failed before are tried once more (a full disk, a musher bug fixed since). */
  private requeueFailed(): void {
    const failedDir = `${this.dir}/${FAILED_DIR}`;
    let names: string[];
    try {
      names = readdirSync(failedDir, { withFileTypes: true }).filter((d) => d.isFile()).map((d) => d.name);
    } catch {
      // No failed folder: nothing failed before.
      return;
    }
    for (const name of names) {
      try {
        renameSync(`${failedDir}/${name}`, `${this.dir}/${name}`);
      } catch {
        // stays in failed/
      }
    }
  }

  private read(name: string, file: string): SpooledEvent | null {
    const text = readFileSync(file, 'utf8');
    if (name.endsWith('.json')) {
      const parsed = Envelope.safeParse(JSON.parse(text));
      if (!parsed.success) throw new Error('not a spool envelope');
      return parsed.data;
    }
    // Written by the shell fallback (plugin/scripts/spool-event.sh, the default harness's plugin): "<ms>-<id>.<Event>.raw", stdin verbatim.
    const m = /^(\d+)-([A-Za-z0-9_-]+)\.([A-Za-z]+)\.raw$/.exec(name);
    if (!m) return null;
    return { eventId: `spool-${m[2]}`, event: m[3]!, harness: DEFAULT_HARNESS_ID, receivedAt: Number(m[1]), raw: text };
  }
}
