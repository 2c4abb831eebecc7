import { describe, expect, it } from 'vitest';
import { batchBand, cappedLine, gateNight, type NightCandidate } from '../../core/overnight/night-gate.js';

const H = 3_600_000;
const window = { startMs: 22 * H, endMs: 30 * H, concurrency: 2 };
const band = (lowUsd: number, highUsd: number, lowMin: number) => ({ lowUsd, highUsd, lowMin, highMin: lowMin * 3, confidence: 0.6 });
const hhmm = (ms: number) => `${String(Math.floor(ms / H) % 24).padStart(2, '0')}:${String(Math.floor((ms % H) / 60_000)).padStart(2, '0')}`;
const c = (key: string, b: ReturnType<typeof band> | null, capUsd: number, w: NightCandidate['window'] = window, working = 0): NightCandidate => ({ key, band: b, capMicros: capUsd * 1_000_000, window: w, working });

describe('gateNight: which overnight nodes start this round', () => {
  it.each<[string, NightCandidate[], number, ReturnType<typeof gateNight>]>([
    ['before the window: each waits, saying when it opens', [c('r/a', band(2, 6, 20), 10)], 21 * H, { start: [], waiting: [{ key: 'r/a', why: 'the window opens at 22:00' }] }],
    ['in the window, under the cap at batch prices ($20–30 standard is $10–15 at half)', [c('r/a', band(20, 30, 20), 10)], 23 * H, { start: ['r/a'], waiting: [] }],
    [
      'a band whose half-price low end is over its cap is held with the band',
      [c('r/a', band(30, 40, 20), 12)],
      23 * H,
      { start: [], waiting: [{ key: 'r/a', why: 'held: its band $15.00–$20.00 starts above its cap $12.00 — raise the cap or split the job' }] },
    ],
    ['no band: held until it is sized', [c('r/a', null, 12)], 23 * H, { start: [], waiting: [{ key: 'r/a', why: 'held: it has no band yet, and an overnight job is sized before it is queued — sleds estimate it first' }] }],
    ['no window in its policy', [c('r/a', band(2, 6, 20), 10, null)], 23 * H, { start: [], waiting: [{ key: 'r/a', why: 'its repository’s policy has no overnight window — add overnight: {from: "22:00", to: "06:00"}' }] }],
    [
      'the slots the working ones hold are not free: one working of two, so one more starts (cheaper first when none is valued)',
      [c('r/a', band(8, 12, 20), 10, window, 1), c('r/b', band(2, 4, 20), 10, window, 1)],
      23 * H,
      { start: ['r/b'], waiting: [{ key: 'r/a', why: 'every slot of the night is taken: it starts when one is free' }] },
    ],
    [
      'a job whose low end does not fit before the close waits for the next night',
      [c('r/a', band(2, 4, 90), 10)],
      29 * H,
      { start: [], waiting: [{ key: 'r/a', why: "waits for the next night: its band's low end (90 min) does not fit before 06:00" }] },
    ],
  ])('%s', (_what, candidates, now, want) => expect(gateNight(candidates, now, hhmm)).toEqual(want));

  it('a night band is half the dollars in the same minutes', () => {
    expect(batchBand(band(9, 24, 30))).toEqual({ lowUsd: 4.5, highUsd: 12, lowMin: 30, highMin: 90, confidence: 0.6 });
  });

  it('the line a capped job says', () => {
    expect(cappedLine(12_300_000, 12_000_000)).toBe('the cap $12.00 stopped it at $12.30 — its work and session are kept; raise cap: in its route file to let it go on');
  });
});
