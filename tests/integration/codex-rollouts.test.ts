import { appendFileSync, copyFileSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore, type Db } from '../../musher/store/db.js';
import { SessionStore } from '../../musher/store/sessions.js';
import { UsageStore } from '../../musher/store/usage.js';
import { BarStore } from '../../musher/store/bars.js';
import { WallStore } from '../../musher/store/walls.js';
import { OffsetStore } from '../../musher/store/offsets.js';
import { HistoryStore } from '../../musher/store/histories.js';
import { FileFollower, type FollowOutcome, type Line } from '../../musher/ingest/file-follower.js';
import { CodexRolloutSource, type CodexSeatReading } from '../../musher/ingest/codex-rollouts.js';
import { loadPriceTable } from '../../musher/prices.js';
import { systemClock } from '../../musher/clock.js';
import type { Log } from '../../musher/log.js';
import { C, FIVE_H_RESET, G, L, LC, LP, LS, P } from '../support/codex-fixture-threads.js';

const REPO = join(import.meta.dirname, '..', '..');
const FIXTURES = join(REPO, 'tests', 'fixtures', 'codex');
const ts = (iso: string) => Date.parse(iso);
const prices = loadPriceTable(REPO);

/** µ$ of each response (tests/fixtures/codex/README.md). */
const COST = { p1: 2803, p2: 2175, c: 5325, g: 5150, l1: 1550, l2: 1075, lp1: 2300, lp2: 2550, lc: 2063, ls: 1450 };
/** gpt-5.1-codex: $1.25 in, $0.125 cached, $10 out per MTok (prices/effective/2025-05-16.json); µ$ rounded per response. */
const gpt51codex = (input: number, cached: number, output: number): number => Math.round((input - cached) * 1.25 + cached * 0.125 + output * 10);

/** Counts what the follower really read. */
class CountingFollower extends FileFollower {
  bytesRead = 0;
  override async follow(path: string, record: (lines: Line[]) => void, onProgress?: (bytes: number) => void, signal?: AbortSignal): Promise<FollowOutcome> {
    const out = await super.follow(path, record, onProgress, signal);
    this.bytesRead += out.bytesRead;
    return out;
  }
}

interface World {
  dir: string;
  sessionsDir: string;
  db: Db;
  sessions: SessionStore;
  usage: UsageStore;
  bars: BarStore;
  walls: WallStore;
  offsets: OffsetStore;
  logs: { level: string; message: string }[];
  seats: CodexSeatReading[];
  sources: CodexRolloutSource[];
}

const worlds: World[] = [];
afterEach(async () => {
  for (const w of worlds.splice(0)) {
    for (const s of w.sources) await s.stop();
    w.db.close();
    rmSync(w.dir, { recursive: true, force: true });
  }
});

function world(): World {
  const dir = mkdtempSync(join(tmpdir(), 'sl-codex-'));
  const db = openStore(join(dir, 'data', 'sleds.db'));
  const sessionsDir = join(dir, 'codex-home', 'sessions');
  mkdirSync(sessionsDir, { recursive: true });
  const w: World = {
    dir,
    sessionsDir,
    db,
    sessions: new SessionStore(db),
    usage: new UsageStore(db),
    bars: new BarStore(db),
    walls: new WallStore(db),
    offsets: new OffsetStore(db),
    logs: [],
    seats: [],
    sources: [],
  };
  worlds.push(w);
  return w;
}

function source(w: World): { src: CodexRolloutSource; follower: CountingFollower } {
  const log: Log = {
    info: (message) => w.logs.push({ level: 'info', message }),
    warn: (message) => w.logs.push({ level: 'warn', message }),
    error: (message) => w.logs.push({ level: 'error', message }),
  };
  const follower = new CountingFollower(w.db, w.offsets, systemClock, log);
  const src = new CodexRolloutSource({
    sessionsDir: w.sessionsDir,
    follower,
    sessions: w.sessions,
    usage: w.usage,
    walls: w.walls,
    bars: w.bars,
    histories: new HistoryStore(w.db),
    prices,
    clock: systemClock,
    log,
    onSeat: (r) => w.seats.push(r),
  });
  w.sources.push(src);
  return { src, follower };
}

/** Where a fixture rollout lives, relative to a sessions folder. */
function fixtureRel(thread: string, root = join(FIXTURES, 'sessions')): string {
  for (const day of ['28', '29']) {
    const rel = join('2026', '11', day);
    let names: string[] = [];
    try {
      names = readdirSync(join(root, rel));
    } catch {
      continue;
    }
    const name = names.find((n) => n.endsWith(`${thread}.jsonl`));
    if (name) return join(rel, name);
  }
  throw new Error(`no fixture for ${thread}`);
}

/** Copies a fixture rollout into the world's sessions folder; returns its path there. */
function put(w: World, thread: string, root = join(FIXTURES, 'sessions')): string {
  const rel = fixtureRel(thread, root);
  const to = join(w.sessionsDir, rel);
  mkdirSync(dirname(to), { recursive: true });
  copyFileSync(join(root, rel), to);
  return to;
}

/** A fixture's complete lines, to write a rollout in parts. */
function fixtureLines(thread: string): string[] {
  const all = readFileSync(join(FIXTURES, 'sessions', fixtureRel(thread)), 'utf8').split('\n');
  all.pop();
  return all;
}

const errors = (w: World) => w.logs.filter((l) => l.level === 'error').map((l) => l.message);

describe('Codex rollout ingestion', () => {
  it('prices each response once (re-emits, forks, an older fork\'s copied history); bars at their own times; the walls', async () => {
    const w = world();
    for (const t of [LS, G, C, LC, P, L, LP]) put(w, t);
    const { src } = source(w);
    await src.start();
    await src.idle();

    const all = Object.values(COST).reduce((a, b) => a + b, 0) - COST.l2;
    // P's turn 2 is on gpt-5.1-codex: 600 × 1.25 + 1800 × 0.125 + 120 × 10 = 2175 µ$.
    expect(COST.p2).toBe(gpt51codex(2400, 1800, 120));
    expect(w.usage.totals()).toMatchObject({ records: 9, unpricedRecords: 0, costMicros: all });
    // Files are read oldest first, so a copied response belongs to the session that made it.
    expect(w.usage.sessionSpend(P)).toMatchObject({ records: 2, costMicros: COST.p1 + COST.p2, unpricedRecords: 0, models: expect.arrayContaining(['gpt-5.4', 'gpt-5.1-codex']) });
    expect(w.usage.sessionSpend(C)).toMatchObject({ records: 1, costMicros: COST.c });
    expect(w.usage.sessionSpend(G)).toMatchObject({ records: 1, costMicros: COST.g });
    expect(w.usage.sessionSpend(L)).toMatchObject({ records: 1, costMicros: COST.l1 });
    expect(w.usage.sessionSpend(LP)).toMatchObject({ records: 2, costMicros: COST.lp1 + COST.lp2 });
    expect(w.usage.sessionSpend(LC)).toMatchObject({ records: 1, costMicros: COST.lc });
    expect(w.usage.sessionSpend(LS)).toMatchObject({ records: 1, costMicros: COST.ls });

    // Bars: provider openai, named by slot, at the time of the line that carried them. L's came after the
    // 5-hour window of P's 429 had rolled over.
    const bars = w.bars.all().filter((b) => b.provider === 'openai');
    expect(bars.map((b) => b.window).sort()).toEqual(['codex_primary', 'codex_secondary']);
    expect(bars.find((b) => b.window === 'codex_primary')).toMatchObject({ usedPct: 15, resetsAt: 1796003000_000, observedAt: ts('2026-11-29T21:00:02.503Z'), source: 'codex-rollout' });
    expect(bars.find((b) => b.window === 'codex_secondary')).toMatchObject({ usedPct: 5, observedAt: ts('2026-11-29T21:00:02.503Z'), source: 'codex-rollout' });
    const samples = w.bars.samples('openai', `codex-dir:${dirname(w.sessionsDir)}`, 'codex_primary', 0);
    const sampled = samples.map((s) => [s.observedAt, s.usedPct]);
    for (const [iso, pct] of [
      ['2026-11-28T09:00:03.510Z', 31],
      ['2026-11-28T09:01:03.000Z', 32], // a re-emit: no usage, fresher limits
      ['2026-11-28T09:05:06.210Z', 35],
      ['2026-11-29T19:40:04.873Z', 7],
      ['2026-11-29T19:45:10.223Z', 9],
      ['2026-11-29T20:30:01.020Z', 100], // the 429
      ['2026-11-29T21:00:02.503Z', 15],
    ] as const) {
      expect(sampled).toContainEqual([ts(iso), pct]);
    }
    // Nothing from a copied history (LC's at 09:30:00.2, LS's at 09:45:00.3): those limits are old news.
    for (const s of samples) {
      for (const copy of ['2026-11-28T09:30:00.000Z', '2026-11-28T09:45:00.000Z']) {
        expect(s.observedAt >= ts(copy) && s.observedAt < ts(copy) + 1000, new Date(s.observedAt).toISOString()).toBe(false);
      }
    }

    expect(w.walls.recent()).toEqual([
      {
        source: 'codex-rollout',
        dedupKey: 'codex:wall:019ad11a-4d35-7a04-8c5d-7f6a5b4c3d03',
        sessionId: P,
        timestampMs: ts('2026-11-29T20:30:01.031Z'),
        window: 'codex_primary',
        resetsAtMs: FIVE_H_RESET,
        message: expect.stringMatching(/^You’ve hit your usage limit/),
      },
      {
        source: 'codex-rollout',
        dedupKey: `codex:wall:${LP}:2026-11-28T09:40:00.900Z`,
        sessionId: LP,
        timestampMs: ts('2026-11-28T09:40:00.900Z'),
        window: null,
        resetsAtMs: null,
        message: expect.stringMatching(/^You've hit your usage limit/),
      },
    ]);

    for (const [id, model] of [
      [P, 'gpt-5.4'],
      [C, 'gpt-5.4'],
      [G, 'gpt-5.4'],
      [L, 'gpt-5.4'],
      [LP, 'gpt-5'],
      [LC, 'gpt-5'],
      [LS, 'gpt-5'],
    ] as const) {
      expect(w.sessions.get(id)).toMatchObject({ harness: 'codex', cwd: '/home/u/proj', model, transcriptPath: join(w.sessionsDir, fixtureRel(id)) });
    }
    expect(w.sessions.get(P)).toMatchObject({ firstSeenAt: ts('2026-11-29T19:40:00.120Z'), lastSeenAt: ts('2026-11-29T20:30:01.020Z') });
    expect(w.sessions.get(LC)).toMatchObject({ firstSeenAt: ts('2026-11-28T09:30:00.200Z') });

    // The seat: each snapshot's plan, credits and limit state, with its time and source.
    expect(w.seats.find((s) => s.sessionId === LP)).toEqual({
      provider: 'openai',
      source: 'codex-rollout',
      observedAt: ts('2026-11-28T09:00:03.510Z'),
      sessionId: LP,
      limitId: 'codex',
      planType: 'plus',
      credits: { hasCredits: false, unlimited: false, balance: null },
      limitReached: null,
    });
    expect(src.seat()).toMatchObject({ observedAt: ts('2026-11-29T19:40:04.873Z'), sessionId: P, credits: { hasCredits: true, unlimited: false, balance: '12.34' } });

    // One log line in all: L's cut record. Nothing for the half-written last line.
    expect(errors(w)).toHaveLength(1);
    expect(errors(w).some((e) => e.includes(fixtureRel(L).split('/').pop()!) && /truncated or malformed/.test(e))).toBe(true);
    expect(src.progress()).toEqual({ backfilling: false, pendingBytes: 0 });
  });

  it('a half-written last line waits for its end; a restart reads only new bytes and still knows the model', async () => {
    const w = world();
    const path = put(w, L);
    const first = source(w);
    await first.src.start();
    await first.src.idle();
    const size = statSync(path).size;
    const consumed = readFileSync(path).lastIndexOf(10) + 1;
    expect(w.offsets.get(path)?.offset).toBe(consumed); // the unfinished line is not consumed
    expect(w.usage.totals()).toMatchObject({ records: 1, costMicros: COST.l1 });
    expect(size).toBeGreaterThan(consumed);

    // Codex finishes the line.
    appendFileSync(path, readFileSync(join(FIXTURES, 'live-tail.txt')));
    first.src.kick(path);
    await first.src.idle();
    expect(w.usage.totals()).toMatchObject({ records: 2, costMicros: COST.l1 + COST.l2 });
    expect(w.sessions.get(L)?.model).toBe('gpt-5.4');
    await first.src.stop();
    const errorsBefore = errors(w).length;
    expect(errorsBefore).toBe(1); // the cut record, once

    // musher restarts; meanwhile the session answered once more. Its turn_context is before the stored offset.
    const more =
      JSON.stringify({
        timestamp: '2026-11-29T21:02:00.000Z',
        ordinal: 16,
        type: 'event_msg',
        payload: {
          type: 'token_count',
          info: {
            total_token_usage: { input_tokens: 2200, cached_input_tokens: 1400, cache_write_input_tokens: 0, output_tokens: 90, reasoning_output_tokens: 0, total_tokens: 2290 },
            last_token_usage: { input_tokens: 1000, cached_input_tokens: 900, cache_write_input_tokens: 0, output_tokens: 40, reasoning_output_tokens: 0, total_tokens: 1040 },
            last_usage_includes_reasoning: false,
            model_context_window: 258400,
          },
          rate_limits: null,
        },
      }) + '\n';
    const before = statSync(path).size;
    appendFileSync(path, more);
    const second = source(w);
    await second.src.start();
    await second.src.idle();
    expect(second.follower.bytesRead).toBe(Buffer.byteLength(more)); // only the new bytes, in every file
    // And it says so: what the restart had left to read was those bytes, all read now (not the whole file again).
    expect(second.src.progress()).toEqual({ backfilling: false, pendingBytes: 0 });
    // 100 × 2.5 + 900 × 0.25 + 40 × 15 = 1075 µ$, priced as gpt-5.4 although no turn_context was re-read.
    expect(w.usage.totals()).toMatchObject({ records: 3, unpricedRecords: 0, costMicros: COST.l1 + COST.l2 + 1075 });
    expect(w.offsets.get(path)?.offset).toBe(before + Buffer.byteLength(more));
    expect(errors(w)).toHaveLength(errorsBefore);
  });

  it('an older fork and its sub-agent read before their parent, and the parent showing up later, count the same', async () => {
    const w = world();
    put(w, LC);
    put(w, LS);
    const { src } = source(w);
    await src.start();
    await src.idle();
    // Without LP's rollout its copied history is all there is of its two responses: counted once, under the fork.
    const family = COST.lp1 + COST.lp2 + COST.lc + COST.ls;
    expect(w.usage.totals()).toMatchObject({ records: 4, costMicros: family });
    expect(w.usage.sessionSpend(LC)).toMatchObject({ records: 3 });
    expect(w.walls.recent()).toEqual([]); // LP's wall is after the fork point

    src.kick(put(w, LP));
    await src.idle();
    expect(w.usage.totals()).toMatchObject({ records: 4, costMicros: family });
    expect(w.walls.recent()).toHaveLength(1);
  });

  it('what is known before the listing completes is read oldest first: a parent before its forks', async () => {
    const w = world();
    const paths = [LS, LC, LP].map((t) => put(w, t));
    const { src } = source(w);
    for (const path of paths) src.kick(path); // a hook's kicks, arriving before the watcher is ready
    await src.start();
    await src.idle();
    expect([LP, LC, LS].map((t) => w.usage.sessionSpend(t).records)).toEqual([2, 1, 1]);
  });

  it('a live fork of a session already read adds only its own turn, and none of the copy\'s limits', async () => {
    const w = world();
    put(w, LP);
    const { src } = source(w);
    await src.start();
    await src.idle();
    expect(w.usage.totals()).toMatchObject({ records: 2, costMicros: COST.lp1 + COST.lp2 });
    const samplesBefore = w.bars.samples('openai', `codex-dir:${dirname(w.sessionsDir)}`, 'codex_primary', 0).length;

    // Codex writes the fork in two goes: the copy, then (seconds later) its own turn.
    const path = join(w.sessionsDir, fixtureRel(LC));
    const lines = fixtureLines(LC);
    appendFileSync(path, lines.slice(0, 12).join('\n') + '\n');
    src.kick(path);
    await src.idle();
    expect(w.usage.totals()).toMatchObject({ records: 2, costMicros: COST.lp1 + COST.lp2 });
    expect(w.bars.samples('openai', `codex-dir:${dirname(w.sessionsDir)}`, 'codex_primary', 0)).toHaveLength(samplesBefore);
    expect(w.sessions.get(LC)).toMatchObject({ harness: 'codex', transcriptPath: path });

    appendFileSync(path, lines.slice(12).join('\n') + '\n');
    src.kick(path);
    await src.idle();
    expect(w.usage.totals()).toMatchObject({ records: 3, costMicros: COST.lp1 + COST.lp2 + COST.lc });
    expect(w.usage.sessionSpend(LC)).toMatchObject({ records: 1, costMicros: COST.lc });

    // A Codex 0.169 fork copies nothing: it adds its own turn, whatever was read before.
    put(w, P);
    src.kick(put(w, C));
    src.kick(join(w.sessionsDir, fixtureRel(P)));
    await src.idle();
    expect(w.usage.sessionSpend(C)).toMatchObject({ records: 1, costMicros: COST.c });
    expect(w.usage.sessionSpend(P)).toMatchObject({ records: 2, costMicros: COST.p1 + COST.p2 });
  });

  it('a restart in the middle of an older fork\'s copy: the rest of the copy still collapses onto the parent', async () => {
    const w = world();
    put(w, LP);
    const path = join(w.sessionsDir, fixtureRel(LC));
    mkdirSync(dirname(path), { recursive: true });
    const lines = fixtureLines(LC);
    appendFileSync(path, lines.slice(0, 8).join('\n') + '\n'); // the fork's session_meta and the copy of LP's first response
    const first = source(w);
    await first.src.start();
    await first.src.idle();
    await first.src.stop();
    expect(w.usage.totals()).toMatchObject({ records: 2, costMicros: COST.lp1 + COST.lp2 });

    appendFileSync(path, lines.slice(8).join('\n') + '\n'); // the copy of LP's second response, then the fork's own turn
    const second = source(w);
    await second.src.start();
    await second.src.idle();
    expect(w.usage.totals()).toMatchObject({ records: 3, costMicros: COST.lp1 + COST.lp2 + COST.lc });
    // The rest of the copy is still taken as a copy: no sample from it.
    const fromCopy = w.bars.samples('openai', `codex-dir:${dirname(w.sessionsDir)}`, 'codex_primary', 0).filter((s) => s.observedAt >= ts('2026-11-28T09:30:00Z') && s.observedAt < ts('2026-11-28T09:30:01Z'));
    expect(fromCopy).toEqual([]);
  });

  it('rollouts recorded from the real Codex 0.169.0: a session, its fork and a fork of the fork', async () => {
    const w = world();
    const recorded = join(FIXTURES, 'recorded', 'sessions');
    const ids = ['01a22964-438c-70b2-8697-769347912c2f', '01a22964-4bb3-7613-872c-967096509ffe', '01a22964-4d09-7693-8e3c-d29fd7ca1ff9'];
    for (const id of ids) put(w, id, recorded);
    const { src } = source(w);
    await src.start();
    await src.idle();
    // gpt-5.1-codex, the model the facts' runs use: four responses, all priced.
    const cost = gpt51codex(1001, 200, 50) + gpt51codex(2400, 1800, 120) + gpt51codex(3900, 3300, 200) + gpt51codex(8000, 7600, 150);
    expect(w.usage.totals()).toMatchObject({ records: 4, unpricedRecords: 0, costMicros: cost, inputTokens: 801 + 600 + 600 + 400, cacheReadTokens: 200 + 1800 + 3300 + 7600 });
    expect(ids.map((id) => w.usage.sessionSpend(id).records)).toEqual([2, 1, 1]);
    expect(w.walls.recent()).toEqual([expect.objectContaining({ sessionId: ids[0], window: 'codex_primary', resetsAtMs: 1795994366_000 })]);
    expect(w.bars.all().find((b) => b.provider === 'openai' && b.window === 'codex_primary')).toMatchObject({ usedPct: 100 });
    expect(errors(w)).toEqual([]);
  });

  it('follows rollouts under its sessions folder, and those a hook names under another CODEX_HOME', async () => {
    const w = world();
    const { src } = source(w);
    const rel = fixtureRel(L);
    const name = rel.split('/').pop()!;
    expect(src.owns(join(w.sessionsDir, rel))).toBe(true);
    expect(src.owns(join(w.sessionsDir, '2026', '11', '29', 'notes.jsonl'))).toBe(false);
    expect(src.owns(join(w.dir, '.claude', 'projects', '-p', `${L}.jsonl`))).toBe(false);
    expect(src.owns(join(w.dir, 'elsewhere', name))).toBe(false);
    expect(src.detect()).toBe(true);
    await src.start();

    const stray = join(w.dir, 'elsewhere', name);
    mkdirSync(join(w.dir, 'elsewhere'));
    copyFileSync(join(FIXTURES, 'sessions', rel), stray);
    src.kick(stray);
    await src.idle();
    expect(w.usage.totals().records).toBe(0);
    expect(w.offsets.get(stray)).toBeNull();

    // Codex running with a CODEX_HOME musher was not started with: its hook names the rollout, so it is read.
    const otherHome = join(w.dir, 'other-codex-home');
    const other = join(otherHome, 'sessions', rel);
    mkdirSync(dirname(other), { recursive: true });
    copyFileSync(join(FIXTURES, 'sessions', rel), other);
    expect(src.owns(other)).toBe(true);
    src.kick(other);
    src.kick(other);
    await src.idle();
    expect(w.usage.totals()).toMatchObject({ records: 1, costMicros: COST.l1 });
    expect(w.logs.filter((l) => l.level === 'warn' && l.message.includes(otherHome))).toHaveLength(1);
  });

  it('without a Codex home it watches nothing, creates nothing, and a kick still reads the rollout it names', async () => {
    const w = world();
    rmSync(join(w.dir, 'codex-home'), { recursive: true, force: true });
    const { src } = source(w);
    expect(src.detect()).toBe(false);
    await src.start();
    await src.idle();
    expect(readdirSync(w.dir)).not.toContain('codex-home');
    src.kick(put(w, L));
    await src.idle();
    expect(w.usage.totals()).toMatchObject({ records: 1, costMicros: COST.l1 });
  });
});
