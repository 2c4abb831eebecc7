import type { PricedCost, UsageRecord } from '../../core/usage.js';

/**
 * One usage row as usage_records takes it, positionally (USAGE_COLUMNS' order): dedup key, source, session, model, ts,
 * input, output, 5-minute cache writes, 1-hour cache writes, cache reads, web searches, service tier, inference geo,
 * cost (null: unpriced), why unpriced, seat.
 */
export type BulkRow = [string, string, string, string, number, number, number, number, number, number, number, string | null, string | null, number | null, string | null, string | null];

const KEY = 0;
const OUTPUT = 6;
const COST = 13;
const UNPRICED = 14;

/** Rows sorted at a time before yielding: about 50 ms of sorting on a slow machine. */
export const SORT_RUN_ROWS = 32_000;

/**
 * A cold backfill's usage, held in memory until the backlog is read (UsageStore.beginBulk): one compact row per reply,
 * its repeated blocks folded as the store's upsert folds them (the first block's fields; a later block's greater output
 * count with that block's cost). The strings that repeat (session, model, tier) are kept once.
 */
export class BulkRows {
  private readonly rows = new Map<string, BulkRow>();
  private readonly strings = new Map<string, string>();

  get size(): number {
    return this.rows.size;
  }

  /** One block of a reply, priced; `seat` names the other seat it belongs to (null: this seat's own). */
  add({ usage: u, cost, seat }: { usage: UsageRecord; cost: PricedCost; seat: string | null }): void {
    const earlier = this.rows.get(u.dedupKey);
    if (earlier !== undefined) {
      if (u.outputTokens > earlier[OUTPUT]) {
        earlier[OUTPUT] = u.outputTokens;
        earlier[COST] = cost.priced ? cost.costMicros : null;
        earlier[UNPRICED] = cost.priced ? null : cost.reason;
      }
      return;
    }
    this.rows.set(u.dedupKey, [
      u.dedupKey,
      this.once(u.source),
      this.once(u.sessionId),
      this.once(u.model),
      u.timestampMs,
      u.inputTokens,
      u.outputTokens,
      u.cacheWrite5mTokens,
      u.cacheWrite1hTokens,
      u.cacheReadTokens,
      u.webSearchRequests,
      u.serviceTier === null ? null : this.once(u.serviceTier),
      u.inferenceGeo === null ? null : this.once(u.inferenceGeo),
      cost.priced ? cost.costMicros : null,
      cost.priced ? null : this.once(cost.reason),
      seat === null ? null : this.once(seat),
    ]);
  }

  /**
   * Every row in key order (the order that appends to the key's index), sorted a run at a time with `yieldNow` between
   * runs so a long history's sort never holds the daemon for long; the runs are merged as they are consumed.
   */
  async sorted(yieldNow: () => Promise<void>): Promise<Iterable<BulkRow>> {
    const all = [...this.rows.values()];
    this.rows.clear();
    this.strings.clear();
    const runs: BulkRow[][] = [];
    for (let i = 0; i < all.length; i += SORT_RUN_ROWS) {
      runs.push(all.slice(i, i + SORT_RUN_ROWS).sort(byKey));
      await yieldNow();
    }
    return mergeRuns(runs);
  }

  private once(s: string): string {
    const kept = this.strings.get(s);
    if (kept !== undefined) return kept;
    this.strings.set(s, s);
    return s;
  }
}

function byKey(a: BulkRow, b: BulkRow): number {
  return a[KEY] < b[KEY] ? -1 : a[KEY] > b[KEY] ? 1 : 0;
}

/** Sorted runs (distinct keys) merged into one sorted sequence. */
export function* mergeRuns(runs: BulkRow[][]): Generator<BulkRow> {
  const at = runs.map(() => 0);
  for (;;) {
    let best = -1;
    for (let r = 0; r < runs.length; r++) {
      const row = runs[r]![at[r]!];
      if (row !== undefined && (best < 0 || row[KEY] < runs[best]![at[best]!]![KEY])) best = r;
    }
    if (best < 0) return;
    yield runs[best]![at[best]!++]!;
  }
}
