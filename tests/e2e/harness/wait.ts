/**
 * Polling with a deadline: the only kind of waiting the e2e tests do.
 */
export interface WaitOptions {
  /** Give up after this long (default 10 s). */
  timeoutMs?: number;
  /** Time between checks (default 100 ms). */
  intervalMs?: number;
  /** Included in the timeout error message. */
  description?: string;
  /** Extra detail for the timeout error (e.g. the last screen), computed when it fires. */
  onTimeout?: () => string | Promise<string>;
}

/**
 * Calls `check` until it returns a truthy value (which is returned), or throws
 * once `timeoutMs` has passed. Errors thrown by `check` count as "not yet"; the
 * last one is reported on timeout.
 */
export async function waitFor<T>(
  check: () => T | undefined | null | false | '' | 0 | Promise<T | undefined | null | false | '' | 0>,
  opts: WaitOptions = {},
): Promise<T> {
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const intervalMs = opts.intervalMs ?? 100;
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value) return value;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() >= deadline) {
      let detail = '';
      if (opts.onTimeout) {
        try {
          detail = await opts.onTimeout();
        } catch (err) {
          detail = `(onTimeout failed: ${String(err)})`;
        }
      }
      const what = opts.description ?? 'condition';
      const last = lastError === undefined ? '' : `\nlast error: ${lastError instanceof Error ? lastError.message : String(lastError)}`;
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last}${detail ? `\n${detail}` : ''}`);
    }
    await new Promise((resolve) => setTimeout(resolve, Math.min(intervalMs, Math.max(0, deadline - Date.now()))));
  }
}
