import { describe, expect, it } from 'vitest';
import { buildReport, parseReportDate, type KeyRow, type ReportOptions, type UsageRow } from '../../core/report/report.js';

const at = (iso: string) => Date.parse(iso);
const use = (iso: string, model: string, tokens: [number, number, number, number], costMicros: number | null, extra: Partial<UsageRow> = {}): UsageRow => ({
  ts: at(iso),
  sessionId: 's1',
  model,
  project: '/home/dev/shop',
  seat: 'dana',
  inputTokens: tokens[0],
  outputTokens: tokens[1],
  cacheCreationTokens: tokens[2],
  cacheReadTokens: tokens[3],
  costMicros,
  ...extra,
});
const opts = (o: Partial<ReportOptions>): ReportOptions => ({ period: 'daily', by: 'model', timeZone: 'UTC', since: null, until: null, startOfWeek: 'sunday', ...o });

const HISTORY: UsageRow[] = [
  use('2026-11-29T23:30:00Z', 'claude-opus-5-5', [10, 20, 30, 40], 1_000_000),
  use('2026-11-30T01:00:00Z', 'claude-sonnet-4-6', [1, 2, 3, 4], 250_000),
  use('2026-11-30T02:00:00Z', 'model-nobody-prices', [5, 5, 0, 0], null, { sessionId: 's2', project: '/home/dev/api', seat: 'sam' }),
  use('2026-12-01T12:00:00Z', 'claude-opus-5-5', [100, 0, 0, 0], 500_000, { sessionId: 's2', project: '/home/dev/api' }),
];
const KEY: KeyRow[] = [{ ts: at('2026-11-30T03:00:00Z'), sessionId: 's2', model: 'claude-opus-5-5', project: '/home/dev/api', seat: 'dana', costMicros: 2_000_000 }];

describe('buildReport: the reports ccusage users expect', () => {
  it('daily in UTC: tokens summed as recorded, dollars from the price table, the unpriced model named and never $0, the key rail beside', () => {
    const r = buildReport(HISTORY, KEY, opts({}));
    expect(r.rows.map((x) => [x.period, x.totalTokens, x.costMicros, x.unpricedReplies, x.unpricedModels, x.keyCostMicros])).toEqual([
      ['2026-11-29', 100, 1_000_000, 0, [], 0],
      ['2026-11-30', 20, 250_000, 1, ['model-nobody-prices'], 2_000_000],
      ['2026-12-01', 100, 500_000, 0, [], 0],
    ]);
    expect(r.rows[1]!.modelsUsed).toEqual(['claude-sonnet-4-6', 'model-nobody-prices']);
    expect(r.rows[1]!.breakdown.map((b) => [b.name, b.costMicros, b.keyCostMicros, b.unpricedReplies])).toEqual([
      ['claude-opus-5-5', 0, 2_000_000, 0],
      ['claude-sonnet-4-6', 250_000, 0, 0],
      ['model-nobody-prices', 0, 0, 1],
    ]);
    expect(r.totals).toMatchObject({ inputTokens: 116, outputTokens: 27, cacheCreationTokens: 33, cacheReadTokens: 44, totalTokens: 220, costMicros: 1_750_000, unpricedReplies: 1, unpricedModels: ['model-nobody-prices'], keyCostMicros: 2_000_000, replies: 4 });
  });

  it.each([
    ['days are the zone’s: 23:30 UTC on the 29th is the 30th in Berlin', opts({ timeZone: 'Europe/Berlin' }), ['2026-11-30', '2026-12-01']],
    ['and 01:00 UTC on the 30th is the 29th in New York', opts({ timeZone: 'America/New_York' }), ['2026-11-29', '2026-12-01']],
    ['weeks start on Sunday by default (the 29th is a Sunday)', opts({ period: 'weekly' }), ['2026-11-29']],
    ['or on the day asked', opts({ period: 'weekly', startOfWeek: 'monday' }), ['2026-11-23', '2026-11-30']],
    ['months', opts({ period: 'monthly' }), ['2026-11', '2026-12']],
    ['since and until are inclusive local dates', opts({ since: '2026-11-30', until: '2026-11-30' }), ['2026-11-30']],
  ])('%s', (_what, o, periods) => expect(buildReport(HISTORY, [], o).rows.map((r) => r.period)).toEqual(periods));

  it('by project and by seat', () => {
    expect(buildReport(HISTORY, KEY, opts({ period: 'monthly', by: 'project' })).rows[0]!.breakdown.map((b) => [b.name, b.totalTokens, b.keyCostMicros])).toEqual([
      ['/home/dev/api', 10, 2_000_000],
      ['/home/dev/shop', 110, 0],
    ]);
    expect(buildReport(HISTORY, [], opts({ period: 'monthly', by: 'seat' })).rows[0]!.breakdown.map((b) => [b.name, b.replies])).toEqual([
      ['dana', 2],
      ['sam', 1],
    ]);
  });

  it('session: a row per session with its folder and last reply, oldest activity first', () => {
    const r = buildReport(HISTORY, KEY, opts({ period: 'session' }));
    expect(r.rows.map((x) => [x.period, x.project, new Date(x.lastActivity!).toISOString(), x.keyCostMicros])).toEqual([
      ['s1', '/home/dev/shop', '2026-11-30T01:00:00.000Z', 0],
      ['s2', '/home/dev/api', '2026-12-01T12:00:00.000Z', 2_000_000],
    ]);
  });
});

describe('parseReportDate', () => {
  it.each([
    ['20261130', '2026-11-30'],
    ['2026-11-30', '2026-11-30'],
    ['2026-02-30', null],
    ['yesterday', null],
    ['2026113', null],
  ])('%s', (text, want) => expect(parseReportDate(text)).toBe(want));
});
