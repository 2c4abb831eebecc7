import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  CodexRolloutReader,
  codexSessionsDir,
  codexWindowName,
  initialCodexRolloutState,
  nextCodexRolloutState,
  parseCodexRolloutLine,
  threadIdFromRolloutPath,
  type CodexLimits,
  type CodexRolloutState,
  type ParsedRolloutLine,
} from '../../harnesses/codex/rollout.js';
import type { UsageRecord } from '../../core/usage.js';
import { C, FIVE_H_RESET, G, L, LC, LP, LS, P } from '../support/codex-fixture-threads.js';
import { ZERO_TOKEN_COUNTS } from '../support/usage-tokens.js';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'codex');
const SESSIONS = join(FIXTURES, 'sessions');
const RECORDED = join(FIXTURES, 'recorded', 'sessions');
// The turns of Codex 0.169's threads (the threads: codex-fixture-threads.ts)
const T1 = '019ad0f1-6a10-7e21-8b3c-5d4e3f2a1b01';
const T2 = '019ad0f6-0c22-7f13-9a4b-6e5f4a3b2c02';
const T3 = '019ad11a-4d35-7a04-8c5d-7f6a5b4c3d03';
const T4 = '019ad105-2e47-7b95-9d6e-8a7b6c5d4e04';
const CWD = '/home/u/proj';
const WEEK_RESET = 1796240930_000;

function fileOf(thread: string, root = SESSIONS): string {
  for (const day of ['28', '29']) {
    const dir = join(root, '2026', '11', day);
    let names: string[] = [];
    try {
      names = readdirSync(dir);
    } catch {
      continue;
    }
    const name = names.find((n) => n.endsWith(`${thread}.jsonl`));
    if (name !== undefined) return join(dir, name);
  }
  throw new Error(`no fixture for ${thread}`);
}

/** Lines of a fixture exactly as the follower hands them over (complete lines, no newline). */
function lines(file: string): string[] {
  const all = readFileSync(file, 'utf8').split('\n');
  all.pop(); // what follows the last newline is not a complete line
  return all;
}

/** Reads a whole fixture in order, as the adapter does; result i is line i+1. */
function readAll(file: string, state?: CodexRolloutState): { parsed: ParsedRolloutLine[]; reader: CodexRolloutReader } {
  const reader = new CodexRolloutReader(file, state);
  return { parsed: lines(file).map((l) => reader.read(l)), reader };
}

const usageKeys = (parsed: ParsedRolloutLine[]) => parsed.flatMap((p) => (p.kind === 'usage' ? [p.usage.dedupKey] : []));
const ts = (iso: string) => Date.parse(iso);
const IGNORED: ParsedRolloutLine = { kind: 'ignored' };

function usage(over: Partial<UsageRecord> & Pick<UsageRecord, 'dedupKey' | 'model' | 'timestampMs'>): UsageRecord {
  return {
    source: 'codex-rollout',
    sessionId: P,
    cwd: CWD,
    ...ZERO_TOKEN_COUNTS,
    serviceTier: null,
    inferenceGeo: null,
    ...over,
  };
}

const fiveHour = (usedPct: number, resetsAtMs = FIVE_H_RESET) =>
  ({ window: 'codex_primary', slot: 'primary', limitId: 'codex', usedPct, resetsAtMs, windowMinutes: 300 }) as const;
const week = (usedPct: number) => ({ window: 'codex_secondary', slot: 'secondary', limitId: 'codex', usedPct, resetsAtMs: WEEK_RESET, windowMinutes: 10080 }) as const;

function limits(sessionId: string, at: string, bars: CodexLimits['bars'], extra: Partial<CodexLimits> = {}): CodexLimits {
  return { sessionId, observedAtMs: ts(at), limitId: 'codex', limitName: null, bars, credits: null, planType: null, limitReached: null, ...extra };
}

const P_TURN1 = usage({
  dedupKey: `codex:${P}:1001/200/0/50/10/1051`,
  model: 'gpt-5.4',
  timestampMs: ts('2026-11-29T19:40:04.873Z'),
  inputTokens: 801,
  cacheReadTokens: 200,
  outputTokens: 50,
});
const P_TURN2 = usage({
  dedupKey: `codex:${P}:3401/2000/0/170/74/3571`,
  model: 'gpt-5.1-codex',
  timestampMs: ts('2026-11-29T19:45:10.223Z'),
  inputTokens: 600,
  cacheReadTokens: 1800,
  outputTokens: 120,
});
const LIMIT_MSG =
  'You’ve hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro), visit https://chatgpt.com/settings/usage to purchase more credits or try again at 8:48 PM.';

describe('parseCodexRolloutLine: a Codex 0.169 session, read in order (shared/facts/codex-cli.md §4, §5)', () => {
  const { parsed } = readAll(fileOf(P));
  const cases: Array<[lineNo: number, what: string, expected: ParsedRolloutLine]> = [
    [1, 'session_meta', { kind: 'session', from: 'session_meta', sessionId: P, cwd: CWD, timestampMs: ts('2026-11-29T19:40:00.120Z'), replayed: false }],
    [2, 'task_started', IGNORED],
    [5, 'world_state', IGNORED],
    [
      6,
      'turn_context: the model',
      { kind: 'session', from: 'turn_context', sessionId: P, cwd: CWD, timestampMs: ts('2026-11-29T19:40:00.135Z'), model: 'gpt-5.4', turnId: T1, replayed: false },
    ],
    [7, 'thread_settings_applied', IGNORED],
    [12, 'token_usage_record: the same response as the token_count after it, counted there', IGNORED],
    [
      13,
      'token_count: last_token_usage with cached input taken out of input; rate limits and credits',
      {
        kind: 'usage',
        usage: P_TURN1,
        limits: limits(P, '2026-11-29T19:40:04.873Z', [fiveHour(7), week(2)], { credits: { hasCredits: true, unlimited: false, balance: '12.34' } }),
        limitsProblem: null,
        replayed: false,
      },
    ],
    [14, 'task_complete without error', IGNORED],
    [
      17,
      'turn_context: another model (a resumed session)',
      { kind: 'session', from: 'turn_context', sessionId: P, cwd: CWD, timestampMs: ts('2026-11-29T19:45:02.405Z'), model: 'gpt-5.1-codex', turnId: T2, replayed: false },
    ],
    [
      23,
      'token_count of turn 2, on that model',
      { kind: 'usage', usage: P_TURN2, limits: limits(P, '2026-11-29T19:45:10.223Z', [fiveHour(9), week(3)]), limitsProblem: null, replayed: false },
    ],
    [
      30,
      'the 429: the last info repeated (so the same key: nothing new), the 429 headers\' limits, primary at 100',
      {
        kind: 'usage',
        usage: { ...P_TURN2, model: 'gpt-5.4', timestampMs: ts('2026-11-29T20:30:01.020Z') },
        limits: limits(P, '2026-11-29T20:30:01.020Z', [fiveHour(100)]),
        limitsProblem: null,
        replayed: false,
      },
    ],
    [
      31,
      'task_complete with codex_error_info usage_limit_exceeded: a wall in the window the 429 showed full',
      {
        kind: 'wall',
        replayed: false,
        wall: {
          source: 'codex-rollout',
          dedupKey: `codex:wall:${T3}`,
          sessionId: P,
          timestampMs: ts('2026-11-29T20:30:01.031Z'),
          window: 'codex_primary',
          resetsAtMs: FIVE_H_RESET,
          message: LIMIT_MSG,
        },
      },
    ],
  ];
  it.each(cases)('line %i: %s', (lineNo, _what, expected) => {
    expect(parsed[lineNo - 1]).toEqual(expected);
  });

  it('yields two distinct usage keys, one wall, and no errors', () => {
    expect(new Set(usageKeys(parsed))).toEqual(new Set([P_TURN1.dedupKey, P_TURN2.dedupKey]));
    expect(parsed.filter((p) => p.kind === 'wall')).toHaveLength(1);
    expect(parsed.filter((p) => p.kind === 'error')).toEqual([]);
  });
});

describe('forks', () => {
  it('a Codex 0.169 fork holds only its own lines: its own thread, going on from the parent\'s running total', () => {
    const { parsed, reader } = readAll(fileOf(C));
    expect(parsed[0]).toEqual({
      kind: 'session',
      from: 'session_meta',
      sessionId: C,
      cwd: CWD,
      timestampMs: ts('2026-11-29T20:05:00.300Z'),
      forkedFrom: P,
      forkOrdinal: 24,
      replayed: false,
    });
    expect(parsed.filter((p) => p.kind !== 'ignored')).toEqual([
      parsed[0],
      { kind: 'session', from: 'turn_context', sessionId: C, cwd: CWD, timestampMs: ts('2026-11-29T20:05:00.325Z'), model: 'gpt-5.4', turnId: T4, replayed: false },
      {
        kind: 'usage',
        usage: usage({
          sessionId: C,
          dedupKey: `codex:${C}:7301/5300/0/370/164/7671`,
          model: 'gpt-5.4',
          timestampMs: ts('2026-11-29T20:05:05.403Z'),
          inputTokens: 600,
          cacheReadTokens: 3300,
          outputTokens: 200,
        }),
        limits: limits(C, '2026-11-29T20:05:05.403Z', [fiveHour(12), week(4)]),
        limitsProblem: null,
        replayed: false,
      },
    ]);
    expect(reader.state).toMatchObject({ sessionId: C, forkedFrom: P, forkOrdinal: 24, replayOpen: false });
    expect(usageKeys(readAll(fileOf(G)).parsed)).toEqual([`codex:${G}:15301/12900/0/520/204/15821`]);
  });

  it('a 0.169 fork and its parent answering alike after the fork (same running totals) are two responses', () => {
    const sameAnswer = JSON.stringify({
      timestamp: '2026-11-29T20:40:00.000Z',
      ordinal: 40,
      type: 'event_msg',
      payload: {
        type: 'token_count',
        info: {
          total_token_usage: { input_tokens: 7301, cached_input_tokens: 5300, cache_write_input_tokens: 0, output_tokens: 370, reasoning_output_tokens: 164, total_tokens: 7671 },
          last_token_usage: { input_tokens: 3900, cached_input_tokens: 3300, cache_write_input_tokens: 0, output_tokens: 200, reasoning_output_tokens: 90, total_tokens: 4100 },
        },
        rate_limits: null,
      },
    });
    const inParent = readAll(fileOf(P)).reader;
    const inFork = readAll(fileOf(C)).reader;
    const a = inParent.read(sameAnswer);
    const b = inFork.read(sameAnswer);
    expect(a.kind === 'usage' && b.kind === 'usage' && a.usage.dedupKey !== b.usage.dedupKey).toBe(true);
  });

  it('a line below a 0.169 fork\'s fork point would be a copy of the parent\'s: not the fork\'s own', () => {
    const file = fileOf(C);
    const reader = new CodexRolloutReader(file);
    reader.read(lines(file)[0]!);
    const copied = lines(fileOf(P))[12]!; // P's turn-1 token_count, ordinal 12 < 24
    expect(reader.read(copied)).toEqual(IGNORED);
  });

  it('an older Codex fork copies its parent, re-stamped at fork time: copies get their originals\' keys and are flagged', () => {
    const parent = usageKeys(readAll(fileOf(LP)).parsed);
    expect(new Set(parent)).toEqual(new Set([`codex:${LP}:1200/0/0/80/20/1280`, `codex:${LP}:4200/2400/0/230/70/4430`]));

    const { parsed, reader } = readAll(fileOf(LC));
    expect(parsed[0]).toMatchObject({ kind: 'session', from: 'session_meta', sessionId: LC, forkedFrom: LP });
    expect(parsed[0]).not.toHaveProperty('forkOrdinal');
    expect(parsed[1]).toEqual(IGNORED); // the parent's session_meta, copied: not this file's thread
    const copy = parsed.slice(1, 12);
    for (const p of copy) if (p.kind !== 'ignored') expect(p, JSON.stringify(p)).toMatchObject({ replayed: true });
    expect(usageKeys(copy)).toEqual([parent[0], parent[1], parent[2]]);
    // A copy is this file's session's record if it is read first; its model came with it (a copied turn_context).
    expect(copy.find((p) => p.kind === 'usage')).toMatchObject({ usage: { model: 'gpt-5', sessionId: LC } });

    const own = parsed.slice(12).filter((p) => p.kind !== 'ignored');
    expect(own.map((p) => ('replayed' in p ? p.replayed : null))).toEqual([false, false]);
    expect(own[1]).toMatchObject({
      kind: 'usage',
      usage: { sessionId: LC, dedupKey: `codex:${LP}:8200/5900/0/330/100/8530`, model: 'gpt-5', inputTokens: 500, cacheReadTokens: 3500, outputTokens: 100 },
    });
    expect(reader.state).toMatchObject({ forkedFrom: LP, forkOrdinal: null, replayOpen: false });
  });

  it('an older Codex sub-agent of a fork: alone it can only scope to its parent; with the root resolved (the adapter does) its copy collapses', () => {
    expect(usageKeys(readAll(fileOf(LS)).parsed)[0]).toBe(`codex:${LC}:1200/0/0/80/20/1280`);

    const file = fileOf(LS);
    const reader = new CodexRolloutReader(file);
    const all = lines(file);
    expect(reader.read(all[0]!)).toMatchObject({ forkedFrom: LC });
    reader.state = { ...reader.state, lineageId: LP };
    expect(usageKeys(all.slice(1).map((l) => reader.read(l)))).toEqual([
      `codex:${LP}:1200/0/0/80/20/1280`,
      `codex:${LP}:1200/0/0/80/20/1280`,
      `codex:${LP}:4200/2400/0/230/70/4430`,
      `codex:${LP}:8200/5900/0/330/100/8530`,
      `codex:${LP}:13200/10700/0/390/110/13590`,
    ]);
  });

  it('a sub-agent names its parent in source.subagent.thread_spawn when forked_from_id is absent', () => {
    const line = JSON.stringify({
      timestamp: '2026-11-29T20:00:00.000Z',
      type: 'session_meta',
      payload: { id: G, cwd: CWD, source: { subagent: { thread_spawn: { parent_thread_id: C, depth: 1 } } } },
    });
    expect(parseCodexRolloutLine(line, { filePath: '/x/rollout-a.jsonl' })).toMatchObject({ kind: 'session', sessionId: G, forkedFrom: C });
  });

  it('copies keeping their original (older) times are flagged too; the first later line ends the copy', () => {
    let state = initialCodexRolloutState(`/s/rollout-2026-11-28T09-30-00-${LC}.jsonl`);
    const read = (obj: object) => {
      const parsed = parseCodexRolloutLine(JSON.stringify(obj), { filePath: state.filePath, state });
      state = nextCodexRolloutState(state, parsed);
      return parsed;
    };
    const rl = (p: number) => ({ primary: { used_percent: p, window_minutes: 300, resets_at: 1795870800 } });
    read({ timestamp: '2026-11-28T09:30:00.200Z', type: 'session_meta', payload: { id: LC, cwd: CWD, forked_from_id: LP } });
    expect(read({ timestamp: '2026-11-28T09:00:03.510Z', type: 'event_msg', payload: { type: 'token_count', info: null, rate_limits: rl(31) } })).toMatchObject({ kind: 'bars', replayed: true });
    expect(read({ timestamp: '2026-11-28T09:30:09.000Z', type: 'event_msg', payload: { type: 'token_count', info: null, rate_limits: rl(38) } })).toMatchObject({ kind: 'bars', replayed: false });
    expect(state.replayOpen).toBe(false);
  });

  it('a session that is not a fork has no replay', () => {
    for (const t of [P, L, LP]) expect(readAll(fileOf(t)).parsed.some((p) => 'replayed' in p && p.replayed)).toBe(false);
  });

  it('the older Codex wall: an error event with codex_error_info, no window at 100 % before it', () => {
    const { parsed } = readAll(fileOf(LP));
    expect(parsed.filter((p) => p.kind === 'wall')).toEqual([
      {
        kind: 'wall',
        replayed: false,
        wall: {
          source: 'codex-rollout',
          dedupKey: `codex:wall:${LP}:2026-11-28T09:40:00.900Z`,
          sessionId: LP,
          timestampMs: ts('2026-11-28T09:40:00.900Z'),
          window: null,
          resetsAtMs: null,
          message: "You've hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro) or try again in 1 hour 20 minutes.",
        },
      },
    ]);
  });
});

describe('rollouts recorded from the real Codex 0.169.0 (custom provider, fake server)', () => {
  const RP = '01a22964-438c-70b2-8697-769347912c2f';
  const RC = '01a22964-4bb3-7613-872c-967096509ffe';
  const RG = '01a22964-4d09-7693-8e3c-d29fd7ca1ff9';
  it('parses every line into a known kind; the fork and the fork of the fork have their own keys; the 429 is a wall', () => {
    const all = [RP, RC, RG].map((t) => readAll(fileOf(t, RECORDED)).parsed);
    for (const parsed of all) expect(parsed.filter((p) => p.kind === 'error')).toEqual([]);
    const [p, c, g] = all as [ParsedRolloutLine[], ParsedRolloutLine[], ParsedRolloutLine[]];
    expect(usageKeys(p)).toEqual([`codex:${RP}:1001/200/0/50/10/1051`, `codex:${RP}:3401/2000/0/170/74/3571`, `codex:${RP}:3401/2000/0/170/74/3571`]);
    expect(usageKeys(c)).toEqual([`codex:${RC}:7301/5300/0/370/164/7671`]);
    expect(usageKeys(g)).toEqual([`codex:${RG}:15301/12900/0/520/204/15821`]);
    expect(p.find((x) => x.kind === 'usage')).toMatchObject({ usage: { model: 'gpt-5.1-codex', inputTokens: 801, cacheReadTokens: 200, outputTokens: 50, cwd: '/home/u/proj' } });
    expect(c[0]).toMatchObject({ kind: 'session', forkedFrom: RP, forkOrdinal: 24 });
    expect(g[0]).toMatchObject({ kind: 'session', forkedFrom: RC, forkOrdinal: 36 });
    expect(p.filter((x) => x.kind === 'wall')).toEqual([
      expect.objectContaining({ wall: expect.objectContaining({ sessionId: RP, window: 'codex_primary', resetsAtMs: 1795994366_000 }) }),
    ]);
  });
});

describe('parseCodexRolloutLine: single lines', () => {
  const FILE = `/home/u/.codex/sessions/2026/11/29/rollout-2026-11-29T21-00-00-${L}.jsonl`;
  const at = '2026-11-29T21:00:02.500Z';
  const state: CodexRolloutState = { ...initialCodexRolloutState(FILE), metaSeen: true, cwd: CWD, model: 'gpt-5.4', turnId: 'turn-9', lastAtMs: ts(at) };
  const tokenCount = (info: unknown, rateLimits: unknown = null) =>
    JSON.stringify({ timestamp: at, ordinal: 7, type: 'event_msg', payload: { type: 'token_count', info, rate_limits: rateLimits } });
  const u = (i: number, c: number, o: number, r: number, w = 0, total = i + o) => ({
    input_tokens: i,
    cached_input_tokens: c,
    cache_write_input_tokens: w,
    output_tokens: o,
    reasoning_output_tokens: r,
    total_tokens: total,
  });
  const parse = (line: string, s: CodexRolloutState | undefined = state) => parseCodexRolloutLine(line, { filePath: FILE, state: s });

  const cases: Array<[what: string, line: string, expected: unknown]> = [
    ['blank line', '   ', IGNORED],
    ['not JSON (a torn write)', '{"timestamp":"2026-11-29T21:00:0', { kind: 'error', message: expect.stringMatching(/^codex rollout .*: line is not valid JSON/) }],
    ['an array', '[1,2]', { kind: 'error', message: expect.stringContaining('not a record object (array)') }],
    ['no type', '{"timestamp":"x","payload":{}}', { kind: 'error', message: expect.stringContaining('type:') }],
    ['unknown record type', '{"timestamp":"2026-11-29T21:00:00Z","type":"world_state","payload":{"x":1}}', IGNORED],
    ['unknown event', JSON.stringify({ timestamp: at, type: 'event_msg', payload: { type: 'agent_reasoning', text: 'hm' } }), IGNORED],
    [
      'reasoning already inside output (total = input + output)',
      tokenCount({ total_token_usage: u(100, 0, 40, 30), last_token_usage: u(100, 0, 40, 30) }),
      { kind: 'usage', usage: expect.objectContaining({ inputTokens: 100, outputTokens: 40 }) },
    ],
    [
      'reasoning counted apart (total = input + output + reasoning): added to output',
      tokenCount({ total_token_usage: u(100, 0, 40, 30, 0, 170), last_token_usage: u(100, 0, 40, 30, 0, 170) }),
      { kind: 'usage', usage: expect.objectContaining({ inputTokens: 100, outputTokens: 70 }) },
    ],
    [
      'cache writes: inside input, priced as cache writes',
      tokenCount({ total_token_usage: u(1000, 600, 10, 0, 300), last_token_usage: u(1000, 600, 10, 0, 300) }),
      { kind: 'usage', usage: expect.objectContaining({ inputTokens: 100, cacheReadTokens: 600, cacheWrite5mTokens: 300, outputTokens: 10 }) },
    ],
    [
      'no total_token_usage: keyed by the line itself',
      tokenCount({ last_token_usage: u(10, 0, 5, 0) }),
      { kind: 'usage', usage: expect.objectContaining({ dedupKey: `codex:${L}:last:7:10/0/0/5/0/15` }) },
    ],
    ['info null, no limits', tokenCount(null), IGNORED],
    [
      'a context-window fill (no billable tokens): nothing but the limits',
      tokenCount({ total_token_usage: { total_tokens: 258400 }, last_token_usage: { total_tokens: 1200 } }, { primary: { used_percent: 3, window_minutes: 300, resets_at: 1796000000 } }),
      { kind: 'bars', bars: [expect.objectContaining({ window: 'codex_primary', usedPct: 3 })] },
    ],
    [
      'negative count',
      tokenCount({ total_token_usage: u(-1, 0, 5, 0), last_token_usage: u(-1, 0, 5, 0) }),
      { kind: 'error', message: expect.stringContaining('token_count info: total_token_usage.input_tokens') },
    ],
    [
      'broken rate_limits do not cost the usage',
      tokenCount({ total_token_usage: u(10, 0, 5, 0), last_token_usage: u(10, 0, 5, 0) }, { primary: { used_percent: 'lots' } }),
      { kind: 'usage', limits: null, limitsProblem: expect.stringContaining('rate_limits: primary.used_percent') },
    ],
    [
      'older rollouts: resets_in_seconds, from the line time',
      tokenCount(null, { primary: { used_percent: 40, window_minutes: 300, resets_in_seconds: 600 } }),
      { kind: 'bars', bars: [expect.objectContaining({ window: 'codex_primary', usedPct: 40, resetsAtMs: ts(at) + 600_000 })] },
    ],
    [
      'a window with used_percent 0 and nothing else is absent; a window already reset is dropped',
      tokenCount(null, {
        primary: { used_percent: 0, window_minutes: null, resets_at: null },
        secondary: { used_percent: 90, window_minutes: 10080, resets_at: Math.floor(ts(at) / 1000) - 1 },
        plan_type: 'plus',
      }),
      { kind: 'bars', bars: [], planType: 'plus', credits: null },
    ],
    [
      'one weekly window in primary (a plan with no 5-hour window): the slot names it, windowMinutes says what it is',
      tokenCount(null, { plan_type: 'prolite', primary: { used_percent: 99, window_minutes: 10080, resets_at: 1796240930 } }),
      { kind: 'bars', bars: [{ window: 'codex_primary', slot: 'primary', limitId: 'codex', usedPct: 99, resetsAtMs: WEEK_RESET, windowMinutes: 10080 }], planType: 'prolite' },
    ],
    [
      'another limit family',
      tokenCount(null, { limit_id: 'codex_bengalfox', primary: { used_percent: 5, window_minutes: 300, resets_at: 1796000000 } }),
      { kind: 'bars', limitId: 'codex_bengalfox', bars: [expect.objectContaining({ window: 'codex_bengalfox_primary' })] },
    ],
    [
      'an error event with codex_error_info usage_limit_exceeded',
      JSON.stringify({ timestamp: at, type: 'event_msg', payload: { type: 'error', message: 'You’ve hit your usage limit.', codex_error_info: 'usage_limit_exceeded' } }),
      {
        kind: 'wall',
        replayed: false,
        wall: { source: 'codex-rollout', dedupKey: 'codex:wall:turn-9', sessionId: L, timestampMs: ts(at), window: null, resetsAtMs: null, message: 'You’ve hit your usage limit.' },
      },
    ],
    [
      'codex_error_info as an object variant',
      JSON.stringify({ timestamp: at, type: 'event_msg', payload: { type: 'error', message: 'x', codex_error_info: { usage_limit_exceeded: {} } } }),
      { kind: 'wall' },
    ],
    [
      'an older rollout: only the sentence',
      JSON.stringify({ timestamp: at, type: 'event_msg', payload: { type: 'error', message: "You've hit your usage limit. Upgrade to Plus to continue using Codex." } }),
      { kind: 'wall' },
    ],
    [
      'other errors are not walls',
      JSON.stringify({ timestamp: at, type: 'event_msg', payload: { type: 'error', message: 'stream disconnected', codex_error_info: { response_stream_disconnected: { http_status_code: 502 } } } }),
      IGNORED,
    ],
    [
      'a task_complete with another error',
      JSON.stringify({ timestamp: at, type: 'event_msg', payload: { type: 'task_complete', turn_id: 't', error: { message: 'x', codex_error_info: 'context_window_exceeded' } } }),
      IGNORED,
    ],
  ];
  it.each(cases)('%s', (_what, line, expected) => {
    expect(parse(line)).toMatchObject(expected as object);
  });

  it('without state: the thread from the file name, the model unknown, the key scoped to the thread', () => {
    expect(parseCodexRolloutLine(tokenCount({ total_token_usage: u(10, 0, 5, 0), last_token_usage: u(10, 0, 5, 0) }), { filePath: FILE })).toMatchObject({
      kind: 'usage',
      usage: { sessionId: L, model: 'codex-unknown-model', dedupKey: `codex:${L}:10/0/0/5/0/15`, cwd: null },
    });
  });

  it('no thread anywhere: an error, not a throw', () => {
    const r = parseCodexRolloutLine(tokenCount({ last_token_usage: u(1, 0, 1, 0) }), { filePath: '/tmp/rollout-x.jsonl' });
    expect(r).toMatchObject({ kind: 'error', message: expect.stringContaining('names no thread') });
  });

  it('the error event and the task_complete of one failed turn are one wall', () => {
    const reader = new CodexRolloutReader(FILE, state);
    const a = reader.read(JSON.stringify({ timestamp: at, type: 'event_msg', payload: { type: 'error', message: 'm', codex_error_info: 'usage_limit_exceeded' } }));
    const b = reader.read(
      JSON.stringify({ timestamp: at, type: 'event_msg', payload: { type: 'task_complete', turn_id: 'turn-9', error: { message: 'm', codex_error_info: 'usage_limit_exceeded' } } }),
    );
    expect(a.kind === 'wall' && b.kind === 'wall' && a.wall.dedupKey === b.wall.dedupKey).toBe(true);
  });

  it('never throws on junk', () => {
    for (const junk of ['{', 'null', '"x"', '{"type":"event_msg"}', '{"type":"event_msg","payload":[]}', '{"type":"session_meta","payload":7}', '{"type":"turn_context","payload":{"model":3}}']) {
      expect(() => parse(junk)).not.toThrow();
      expect(['error', 'ignored']).toContain(parse(junk).kind);
    }
  });
});

describe('the live fixture: a cut record and a half-written last line', () => {
  it('the cut (but newline-ended) record is an error; the unfinished last line is not handed over at all', () => {
    const { parsed } = readAll(fileOf(L));
    expect(parsed.map((p) => p.kind).filter((k) => k !== 'ignored')).toEqual(['session', 'session', 'usage', 'error']);
    const tail = readFileSync(join(FIXTURES, 'live-tail.txt'), 'utf8');
    const whole = readFileSync(fileOf(L), 'utf8') + tail;
    const last = whole.trimEnd().split('\n').pop()!;
    expect(parseCodexRolloutLine(last, { filePath: fileOf(L) })).toMatchObject({ kind: 'usage', usage: { inputTokens: 200, cacheReadTokens: 500, outputTokens: 30 } });
  });
});

describe('names and paths', () => {
  it.each([
    ['codex', 'primary', 'codex_primary'],
    ['codex', 'secondary', 'codex_secondary'],
    ['codex_bengalfox', 'primary', 'codex_bengalfox_primary'],
    ['codex-bengal fox', 'secondary', 'codex_bengal_fox_secondary'],
  ] as const)('codexWindowName(%s, %s) = %s', (limitId, slot, name) => {
    expect(codexWindowName(limitId, slot)).toBe(name);
  });

  it('thread ids from rollout paths', () => {
    expect(threadIdFromRolloutPath(`/h/.codex/sessions/2026/11/29/rollout-2026-11-29T19-40-00-${P}.jsonl`)).toBe(P);
    expect(threadIdFromRolloutPath('/h/.codex/sessions/2026/11/29/rollout-2026-11-29T19-40-00.jsonl')).toBeNull();
    expect(threadIdFromRolloutPath(`/h/.claude/projects/-p/${P}.jsonl`)).toBeNull();
  });

  it('CODEX_HOME, else ~/.codex', () => {
    expect(codexSessionsDir({}, '/home/u')).toBe('/home/u/.codex/sessions');
    expect(codexSessionsDir({ CODEX_HOME: '/x/codex/' }, '/home/u')).toBe('/x/codex/sessions');
  });
});
