import { readdirSync, statSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import type { Clock } from '../clock.js';
import type { Log } from '../log.js';
import { realTimers, type Timers } from '../timers.js';
import type { HookEventStore } from './hook-events.js';

/**
 * The raw events musher keeps are kept for config.yml's `retention.rawEventsDays` (default 30): older hook events
 * are removed at start and then once a day, on the injected clock and timers; so are spooled events that failed
 * (spool/failed/, which hold a hook's payload as received) and were never taken since.
 */

export const DAY_MS = 24 * 60 * 60_000;

export interface RetentionDeps {
  events: Pick<HookEventStore, 'pruneBefore'>;
  days: number;
  /** spool/failed/: its files older than the setting (by their mtime) are removed too. */
  failedSpoolDir?: string;
  clock: Clock;
  log: Log;
  timers?: Timers;
}

export class RawEventRetention {
  private readonly timers: Timers;
  private timer: unknown = null;
  private stopped = false;

  constructor(private readonly d: RetentionDeps) {
    this.timers = d.timers ?? realTimers;
  }

  /** Prunes now, then every day. */
  start(): void {
    this.stopped = false;
    this.round();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer !== null) this.timers.clearTimeout(this.timer);
    this.timer = null;
  }

  /** Removes the events older than the setting; how many went. Never throws (a failed round is one line). */
  prune(): number {
    const cutoff = this.d.clock.now() - this.d.days * DAY_MS;
    const failed = this.pruneFailedSpool(cutoff);
    if (failed > 0) this.d.log.info(`retention: removed ${failed} failed spooled event(s) older than ${this.d.days} days from ${this.d.failedSpoolDir}`);
    try {
      const n = this.d.events.pruneBefore(cutoff);
      if (n > 0) this.d.log.info(`retention: removed ${n} hook event(s) older than ${this.d.days} days (retention.rawEventsDays in config.yml)`);
      return n;
    } catch (e) {
      this.d.log.error(`retention: could not remove old hook events: ${(e as Error).message} — tried again in a day`);
      return 0;
    }
  }

  private pruneFailedSpool(cutoff: number): number {
    const dir = this.d.failedSpoolDir;
    if (!dir) return 0;
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      // No failed-spool folder: nothing to prune.
      return 0;
    }
    let n = 0;
    for (const name of names) {
      const file = join(dir, name);
      try {
        const st = statSync(file);
        if (st.isFile() && st.mtimeMs < cutoff) {
          unlinkSync(file);
          n++;
        }
      } catch {
        // gone, or not ours to remove: left
      }
    }
    return n;
  }

  private round(): void {
    if (this.stopped) return;
    this.prune();
    this.timer = this.timers.setTimeout(() => this.round(), DAY_MS);
  }
}
