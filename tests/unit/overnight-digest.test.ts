import { describe, expect, it } from 'vitest';
import { composeDigest, digestEntry, digestTime, lastNight, type DigestJob } from '../../core/overnight/digest.js';
import { cappedLine } from '../../core/overnight/night-gate.js';
import { zonedTimeToEpoch } from '../../core/zoned-time.js';

const job = (over: Partial<DigestJob>): DigestJob => ({
  job: 'chores/deps',
  title: 'Bump the dependencies',
  state: 'QUEUED',
  prNumber: null,
  prUrl: null,
  receiptLine: null,
  question: null,
  note: null,
  problem: null,
  lastError: null,
  capMicros: 12_000_000,
  spentMicros: 0,
  ...over,
});
const PR = { prNumber: 41, prUrl: 'https://github.com/acme/app/pull/41' };

describe('digestEntry: which group a job is in, and its line', () => {
  it.each<[string, Partial<DigestJob>, ReturnType<typeof digestEntry>]>([
    ['verified with a PR: delivered, with the link and the receipt', { state: 'AWAITING_MERGE', ...PR, receiptLine: '$6 actual · signed' }, { group: 'delivered', line: 'PR #41 https://github.com/acme/app/pull/41 · $6 actual · signed' }],
    ['merged already: delivered too', { state: 'COMPLETED', ...PR }, { group: 'delivered', line: 'merged · PR #41 https://github.com/acme/app/pull/41' }],
    ['verified but no PR: at a wall, saying why', { state: 'AWAITING_MERGE', lastError: 'no GitHub token' }, { group: 'atAWall', line: 'verified, but no pull request was opened · no GitHub token' }],
    ['waiting for an answer: its question', { state: 'WAITING_FOR_INPUT', question: 'Drop the v1 endpoint?' }, { group: 'waiting', line: 'asks: Drop the v1 endpoint?' }],
    ['queued for the next night, with why', { state: 'QUEUED', note: 'the window opens at 22:00' }, { group: 'waiting', line: 'queued for the next night · the window opens at 22:00' }],
    ['stopped at its cap', { state: 'WAITING_FOR_LIMIT', spentMicros: 12_040_000, lastError: cappedLine(12_040_000, 12_000_000) }, { group: 'atAWall', line: 'stopped at its cap: $12.04 of $12 — raise cap: in its route file to let it go on' }],
    ['at a limit', { state: 'WAITING_FOR_LIMIT', lastError: 'the weekly limit resets Thu 9:00am' }, { group: 'atAWall', line: 'at a limit: the weekly limit resets Thu 9:00am' }],
    ['needs recovery: its problem', { state: 'RECOVERY_REQUIRED', problem: 'the worktree could not be made' }, { group: 'atAWall', line: 'needs a person: the worktree could not be made' }],
    ['failed: why', { state: 'FAILED', problem: 'verification failed 3 times' }, { group: 'atAWall', line: 'failed: verification failed 3 times' }],
    ['still running at digest time', { state: 'RUNNING' }, { group: 'atWork', line: 'still at work (RUNNING)' }],
    ['cancelled: not in the digest', { state: 'CANCELLED' }, null],
  ])('%s', (_what, over, want) => expect(digestEntry(job(over))).toEqual(want));
});

describe('composeDigest', () => {
  it('heads the message with its time, channel and counts, then one line per job, delivered first', () => {
    const d = composeDigest(
      [job({ job: 'chores/docs', title: 'Refresh the docs', state: 'WAITING_FOR_INPUT', question: 'Which export format?' }), job({ state: 'AWAITING_MERGE', ...PR, receiptLine: '$6 actual' }), job({ job: 'x/y', state: 'CANCELLED' })],
      '08:00',
      '#eng',
    );
    expect(d.header).toBe('08:00 digest → #eng · 1 delivered · 1 waiting · 0 at a wall');
    expect(d.text.split('\n')).toEqual([
      '08:00 digest → #eng · 1 delivered · 1 waiting · 0 at a wall',
      'delivered · chores/deps · Bump the dependencies · PR #41 https://github.com/acme/app/pull/41 · $6 actual',
      'waiting · chores/docs · Refresh the docs · asks: Which export format?',
    ]);
    expect(d.delivered.map((e) => [e.job, e.link])).toEqual([['chores/deps', PR.prUrl]]);
    expect(d.waiting.map((e) => e.job)).toEqual(['chores/docs']);
    expect(d.atAWall).toEqual([]);
  });

  it('without a channel (sleds digest with no digest in the policy), and with nothing to tell', () => {
    expect(composeDigest([], '08:00', null).text).toBe('08:00 digest · 0 delivered · 0 waiting · 0 at a wall');
  });
});

describe('lastNight and digestTime', () => {
  const H = 3_600_000;
  const day = Date.UTC(2026, 11, 3);
  // A 22:00–06:00 window in UTC: the one in progress at `ms`, else the next.
  const windowAt = (ms: number) => {
    const d = Math.floor(ms / (24 * H)) * 24 * H;
    for (const start of [d - 2 * H, d + 22 * H]) if (start + 8 * H > ms) return { startMs: start, endMs: start + 8 * H };
    return null;
  };
  it.each<[string, number, { startMs: number; endMs: number } | null]>([
    ['at 08:00: the night that ended at 06:00', day + 8 * H, { startMs: day - 2 * H, endMs: day + 6 * H }],
    ['at 03:00: the night in progress', day + 3 * H, { startMs: day - 2 * H, endMs: day + 6 * H }],
    ['at 21:00: still last night', day + 21 * H, { startMs: day - 2 * H, endMs: day + 6 * H }],
    ['at 23:00: tonight, in progress', day + 23 * H, { startMs: day + 22 * H, endMs: day + 30 * H }],
  ])('%s', (_what, now, want) => expect(lastNight(windowAt, now)).toEqual(want));

  it('no window: no night', () => expect(lastNight(() => null, day)).toBeNull());

  it('the digest is due at its time of day at or after the night’s end, in the window’s zone', () => {
    const night = { startMs: zonedTimeToEpoch(2026, 12, 2, 22 * 60, 'Europe/Berlin'), endMs: zonedTimeToEpoch(2026, 12, 3, 6 * 60, 'Europe/Berlin') };
    expect(digestTime(night, 8 * 60, 'Europe/Berlin')).toBe(zonedTimeToEpoch(2026, 12, 3, 8 * 60, 'Europe/Berlin'));
    expect(new Date(digestTime(night, 8 * 60, 'Europe/Berlin')).toISOString()).toBe('2026-12-03T07:00:00.000Z');
    // A digest time before the window's end is the next morning's.
    expect(digestTime(night, 5 * 60, 'Europe/Berlin')).toBe(zonedTimeToEpoch(2026, 12, 4, 5 * 60, 'Europe/Berlin'));
  });
});

describe('composeDigest: a job titled by its id', () => {
  it('says the id once', () => {
    expect(composeDigest([job({ job: 'chores/deps', title: 'deps', state: 'WAITING_FOR_INPUT', question: 'Which?' })], '08:00', '#eng').text.split('\n')[1]).toBe('waiting · chores/deps · asks: Which?');
  });
});
