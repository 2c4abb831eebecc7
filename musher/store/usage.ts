import type { Statement } from 'better-sqlite3';
import type { Db } from './db.js';
import type { PricedCost, UsageRecord } from '../../core/usage.js';
import type { UsageRow } from '../../core/report/report.js';
import { RowsByHash } from './rows-by-hash.js';
import { CREATE_DEDUP_INDEX, DEDUP_INDEX, QUARTER_HOUR_TRIGGER_NAMES, QUARTER_HOUR_TRIGGERS, SUM_QUARTER_HOURS } from './usage-schema.js';

export interface SpendByModel {
  model: string;
  costMicros: number;
  unpricedRecords: number;
  records: number;
}

/** One priced record on its way into the store; `seat` names the other seat it belongs to (null: this seat's own). */
export interface UsageEntry {
  usage: UsageRecord;
  cost: PricedCost;
  seat: string | null;
}

/**
 * Claude Code writes one record per content block, each with the reply's usage; a later block may carry the final
 * output count. A batch's repeats of one reply become one entry, as the store's upsert would leave them: the first
 * block's fields, with a later block's greater output count and that block's cost.
 */
export function mergeRepeatedReplies(entries: Iterable<UsageEntry>): UsageEntry[] {
  const byKey = new Map<string, UsageEntry>();
  for (const e of entries) {
    const earlier = byKey.get(e.usage.dedupKey);
    if (earlier === undefined) byKey.set(e.usage.dedupKey, e);
    else if (e.usage.outputTokens > earlier.usage.outputTokens) {
      byKey.set(e.usage.dedupKey, { usage: { ...earlier.usage, outputTokens: e.usage.outputTokens }, cost: e.cost, seat: earlier.seat });
    }
  }
  return [...byKey.values()];
}

/** Staged rows moved into usage_records per transaction: a few hundred milliseconds at most on a slow machine. */
export const MERGE_CHUNK_ROWS = 8_000;

const USAGE_COLUMNS = `dedup_key, source, session_id, model, ts, input_tokens, output_tokens,
  cache_write_5m, cache_write_1h, cache_read, web_searches, service_tier, inference_geo, cost_micros, unpriced_reason, seat`;
/** Bound by position (one `?` per column): a named object spread from each record took a 1 GB backfill from 7.9 to 10.0 s. */
const USAGE_VALUES = USAGE_COLUMNS.split(',').map(() => '?').join(', ');
/** A later block that counts more output brings that count and its cost; every other field stays the first block's. */
const KEEP_GREATER_OUTPUT = `ON CONFLICT(dedup_key) DO UPDATE SET
  output_tokens = excluded.output_tokens, cost_micros = excluded.cost_micros
  WHERE excluded.output_tokens > usage_records.output_tokens`;

/**
 * Rows a cold backfill writes between two commits: a commit per file (the follower's chunk) made a 1 GB backfill 8 s of
 * SQLite, when each commit rewrote the random key index's pages. This bounds what a crash re-reads and how long
 * another writer waits.
 */
export const BULK_COMMIT_ROWS = 60_000;
/** SQLite's page cache while a cold backfill loads (negative: KiB), and so its sort when the key index is built. */
const BULK_CACHE_KIB = -4096;

/**
 * One session's own spend (the statusline's "this session", status's sessions): read from usage_session_cost alone,
 * which holds every column it asks for (migration 35), however many replies the session has.
 */
export const SESSION_SPEND_SQL = `SELECT COALESCE(SUM(cost_micros), 0) AS cost, SUM(cost_micros IS NULL) AS unpriced, COUNT(*) AS n,
    GROUP_CONCAT(DISTINCT model) AS models
  FROM usage_records WHERE session_id = ? AND seat IS NULL`;

/** How a source's large backlog is being written: in bulk (a cold store), staged (a store with records), or not. */
type BacklogMode = 'bulk' | 'staged' | null;

/**
 * The store's backlog writing as a JSONL source drives it (musher/ingest/jsonl-source.ts): a cold store loads in bulk,
 * one that already holds records stages; `progress` runs between the source's chunks, outside their transactions.
 */
export function backlogStaging(usage: UsageStore): { begin(): void; end(): void; merge(): Promise<void>; progress(): void } {
  let mode: BacklogMode = null;
  return {
    begin: () => {
      if (mode !== null) return;
      if (usage.beginBulk()) mode = 'bulk';
      else {
        usage.beginStaging();
        mode = 'staged';
      }
    },
    end: () => {
      if (mode === 'bulk') usage.endBulk();
      else if (mode === 'staged') usage.endStaging();
      mode = null;
    },
    merge: () => (mode === 'bulk' ? usage.indexBulk() : usage.mergeStaged()),
    progress: () => {
      if (mode === 'bulk') usage.bulkCheckpoint();
    },
  };
}

export interface SessionSpend {
  sessionId: string;
  costMicros: number;
  unpricedRecords: number;
  records: number;
  models: string[];
}

/**
 * Priced usage records. The dedup key makes every insert idempotent: re-reading a file never counts twice. A record
 * with a `seat` is another seat's (a picked-up history: the sender's): kept for the conversation's own facts (its
 * last call's context), left out of this seat's spend, burn rate and calibration (the quarter hours skip it too).
 *
 * A large backfill stages its records instead (beginStaging): appended to usage_staged in the order read, committed with
 * the files' offsets, and moved into usage_records by mergeStaged in key order, a chunk per transaction. Inserting
 * random keys a few hundred per commit rewrites most of the key index's pages at every commit; a sorted chunk of
 * thousands writes each page once. Staged rows count nowhere until merged (musher reports itself backfilling).
 */
export class UsageStore {
  /** The upsert on the dedup key; made when first needed, since it needs the key's index (a cold backfill drops it). */
  private upsert: Statement | null = null;
  private readonly append;
  private readonly rowAt;
  private readonly raiseOutput;
  private readonly stage;
  private readonly stagedSpan;
  private readonly mergeUpTo;
  private readonly unstageUpTo;
  /** How many backfills are staging now (the Claude and Codex sources each may). */
  private stagers = 0;
  /** How many backfills are loading in bulk now (they share one open transaction); rows since its last commit. */
  private bulkers = 0;
  private bulkRowsSinceCommit = 0;
  /** While a cold backfill loads without the dedup index: the rows it wrote, by a hash of their key. */
  private bulkKeys: RowsByHash | null = null;
  private cacheBeforeBulk = 0;
  private readonly sessionStmt;
  private readonly rangeStmt;
  private readonly totalsStmt;
  private readonly seriesStmt;
  private readonly sessionSeriesStmt;
  private readonly lastCallStmt;
  constructor(
    private readonly db: Db,
    private readonly keyHash: (key: string) => number = dedupKeyHash,
  ) {
    try {
      this.restoreDerived();
    } catch (e) {
      // Another process's cold backfill holds the store (musher's, seen from the engine): that backfill restores them.
      if ((e as { code?: string }).code !== 'SQLITE_BUSY') throw e;
    }
    this.append = db.prepare(`INSERT INTO usage_records (${USAGE_COLUMNS}) VALUES (${USAGE_VALUES})`);
    this.rowAt = db.prepare(`SELECT dedup_key AS key, output_tokens AS output FROM usage_records WHERE rowid = ?`);
    this.raiseOutput = db.prepare(`UPDATE usage_records SET output_tokens = ?, cost_micros = ? WHERE rowid = ?`);
    this.stage = db.prepare(`INSERT INTO usage_staged (${USAGE_COLUMNS}) VALUES (${USAGE_VALUES})`);
    this.stagedSpan = db.prepare(`SELECT MIN(rowid) AS first, MAX(rowid) AS last FROM usage_staged`);
    // Key order within the chunk (first read first among equal keys), so the first block's fields are the ones kept.
    // (The WHERE keeps SQLite from reading the upsert's ON as a join's.)
    this.mergeUpTo = db.prepare(
      `INSERT INTO usage_records (${USAGE_COLUMNS}) SELECT ${USAGE_COLUMNS} FROM usage_staged WHERE rowid <= ?
       ORDER BY dedup_key, rowid ${KEEP_GREATER_OUTPUT}`,
    );
    this.unstageUpTo = db.prepare(`DELETE FROM usage_staged WHERE rowid <= ?`);
    this.sessionStmt = db.prepare(SESSION_SPEND_SQL);
    // usage_quarter_hours is this store's own derived table, kept by triggers (migration 3).
    this.rangeStmt = db.prepare(
      `SELECT model, SUM(cost_micros) AS cost, SUM(unpriced) AS unpriced, SUM(records) AS n
       FROM usage_quarter_hours WHERE bucket >= ? / 900000 AND bucket < ? / 900000 GROUP BY model ORDER BY cost DESC`,
    );
    this.seriesStmt = db.prepare(
      `SELECT ts, cost_micros AS costMicros FROM usage_records WHERE ts >= ? AND source = ? AND cost_micros IS NOT NULL AND seat IS NULL ORDER BY ts`,
    );
    this.sessionSeriesStmt = db.prepare(
      `SELECT ts, cost_micros AS costMicros, model FROM usage_records WHERE session_id = ? AND ts >= ? AND cost_micros IS NOT NULL AND seat IS NULL ORDER BY ts`,
    );
    this.lastCallStmt = db.prepare(
      `SELECT model, ts, input_tokens + cache_read + cache_write_5m + cache_write_1h AS ctx, cache_write_1h AS w1h
       FROM usage_records WHERE session_id = ? AND model != '<synthetic>' ORDER BY ts DESC LIMIT 1`,
    );
    this.totalsStmt = db.prepare(
      `SELECT COALESCE(SUM(cost_micros), 0) AS cost, COALESCE(SUM(records), 0) AS n, COALESCE(SUM(unpriced), 0) AS unpriced,
              COALESCE(SUM(input_tokens), 0) AS input, COALESCE(SUM(output_tokens), 0) AS output,
              COALESCE(SUM(cache_read), 0) AS cacheRead, COALESCE(SUM(cache_write), 0) AS cacheWrite
       FROM usage_quarter_hours`,
    );
  }

  /**
   * Every reply between two times with its session's folder, for the reports (core/report/report.ts); `ownSeat`
   * names the replies that are this seat's own (a pickup's history carries the sender's seat).
   */
  reportRows(fromMs: number, toMs: number, ownSeat: string): UsageRow[] {
    return (
      this.db
        .prepare(
          `SELECT u.ts, u.session_id AS sessionId, u.model, s.cwd AS project, COALESCE(u.seat, ?) AS seat, u.input_tokens AS inputTokens,
             u.output_tokens AS outputTokens, u.cache_write_5m + u.cache_write_1h AS cacheCreationTokens, u.cache_read AS cacheReadTokens,
             u.cost_micros AS costMicros
           FROM usage_records u LEFT JOIN sessions s ON s.session_id = u.session_id WHERE u.ts >= ? AND u.ts < ?`,
        )
        .all(ownSeat, fromMs, toMs) as UsageRow[]
    );
  }

  /** Each priced record's time and cost since `fromMs`, oldest first, for one source (for the $→% calibration). */
  costSeries(source: string, fromMs: number): Array<{ ts: number; costMicros: number }> {
    return this.seriesStmt.all(fromMs, source) as Array<{ ts: number; costMicros: number }>;
  }

  /** The session's latest model call: how big its context was, and whether it cached for an hour. */
  lastCall(sessionId: string): { model: string; ts: number; contextTokens: number; cachedForAnHour: boolean } | null {
    const r = this.lastCallStmt.get(sessionId) as { model: string; ts: number; ctx: number; w1h: number } | undefined;
    return r ? { model: r.model, ts: r.ts, contextTokens: r.ctx, cachedForAnHour: r.w1h > 0 } : null;
  }

  /** One session's priced records since `fromMs`, oldest first: its burn rate at a wall. */
  sessionSeries(sessionId: string, fromMs: number): Array<{ ts: number; costMicros: number; model: string }> {
    return this.sessionSeriesStmt.all(sessionId, fromMs) as Array<{ ts: number; costMicros: number; model: string }>;
  }

  /** When each model call of these sessions happened (priced or not; Claude Code's own records left out): a task's active time. */
  callTimes(sessionIds: readonly string[]): number[] {
    if (sessionIds.length === 0) return [];
    return (
      this.db
        .prepare(`SELECT ts FROM usage_records WHERE model != '<synthetic>' AND seat IS NULL AND session_id IN (${sessionIds.map(() => '?').join(',')}) ORDER BY ts`)
        .all(...sessionIds) as Array<{ ts: number }>
    ).map((r) => r.ts);
  }

  /** Records a call; `seat` names the other seat it belongs to (a picked-up history), null for this seat's own. */
  record(usage: UsageRecord, cost: PricedCost, seat: string | null = null): void {
    this.recordMany([{ usage, cost, seat }]);
  }

  /** Records a batch (a chunk of a file): a reply's repeated blocks are written once, staged while a backfill stages. */
  recordMany(entries: Iterable<UsageEntry>): void {
    const merged = mergeRepeatedReplies(entries);
    if (this.bulkKeys !== null) {
      for (const e of merged) this.recordInBulk(e);
      return;
    }
    const into = this.stagers > 0 ? this.stage : (this.upsert ??= this.db.prepare(`INSERT INTO usage_records (${USAGE_COLUMNS}) VALUES (${USAGE_VALUES}) ${KEEP_GREATER_OUTPUT}`));
    for (const e of merged) into.run(...usageValues(e));
  }

  /** The upsert, done without the dedup index: a key met before keeps its row, raised to a greater output count. */
  private recordInBulk(e: UsageEntry): void {
    const hash = this.keyHash(e.usage.dedupKey);
    let output = 0;
    const rowid = this.bulkKeys!.find(hash, (id) => {
      const row = this.rowAt.get(id) as { key: string; output: number };
      output = row.output;
      return row.key === e.usage.dedupKey;
    });
    if (rowid !== null) {
      if (e.usage.outputTokens > output) this.raiseOutput.run(e.usage.outputTokens, e.cost.priced ? e.cost.costMicros : null, rowid);
      return;
    }
    this.bulkRowsSinceCommit++;
    this.bulkKeys!.add(hash, Number(this.append.run(...usageValues(e)).lastInsertRowid));
  }

  /** A large backfill begins: records are staged until as many endStaging calls have come. */
  beginStaging(): void {
    this.stagers++;
  }

  endStaging(): void {
    this.stagers = Math.max(0, this.stagers - 1);
  }

  /**
   * A cold backfill begins (a first start on a long history): true when the store holds no usage at all (nothing
   * recorded, nothing staged) and no transaction is open, else false and the caller stages. Its rows then go straight
   * into usage_records inside one transaction that stays open across the backfill's chunks (the follower writes a
   * chunk and its offset straight into it, without a savepoint of its own) and is committed every BULK_COMMIT_ROWS rows; the quarter-hour triggers are dropped until
   * endBulk sums the quarter hours from the rows. A crash loses at most the rows since the last commit, whose offsets
   * went with them, and restoreDerived (at the next open) sums and creates what was dropped. While it loads, the
   * quarter hours (today's spend, the totals) count none of it, as staged rows count nowhere until merged.
   */
  beginBulk(): boolean {
    if (this.bulkers > 0) {
      this.bulkers++;
      return true;
    }
    if (this.db.inTransaction || this.stagers > 0) return false;
    const any = this.db.prepare(`SELECT EXISTS (SELECT 1 FROM usage_records) OR EXISTS (SELECT 1 FROM usage_staged) AS n`).get() as { n: number };
    if (any.n) return false;
    this.db.exec('BEGIN IMMEDIATE');
    for (const name of QUARTER_HOUR_TRIGGER_NAMES) this.db.exec(`DROP TRIGGER IF EXISTS ${name}`);
    this.db.exec(`DROP INDEX IF EXISTS ${DEDUP_INDEX}`);
    this.bulkKeys = new RowsByHash();
    // Rows appended, and indexes by session and time that grow at a few places: a small cache holds what is touched.
    this.cacheBeforeBulk = this.db.pragma('cache_size', { simple: true }) as number;
    this.db.pragma(`cache_size = ${BULK_CACHE_KIB}`);
    this.bulkers = 1;
    this.bulkRowsSinceCommit = 0;
    return true;
  }

  /**
   * Between chunks (outside any other transaction): commits the cold backfill's rows once there are enough of them,
   * and opens its transaction again at the next call. The chunk between runs in a transaction of its own, after an
   * await, so another process's writer (the engine) waiting for the store gets its turn there.
   */
  bulkCheckpoint(everyRows: number = BULK_COMMIT_ROWS): void {
    if (this.bulkers === 0) return;
    if (!this.db.inTransaction) {
      this.db.exec('BEGIN IMMEDIATE');
      this.bulkRowsSinceCommit = 0;
    } else if (this.bulkRowsSinceCommit >= everyRows) {
      this.db.exec('COMMIT');
    }
  }

  /**
   * A cold backfill has read its last file: its rows are committed and the key index built, each in a step of its own
   * with hooks let through between, so the end does not hold musher's thread for all of it at once (endBulk then sums
   * the quarter hours). Only when this is the last source loading; else endBulk builds it.
   */
  async indexBulk(): Promise<void> {
    if (this.bulkers !== 1 || this.bulkKeys === null) return;
    if (this.db.inTransaction) this.db.exec('COMMIT');
    await new Promise((r) => setImmediate(r));
    if (this.bulkers !== 1) return;
    const present = this.db.prepare(`SELECT 1 FROM sqlite_master WHERE name = ?`).get(DEDUP_INDEX) !== undefined;
    if (!present) this.db.transaction(() => this.db.exec(CREATE_DEDUP_INDEX)).immediate();
    await new Promise((r) => setImmediate(r));
  }

  /** A cold backfill's source is done (or stopping): the last one sums the quarter hours, restores their triggers, and commits. */
  endBulk(): void {
    if (this.bulkers === 0) return;
    if (--this.bulkers > 0) return;
    try {
      this.restoreDerived(true);
    } finally {
      this.bulkKeys = null;
      this.db.pragma(`cache_size = ${this.cacheBeforeBulk}`);
      // Committed whatever happens: rows without their index or quarter hours are what restoreDerived repairs at the next open.
      if (this.db.inTransaction) this.db.exec('COMMIT');
    }
  }

  /**
   * Builds the dedup index, sums the quarter hours from the rows and creates their triggers when a cold backfill
   * dropped them (a crash part way, or endBulk's own `force`); inside the caller's transaction when there is one.
   */
  private restoreDerived(force = false): void {
    const names = [DEDUP_INDEX, ...QUARTER_HOUR_TRIGGER_NAMES];
    const have = this.db.prepare(`SELECT name FROM sqlite_master WHERE name IN (${names.map(() => '?').join(', ')})`).all(...names) as Array<{ name: string }>;
    if (!force && have.length === names.length) return;
    this.db.transaction(() => {
      // The bulk wrote each key once (its map of keys); sorted, the index is built in one pass.
      if (!have.some((r) => r.name === DEDUP_INDEX)) this.db.exec(CREATE_DEDUP_INDEX);
      for (const name of QUARTER_HOUR_TRIGGER_NAMES) this.db.exec(`DROP TRIGGER IF EXISTS ${name}`);
      this.db.exec(SUM_QUARTER_HOURS);
      for (const trigger of QUARTER_HOUR_TRIGGERS) this.db.exec(trigger);
    })();
  }

  /** Staged rows not yet merged (a crash can leave some: they are merged at the next start). */
  stagedRows(): number {
    return (this.db.prepare(`SELECT COUNT(*) AS n FROM usage_staged`).get() as { n: number }).n;
  }

  /**
   * Moves up to `maxRows` of the oldest staged rows into usage_records, in one transaction (the quarter-hour triggers
   * count them as they land); returns about how many are left (0: none).
   */
  mergeStagedChunk(maxRows: number = MERGE_CHUNK_ROWS): number {
    return this.db.transaction(() => {
      const { first, last } = this.stagedSpan.get() as { first: number | null; last: number | null };
      if (first === null || last === null) return 0;
      const upTo = first + Math.max(1, maxRows) - 1;
      this.mergeUpTo.run(upTo);
      this.unstageUpTo.run(upTo);
      return Math.max(0, last - upTo);
    })();
  }

  /** Merges every staged row, a chunk at a time, letting hooks and the statusline through between chunks. */
  async mergeStaged(maxRows: number = MERGE_CHUNK_ROWS): Promise<void> {
    while (this.mergeStagedChunk(maxRows) > 0) await new Promise((r) => setImmediate(r));
  }

  sessionSpend(sessionId: string): SessionSpend {
    const r = this.sessionStmt.get(sessionId) as { cost: number; unpriced: number | null; n: number; models: string | null };
    return {
      sessionId,
      costMicros: r.cost,
      unpricedRecords: r.unpriced ?? 0,
      records: r.n,
      models: r.models ? r.models.split(',') : [],
    };
  }

  /** Spend per model between two quarter-hour boundaries (local midnights are). */
  spendByModel(fromMs: number, toMs: number): SpendByModel[] {
    return (this.rangeStmt.all(fromMs, toMs) as Array<{ model: string; cost: number; unpriced: number; n: number }>).map(
      (r) => ({ model: r.model, costMicros: r.cost, unpricedRecords: r.unpriced, records: r.n }),
    );
  }

  totals(): { costMicros: number; records: number; unpricedRecords: number; inputTokens: number; outputTokens: number; cacheReadTokens: number; cacheWriteTokens: number } {
    const r = this.totalsStmt.get() as { cost: number; n: number; unpriced: number | null; input: number; output: number; cacheRead: number; cacheWrite: number };
    return {
      costMicros: r.cost,
      records: r.n,
      unpricedRecords: r.unpriced ?? 0,
      inputTokens: r.input,
      outputTokens: r.output,
      cacheReadTokens: r.cacheRead,
      cacheWriteTokens: r.cacheWrite,
    };
  }
}

/** A record's columns in USAGE_COLUMNS' order. */
function usageValues({ usage, cost, seat }: UsageEntry): unknown[] {
  return [
    usage.dedupKey, usage.source, usage.sessionId, usage.model, usage.timestampMs, usage.inputTokens, usage.outputTokens,
    usage.cacheWrite5mTokens, usage.cacheWrite1hTokens, usage.cacheReadTokens, usage.webSearchRequests,
    usage.serviceTier ?? null, usage.inferenceGeo ?? null, cost.priced ? cost.costMicros : null, cost.priced ? null : cost.reason, seat,
  ];
}

/** A 32-bit hash of a dedup key (FNV-1a, its bits mixed once more): the bulk load's record of the keys it wrote. */
export function dedupKeyHash(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  return h ^ (h >>> 13);
}
