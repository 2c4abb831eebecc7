import type { Log } from '../log.js';
import type { Timers } from '../timers.js';

/**
 * A slow poll: one round at a time (a round asked for while one runs waits for it, then runs), the next one
 * `interval()` after the last ended. Timers are injected so tests drive the schedule without waiting.
 */

/** With nothing to poll (no configuration yet), look again this often: the policy may have changed. */
const IDLE_RECHECK_MS = 60_000;

export class Rounds<T> {
  private chain: Promise<unknown> = Promise.resolve();
  private timer: unknown = null;
  private stopped = true;

  constructor(
    private readonly name: string,
    private readonly round: () => Promise<T>,
    /** The wait between rounds; null when there is nothing to poll. */
    private readonly interval: () => number | null,
    private readonly timers: Timers,
    private readonly log: Log,
  ) {}

  /** Starts the schedule: the first round after `firstInMs`. */
  start(firstInMs = 0): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.arm(firstInMs);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== null) this.timers.clearTimeout(this.timer);
    this.timer = null;
    await this.chain.catch(() => undefined);
  }

  /** One round now (after the one in flight, if any). */
  runNow(): Promise<T> {
    const next = this.chain.catch(() => undefined).then(() => this.round());
    this.chain = next;
    return next;
  }

  private arm(ms: number): void {
    if (this.stopped) return;
    if (this.timer !== null) this.timers.clearTimeout(this.timer);
    this.timer = this.timers.setTimeout(() => {
      this.timer = null;
      if (this.safeInterval() === null) return this.arm(IDLE_RECHECK_MS);
      this.runNow()
        .catch((e: Error) => this.log.error(`${this.name}: ${e.message}`))
        .finally(() => this.arm(this.safeInterval() ?? IDLE_RECHECK_MS));
    }, ms);
  }

  /** A timer callback must never throw (it would take musher down): a broken configuration is logged and waited out. */
  private safeInterval(): number | null {
    try {
      return this.interval();
    } catch (e) {
      this.log.error(`${this.name}: ${(e as Error).message}`);
      return null;
    }
  }
}
