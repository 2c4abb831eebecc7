import { describe, expect, it } from 'vitest';
import { NIGHT_JOB_KEY, nightJobKey, parseCapWords, sizeNightJob } from '../../core/overnight/night-job.js';
import { ROUTE_ID } from '../../core/routes/route-file.js';
import { renderOutcomeForPrompt, nextCommands } from '../../core/exits/outcome.js';

const band = (lowUsd: number, highUsd: number) => ({ lowUsd, highUsd, lowMin: 20, highMin: 60, confidence: 0.5 });

describe('an overnight job is sized first and capped', () => {
  it.each([
    // band at standard prices, own cap, policy cap → what the source is told
    ['under the policy cap: halved, the policy’s cap', band(4, 10), null, 12_000_000, { ok: true, band: band(2, 5), capMicros: 12_000_000 }],
    ['its own cap wins over the policy’s', band(4, 10), 20_000_000, 12_000_000, { ok: true, band: band(2, 5), capMicros: 20_000_000 }],
    ['the low end at ½ price just at the cap is let through', band(24, 60), null, 12_000_000, { ok: true, band: band(12, 30), capMicros: 12_000_000 }],
    [
      'the low end at ½ price over the cap: refused with the band and the command that lets it through',
      band(28, 60),
      null,
      12_000_000,
      { ok: false, line: 'refused: its band at ½ price is $14–30, over its cap of $12 — raise it: /sled overnight cap $30' },
    ],
    [
      'over its own cap as well',
      band(28, 60),
      10_000_000,
      40_000_000,
      { ok: false, line: 'refused: its band at ½ price is $14–30, over its cap of $10 — raise it: /sled overnight cap $30' },
    ],
    [
      'a cap under a cent reads as such, never a rounded $0',
      band(0.36, 1.4),
      1,
      12_000_000,
      { ok: false, line: 'refused: its band at ½ price is $0.18–0.70, over its cap of <$0.01 — raise it: /sled overnight cap $0.70' },
    ],
    ['no band: refused, it is sized before it is queued', null, null, 12_000_000, { ok: false, line: 'refused: it has no band yet, and an overnight job is sized before it is queued — /sled estimate it first' }],
  ])('%s', (_what, b, own, policy, want) => {
    expect(sizeNightJob(b, own, policy, '/sled overnight cap')).toEqual(want);
  });

  it('a job key is a route key: night- and six lowercase letters and digits', () => {
    for (const bytes of [[0, 0, 0, 0, 0, 0], [255, 254, 35, 36, 100, 7], [9, 18, 27, 36, 45, 54]]) {
      const key = nightJobKey(Uint8Array.from(bytes));
      expect(key).toMatch(NIGHT_JOB_KEY);
      expect(ROUTE_ID.test(key)).toBe(true);
    }
    expect(nightJobKey(Uint8Array.from([0, 1, 2, 3, 4, 35]))).toBe('night-abcde9');
  });

  it.each([
    ['cap $20', { ok: true, capMicros: 20_000_000 }],
    ['$12.50', { ok: true, capMicros: 12_500_000 }],
    ['CAP 30', { ok: true, capMicros: 30_000_000 }],
    ['cap $0', { ok: false, error: 'a cap of $0 would stop the job at once — write e.g. cap $20' }],
    ['cap twenty', { ok: false, error: "'cap twenty' is not a cap — write cap $20" }],
    ['cap $5 tonight', { ok: false, error: "'cap $5 tonight' is not a cap — write cap $20" }],
  ])('the cap typed after the verb: %s', (words, want) => {
    expect(parseCapWords(words)).toEqual(want);
  });

  it('exit 3’s answer names the job, its band at ½ price and cap, and how to see and cancel it', () => {
    const o = {
      wallId: 'w1',
      atMs: Date.UTC(2026, 11, 1, 3),
      timeZone: 'UTC',
      exit: 'overnight' as const,
      result: 'scheduled' as const,
      startMs: Date.UTC(2026, 11, 1, 22),
      endMs: Date.UTC(2026, 11, 2, 6),
      job: 'night-4f2a9c',
      lowMicros: 2_000_000,
      highMicros: 5_000_000,
      capMicros: 12_000_000,
    };
    expect(renderOutcomeForPrompt(o)).toBe(
      "Queued as overnight job night-4f2a9c for tonight's window (10:00pm–6:00am) on the batch tier at ½ price ($2–5, cap $12): this session resumes headless where it stopped, in its own worktree. `sleds queue` shows it; /sled cancel undoes it.",
    );
    expect(nextCommands(o)).toEqual(['sleds queue', 'sleds queue cancel night-4f2a9c']);
  });
});
