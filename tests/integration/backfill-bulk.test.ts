/**
 * A cold backfill (issue 16 § 1): a first start on a long history parses it off the main thread and loads it in bulk.
 * The real stores, the real transcript reader and its real parse worker (dist/, built before the tests) on a generated
 * history with the lines that make reading hard: what ends in the store is what reading it the old way left —
 * chunk by chunk on the main thread, into a store that already held usage — row for row.
 */
import { appendFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { writeHistory } from '../../bench/gen-history.js';
import { systemClock } from '../../musher/clock.js';
import { ClaudeTranscriptSource } from '../../musher/ingest/claude-transcripts.js';
import { FileFollower } from '../../musher/ingest/file-follower.js';
import { JsonlSource, type OffThreadReader, type OffThreadSlice } from '../../musher/ingest/jsonl-source.js';
import { transcriptWorkerEntry, WorkerPool } from '../../musher/ingest/worker-pool.js';
import type { Log } from '../../musher/log.js';
import { loadPriceTable } from '../../musher/prices.js';
import { openStore, type Db } from '../../musher/store/db.js';
import { HistoryStore } from '../../musher/store/histories.js';
import { OffsetStore } from '../../musher/store/offsets.js';
import { SessionStore } from '../../musher/store/sessions.js';
import { backlogStaging, UsageStore } from '../../musher/store/usage.js';
import { QUARTER_HOUR_TRIGGERS } from '../../musher/store/usage-schema.js';
import { WallStore } from '../../musher/store/walls.js';
import type { UsageRecord } from '../../core/usage.js';

const REPO = join(import.meta.dirname, '..', '..');
const PRICES = loadPriceTable(REPO);
const START = Date.UTC(2026, 10, 1);

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'sl-bulk-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function assistant(session: string, id: string, model: string, at: number, output = 500): string {
  return JSON.stringify({
    parentUuid: null,
    isSidechain: false,
    message: { id, type: 'message', role: 'assistant', model, content: [{ type: 'text', text: 'ok' }], stop_reason: 'end_turn', usage: { input_tokens: 1000, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: output, service_tier: 'standard' } },
    requestId: `req_${id}`,
    type: 'assistant',
    uuid: `u-${id}`,
    timestamp: new Date(at).toISOString(),
    cwd: '/p',
    sessionId: session,
  });
}

/**
 * A history over the 8 MB a backlog is staged from, with the hard lines in a file of its own: a reply whose blocks
 * disagree (the later one counts more output), the same reply again in another file (a resumed session copies its
 * history), a record cut short, a line over the 8 MB limit, an unknown model, a usage-limit record, a user record in a
 * new session, a line ending in CRLF, an empty line, and a last line still being written.
 */
function history(projects: string): { bytes: number } {
  writeHistory({ projectsDir: projects, targetBytes: 12 * 1024 * 1024, startMs: START, seed: 11 });
  const dir = join(projects, '-hard');
  mkdirSync(dir, { recursive: true });
  const limit = JSON.stringify({
    type: 'assistant',
    message: { id: 'msg_lim', model: '<synthetic>', role: 'assistant', content: [{ type: 'text', text: "You've hit your 5-hour limit · resets 8:55pm (UTC)" }], usage: { input_tokens: 0, output_tokens: 0 } },
    requestId: 'req_lim',
    uuid: 'u-lim',
    timestamp: new Date(START + 7_000).toISOString(),
    sessionId: 'hard',
    apiError: 'usage_limit_reached',
    apiErrorParams: { rate_limit_info: { status: 'rejected', resetsAt: 1795985705, rateLimitType: 'five_hour' } },
    isApiErrorMessage: true,
  });
  const user = (session: string, at: number) => JSON.stringify({ type: 'user', sessionId: session, cwd: `/work/${session}`, timestamp: new Date(at).toISOString(), message: { role: 'user', content: 'hi' } });
  writeFileSync(
    join(dir, 'hard.jsonl'),
    [
      user('hard', START + 1_000),
      assistant('hard', 'h1', 'claude-sonnet-4-6', START + 2_000, 10),
      assistant('hard', 'h1', 'claude-sonnet-4-6', START + 2_500, 900),
      assistant('hard', 'h2', 'claude-sonnet-4-6', START + 3_000).slice(0, 150),
      JSON.stringify({ type: 'user', sessionId: 'hard', message: { role: 'user', content: 'x'.repeat(9 * 1024 * 1024) } }),
      assistant('hard', 'h3', 'claude-nonexistent-9', START + 4_000),
      `${assistant('hard', 'h4', 'claude-opus-5-5', START + 5_000)}\r`,
      '',
      limit,
      user('other', START + 8_000),
      assistant('other', 'o1', 'claude-haiku-4-5', START + 9_000),
      user('hard', START + 10_000),
    ].join('\n') + `\n${assistant('hard', 'h5', 'claude-opus-5-5', START + 11_000).slice(0, 80)}`,
  );
  writeFileSync(join(dir, 'resumed.jsonl'), `${user('resumed', START + 20_000)}\n${assistant('resumed', 'h1', 'claude-sonnet-4-6', START + 2_000, 10)}\n${assistant('resumed', 'r1', 'claude-sonnet-4-6', START + 21_000)}\n`);
  let bytes = 0;
  const walk = (d: string): void => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (name.endsWith('.jsonl')) bytes += statSync(p).size;
    }
  };
  walk(projects);
  return { bytes };
}

interface Reader {
  db: Db;
  usage: UsageStore;
  source: ClaudeTranscriptSource;
  errors: string[];
  infos: string[];
}

function reader(dbFile: string, projects: string, opts: { parseWorkers: number; dbOf?: Db }): Reader {
  const db = opts.dbOf ?? openStore(dbFile);
  if (!opts.dbOf) cleanups.push(() => db.close());
  const errors: string[] = [];
  const infos: string[] = [];
  const log: Log = { info: (m) => infos.push(m), warn: (m) => errors.push(`WARN ${m}`), error: (m) => errors.push(m) };
  const offsets = new OffsetStore(db);
  const usage = new UsageStore(db);
  const source = new ClaudeTranscriptSource({
    projectsDir: projects,
    follower: new FileFollower(db, offsets, systemClock, log),
    sessions: new SessionStore(db),
    usage,
    walls: new WallStore(db),
    histories: new HistoryStore(db),
    prices: PRICES,
    clock: systemClock,
    log,
    parseWorkers: opts.parseWorkers,
  });
  cleanups.push(() => source.stop());
  return { db, usage, source, errors, infos };
}

/** Everything the backfill leaves: rows, quarter hours, sessions, walls and offsets (paths relative to the history). */
function contents(db: Db, projects: string) {
  const q = (sql: string) => db.prepare(sql).all();
  return {
    usage: q(`SELECT * FROM usage_records WHERE source != 'seed' ORDER BY dedup_key`),
    quarterHours: q(`SELECT * FROM usage_quarter_hours ORDER BY bucket, model`),
    sessions: q(`SELECT session_id, harness, cwd, transcript_path, model, first_seen_at, last_seen_at FROM sessions ORDER BY session_id`),
    walls: new WallStore(db).recent(),
    offsets: (q(`SELECT path, offset FROM file_offsets ORDER BY path`) as Array<{ path: string; offset: number }>).map((o) => ({ ...o, path: o.path.slice(projects.length) })),
  };
}

/** The old way: chunk by chunk on the main thread, into a store that already held usage (so it stages, not bulk). */
async function readTheOldWay(projects: string) {
  const dir = tempDir();
  const r = reader(join(dir, 'sleds.db'), projects, { parseWorkers: 0 });
  // Another seat's record: it keeps the store from being cold and stays out of the quarter hours.
  const seed: UsageRecord = { source: 'seed', dedupKey: 'seed', sessionId: 'seed', model: 'm', timestampMs: START, cwd: null, inputTokens: 0, outputTokens: 0, cacheWrite5mTokens: 0, cacheWrite1hTokens: 0, cacheReadTokens: 0, webSearchRequests: 0, serviceTier: null, inferenceGeo: null };
  r.usage.record(seed, { priced: true, costMicros: 0 }, 'someone-else');
  await r.source.start();
  await r.source.idle();
  return { ...contents(r.db, projects), errors: [...r.errors].sort() };
}

describe('a cold backfill', () => {
  it('parsed by its worker and loaded in bulk, leaves the store the old way left it, row for row, and says the same about bad lines', async () => {
    expect(transcriptWorkerEntry()).not.toBeNull(); // the built worker: without it this test would read on the main thread
    const projects = join(tempDir(), 'projects');
    history(projects);
    const old = await readTheOldWay(projects);
    expect(old.usage.length).toBeGreaterThan(2000);

    const dir = tempDir();
    const r = reader(join(dir, 'sleds.db'), projects, { parseWorkers: 1 });
    await r.source.start();
    await r.source.idle();
    const now = contents(r.db, projects);
    expect(now).toEqual({ usage: old.usage, quarterHours: old.quarterHours, sessions: old.sessions, walls: old.walls, offsets: old.offsets });
    expect([...r.errors].sort()).toEqual(old.errors);
    // What the hard file says, so the comparison is not two empty stores agreeing.
    const h1 = now.usage.find((u) => (u as { dedup_key: string }).dedup_key === 'h1:req_h1') as { output_tokens: number; session_id: string };
    expect(h1).toMatchObject({ output_tokens: 900, session_id: 'hard' });
    expect(now.walls).toHaveLength(1);
    expect(now.sessions.find((s) => (s as { session_id: string }).session_id === 'other')).toMatchObject({ cwd: '/work/other', last_seen_at: START + 9_000 });
    expect(r.errors.some((e) => /truncated or malformed record/.test(e))).toBe(true);
    expect(r.errors.some((e) => /over the 8\.\d+ MB limit/.test(e))).toBe(true);
    expect(r.errors.some((e) => /claude-nonexistent-9/.test(e))).toBe(true);
    // It really was read off the main thread, and no worker failed.
    expect(r.infos.filter((m) => /parse worker/.test(m))).toEqual([expect.stringMatching(/backlog of [\d.]+ MB: parsed by 1 worker thread/)]);
    expect(r.errors.some((e) => e.startsWith('WARN'))).toBe(false);
    // The quarter hours are back to being kept row by row: a reply appended after the backfill counts at once.
    const before = r.usage.totals().records;
    appendFileSync(join(projects, '-hard', 'resumed.jsonl'), `${assistant('resumed', 'r2', 'claude-sonnet-4-6', START + 30_000)}\n`);
    r.source.kick(join(projects, '-hard', 'resumed.jsonl'));
    await r.source.idle();
    expect(r.usage.totals().records).toBe(before + 1);
  }, 60_000);

  it('killed after a commit part way, the next open sums the quarter hours and keeps them from then on', () => {
    const file = join(tempDir(), 'sleds.db');
    const first = openStore(file);
    const killed = new UsageStore(first);
    expect(killed.beginBulk()).toBe(true);
    const rec = (key: string, ts: number): UsageRecord => ({ source: 't', dedupKey: key, sessionId: 's', model: 'opus', timestampMs: ts, cwd: null, inputTokens: 1, outputTokens: 2, cacheWrite5mTokens: 0, cacheWrite1hTokens: 0, cacheReadTokens: 0, webSearchRequests: 0, serviceTier: null, inferenceGeo: null });
    killed.recordMany([1, 2, 3].map((i) => ({ usage: rec(`k${i}`, START + i * 1_000_000), cost: { priced: true, costMicros: 10 }, seat: null })));
    killed.bulkCheckpoint(1); // committed: these three rows, and no quarter hours for them
    killed.bulkCheckpoint(1); // the next chunk's: open again
    killed.recordMany([{ usage: rec('k4', START), cost: { priced: true, costMicros: 10 }, seat: null }]);
    first.close(); // as a kill leaves it: the open transaction (k4) rolled back, the triggers gone

    const db = openStore(file);
    cleanups.push(() => db.close());
    const usage = new UsageStore(db);
    expect(usage.totals()).toMatchObject({ records: 3, costMicros: 30, inputTokens: 3, outputTokens: 6 });
    usage.record(rec('k5', START), { priced: true, costMicros: 5 });
    expect(usage.totals()).toMatchObject({ records: 4, costMicros: 35 });
    // The key index the load dropped is back: a reply read again is the row it was, not a second one.
    usage.record(rec('k1', START + 1_000_000), { priced: true, costMicros: 10 });
    expect(db.prepare(`SELECT COUNT(*) AS n FROM usage_records WHERE dedup_key = 'k1'`).get()).toEqual({ n: 1 });
    expect(usage.totals()).toMatchObject({ records: 4, costMicros: 35 });
    // Not cold any more: a second large backlog stages rather than loading in bulk over what is there.
    expect(usage.beginBulk()).toBe(false);
  });

  it('keeps one row per reply without its key index: a reply met again in a later chunk, a greater output, two keys of one hash', () => {
    for (const keyHash of [undefined, () => 7]) {
      const db = openStore(join(tempDir(), 'sleds.db'));
      cleanups.push(() => db.close());
      const usage = new UsageStore(db, keyHash);
      const rec = (key: string, output: number): UsageRecord => ({ source: 't', dedupKey: key, sessionId: 's', model: 'opus', timestampMs: START, cwd: null, inputTokens: 1, outputTokens: output, cacheWrite5mTokens: 0, cacheWrite1hTokens: 0, cacheReadTokens: 0, webSearchRequests: 0, serviceTier: null, inferenceGeo: null });
      const entry = (key: string, output: number, cost: number) => ({ usage: rec(key, output), cost: { priced: true as const, costMicros: cost }, seat: null });
      expect(usage.beginBulk()).toBe(true);
      expect(db.prepare(`SELECT COUNT(*) AS n FROM sqlite_master WHERE name = 'usage_dedup'`).get()).toEqual({ n: 0 });
      usage.recordMany([entry('a', 5, 50), entry('b', 5, 50)]);
      usage.bulkCheckpoint(1);
      usage.bulkCheckpoint(1);
      usage.recordMany([entry('a', 5, 99), entry('b', 9, 90), entry('c', 1, 10)]); // a: the same again; b: its final count
      usage.recordMany([entry('b', 7, 70)]); // an earlier block of b, late: changes nothing
      usage.endBulk();
      expect(db.prepare(`SELECT dedup_key AS key, output_tokens AS output, cost_micros AS cost FROM usage_records ORDER BY dedup_key`).all()).toEqual([
        { key: 'a', output: 5, cost: 50 },
        { key: 'b', output: 9, cost: 90 },
        { key: 'c', output: 1, cost: 10 },
      ]);
      expect(usage.totals()).toMatchObject({ records: 3, costMicros: 150, outputTokens: 15 });
      // After the load, the index is there and the store dedups on it as it always has.
      usage.record(rec('c', 4), { priced: true, costMicros: 40 });
      expect(usage.totals()).toMatchObject({ records: 3, costMicros: 180, outputTokens: 18 });
      expect(db.prepare(`SELECT COUNT(*) AS n FROM sqlite_master WHERE name = 'usage_dedup'`).get()).toEqual({ n: 1 });
    }
  });

  it('lets another process write between two of its commits (the engine does not wait out the whole backfill)', () => {
    const file = join(tempDir(), 'sleds.db');
    const db = openStore(file);
    cleanups.push(() => db.close());
    const usage = new UsageStore(db);
    const other = new Database(file, { timeout: 0 });
    cleanups.push(() => other.close());
    const write = () => other.prepare(`INSERT INTO offsets_probe VALUES (1)`).run();
    db.exec(`CREATE TABLE offsets_probe (n INTEGER)`);
    expect(usage.beginBulk()).toBe(true);
    expect(write).toThrow(/locked|busy/i);
    usage.recordMany([{ usage: { source: 't', dedupKey: 'k', sessionId: 's', model: 'opus', timestampMs: START, cwd: null, inputTokens: 1, outputTokens: 1, cacheWrite5mTokens: 0, cacheWrite1hTokens: 0, cacheReadTokens: 0, webSearchRequests: 0, serviceTier: null, inferenceGeo: null }, cost: { priced: true, costMicros: 1 }, seat: null }]);
    usage.bulkCheckpoint(1);
    expect(write).not.toThrow();
    usage.bulkCheckpoint(1);
    expect(write).toThrow(/locked|busy/i);
    usage.endBulk();
    expect(write).not.toThrow();
    expect(usage.totals().records).toBe(1);
  });

  it('stopped part way, keeps what it read: the rows with their offsets, the quarter hours summed', async () => {
    const projects = join(tempDir(), 'projects');
    const { bytes } = history(projects);
    const dbFile = join(tempDir(), 'sleds.db');
    const r = reader(dbFile, projects, { parseWorkers: 1 });
    await r.source.start();
    // Stop once something is recorded (the reading goes on between the source's awaits). Waited for, not counted out:
    // a count of turns ran out before the worker's first answer on a loaded machine.
    while ((r.db.prepare(`SELECT COUNT(*) AS n FROM usage_records`).get() as { n: number }).n === 0) await new Promise((res) => setImmediate(res));
    expect(r.source.progress().backfilling).toBe(true);
    await r.source.stop();
    const rows = (r.db.prepare(`SELECT COUNT(*) AS n FROM usage_records`).get() as { n: number }).n;
    expect(rows).toBeGreaterThan(0);
    expect(r.usage.totals().records).toBe(rows);
    expect(r.db.inTransaction).toBe(false);
    // A restart reads the rest and ends where one clean read ends.
    const again = reader(dbFile, projects, { parseWorkers: 1, dbOf: r.db });
    await again.source.start();
    await again.source.idle();
    const read = (r.db.prepare(`SELECT COALESCE(SUM(offset), 0) AS n FROM file_offsets`).get() as { n: number }).n;
    expect(read).toBeLessThanOrEqual(bytes);
    const old = await readTheOldWay(projects);
    expect(contents(r.db, projects).usage).toEqual(old.usage);
    expect(contents(r.db, projects).quarterHours).toEqual(old.quarterHours);
  }, 60_000);

  it('a reader that cannot take a file leaves it, and the rest, to the main thread: nothing is lost', async () => {
    const dir = tempDir();
    const projects = join(dir, 'projects');
    mkdirSync(projects);
    for (const name of ['a', 'b', 'c', 'd']) writeFileSync(join(projects, `${name}.jsonl`), `${JSON.stringify({ key: name })}\n`.repeat(3));
    const db = openStore(join(dir, 'sleds.db'));
    cleanups.push(() => db.close());
    const usage = new UsageStore(db);
    const offsets = new OffsetStore(db);
    const log: Log = { info: () => undefined, warn: () => undefined, error: () => undefined };
    const recorded: string[] = [];
    let reads = 0;
    const failing: OffThreadReader<OffThreadSlice & { keys: string[] }> = {
      depth: 2,
      read: async (path, from) => {
        reads++;
        if (reads > 1) return null; // the first is read off the thread; then the "worker" fails
        const text = readFileSync(path, 'utf8').slice(from);
        return { to: from + Buffer.byteLength(text), bytes: Buffer.byteLength(text), done: true, keys: text.trim().split('\n').map((l) => (JSON.parse(l) as { key: string }).key) };
      },
      record: (_path, slice) => recorded.push(...slice.keys.map((k) => `off:${k}`)),
      close: async () => undefined,
    };
    const source = new JsonlSource({
      dir: projects,
      follower: new FileFollower(db, offsets, systemClock, log),
      log,
      what: 'transcript',
      accepts: (p) => p.endsWith('.jsonl'),
      record: (_path, lines) => recorded.push(...lines.map((l) => `main:${(JSON.parse(l.text) as { key: string }).key}`)),
      staging: { ...backlogStaging(usage), fromBytes: 1 },
      offThread: () => failing,
    });
    await source.start();
    await source.idle();
    await source.stop();
    expect(recorded.filter((k) => k.startsWith('off:'))).toHaveLength(3);
    expect(recorded.map((k) => k.slice(k.indexOf(':') + 1)).sort()).toEqual(['a', 'a', 'a', 'b', 'b', 'b', 'c', 'c', 'c', 'd', 'd', 'd']);
    expect(source.progress()).toEqual({ backfilling: false, pendingBytes: 0 });
  });
});

describe('WorkerPool', () => {
  it('a worker that dies fails what it held and every later request, so the caller reads on its own thread', async () => {
    const dir = tempDir();
    const entry = join(dir, 'dies.mjs');
    writeFileSync(entry, `import { parentPort } from 'node:worker_threads';\nparentPort.on('message', () => process.exit(3));\n`);
    const pool = new WorkerPool<number, number>(entry, 1);
    cleanups.push(() => pool.close());
    await expect(pool.run(1)).rejects.toThrow(/exited \(3\)/);
    await expect(pool.run(2)).rejects.toThrow(/exited \(3\)/);
  });
});

describe('the quarter-hour triggers a cold backfill drops and creates again', () => {
  it('are the migrated schema’s, word for word', () => {
    const db = openStore(join(tempDir(), 'sleds.db'));
    cleanups.push(() => db.close());
    const norm = (s: string) => s.replace(/\s+/g, ' ').trim();
    const migrated = (db.prepare(`SELECT sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'usage_records' ORDER BY name`).all() as Array<{ sql: string }>).map((r) => norm(r.sql));
    expect(QUARTER_HOUR_TRIGGERS.map(norm).sort()).toEqual(migrated.sort());
  });
});
