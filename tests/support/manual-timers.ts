import type { Timers } from '../../musher/timers.js';

/** Timers a test fires by hand: every armed callback is kept with its delay until `fireAll()` runs it. */
export class ManualTimers implements Timers {
  readonly pending: Array<{ fn: () => void; ms: number }> = [];
  setTimeout(fn: () => void, ms: number): unknown {
    const t = { fn, ms };
    this.pending.push(t);
    return t;
  }
  clearTimeout(h: unknown): void {
    const i = this.pending.indexOf(h as { fn: () => void; ms: number });
    if (i >= 0) this.pending.splice(i, 1);
  }
  /** Runs what is armed now (not what those callbacks arm in turn). */
  fireAll(): void {
    for (const t of this.pending.splice(0)) t.fn();
  }
}
