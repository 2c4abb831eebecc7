import { readdirSync, readFileSync, unlinkSync, watch, type FSWatcher } from 'node:fs';
import { z } from 'zod';
import type { Log } from '../log.js';

/**
 * Drains the hook spool: events the hooks wrote while musher was away (or before they could reach it).
 * Each file is handed to the same path a live hook takes, then removed. Event ids make a re-delivered event a
 * no-op, so draining twice, or draining an event that also arrived live, never counts it twice.
 */
const Envelope = z.object({
  eventId: z.string().min(1),
  event: z.string().min(1),
  harness: z.string().default('claude-code'),
  receivedAt: z.number(),
  raw: z.string(),
});
export type SpooledEvent = z.infer<typeof Envelope>;

export class SpoolDrain {
  private watcher: FSWatcher | null = null;
  private draining = false;
  private again = false;

  constructor(
    private readonly dir: string,
    private readonly deliver: (event: SpooledEvent) => void,
    private readonly log: Log,
  ) {}

  /** Drains now, then again whenever a hook adds a file. */
  start(): number {
    const n = this.drain();
    try {
      this.watcher = watch(this.dir, () => this.drain());
      this.watcher.on('error', () => undefined);
    } catch (e) {
      this.log.warn(`cannot watch the spool ${this.dir}: ${(e as Error).message}`);
    }
    return n;
  }

  stop(): void {
    this.watcher?.close();
    this.watcher = null;
  }

  drain(): number {
    if (this.draining) {
      this.again = true;
      return 0;
    }
    this.draining = true;
    let delivered = 0;
    try {
      do {
        this.again = false;
        let names: string[];
        try {
          names = readdirSync(this.dir).filter((n) => !n.startsWith('.')).sort();
        } catch {
          return delivered;
        }
        for (const name of names) {
          const file = `${this.dir}/${name}`;
          try {
            const event = this.read(name, file);
            if (event) {
              this.deliver(event);
              delivered++;
            }
          } catch (e) {
            this.log.error(`spool ${name}: ${(e as Error).message} — dropped`);
          }
          try {
            unlinkSync(file);
          } catch {
            // already drained by an earlier pass
          }
        }
      } while (this.again);
    } finally {
      this.draining = false;
    }
    return delivered;
  }

  private read(name: string, file: string): SpooledEvent | null {
    const text = readFileSync(file, 'utf8');
    if (name.endsWith('.json')) {
      const parsed = Envelope.safeParse(JSON.parse(text));
      if (!parsed.success) throw new Error('not a spool envelope');
      return parsed.data;
    }
    // Written by the shell fallback (plugin/scripts/spool-event.sh): "<ms>-<id>.<Event>.raw", stdin verbatim.
    const m = /^(\d+)-([A-Za-z0-9_-]+)\.([A-Za-z]+)\.raw$/.exec(name);
    if (!m) return null;
    return { eventId: `spool-${m[2]}`, event: m[3]!, harness: 'claude-code', receivedAt: Number(m[1]), raw: text };
  }
}
