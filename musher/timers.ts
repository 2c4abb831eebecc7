/**
 * The timers musher's schedules run on (the scheduler, the usage poller, the GitHub and tracker rounds), injected so
 * tests fire them by hand instead of waiting. The real ones never keep the process alive on their own.
 */
export interface Timers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const realTimers: Timers = {
  setTimeout: (fn, ms) => {
    const t = setTimeout(fn, ms);
    t.unref?.();
    return t;
  },
  clearTimeout: (h) => clearTimeout(h as ReturnType<typeof setTimeout>),
};
