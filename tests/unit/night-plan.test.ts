import { describe, expect, it } from 'vitest';
import { admit, planNight, type NightJob } from '../../core/overnight/night-plan.js';

const band = (lowUsd: number, highUsd: number, lowMin: number, highMin = lowMin * 2) => ({ lowUsd, highUsd, lowMin, highMin, confidence: 0.8 });
const H = 3_600_000;
const night = { startMs: 22 * H, endMs: 30 * H };
const hhmm = (ms: number) => `${String(Math.floor(ms / H) % 24).padStart(2, '0')}:${String(Math.floor((ms % H) / 60_000)).padStart(2, '0')}`;

describe('admit: an overnight job is sized first and capped', () => {
  it.each([
    ['a band under its cap', band(4.5, 12, 20), 12, { ok: true }],
    ['a band whose low end is its cap', band(12, 30, 20), 12, { ok: true }],
    ['a band whose low end is over its cap: refused with the band', band(9, 24, 20), 6, { ok: false, why: 'its band $9.00–$24.00 starts above its cap $6.00 — raise the cap or split the job' }],
    ['no band', null, 6, { ok: false, why: 'it has no band yet, and an overnight job is sized before it is queued — sleds estimate it first' }],
  ])('%s', (_what, b, cap, want) => expect(admit(b, cap)).toEqual(want));
});

describe('planNight: the window, the slots and the order', () => {
  const job = (id: string, worthUsd: number | null, b: ReturnType<typeof band>): NightJob => ({ id, worthUsd, band: b, capUsd: 100 });
  const jobs = [job('cheap-low', 30, band(1, 3, 30)), job('big-high', 200, band(10, 30, 60)), job('unvalued', null, band(1, 2, 10)), job('long', 500, band(5, 9, 600))];

  it.each([
    ['before the window: nothing starts, each says when it opens', 21 * H, 2, { start: [], waiting: ['long', 'cheap-low', 'big-high', 'unvalued'].map((id) => ({ id, why: 'the window opens at 22:00' })) }],
    [
      'at 23:00 with two slots: worth ÷ band order; the 10-hour job waits for the next night',
      23 * H,
      2,
      {
        start: ['cheap-low', 'big-high'],
        waiting: [
          { id: 'long', why: "waits for the next night: its band's low end (600 min) does not fit before 06:00" },
          { id: 'unvalued', why: 'every slot of the night is taken: it starts when one is free' },
        ],
      },
    ],
    [
      'at 05:35: only what finishes its low end by 06:00',
      29 * H + 35 * 60_000,
      4,
      {
        start: ['unvalued'],
        waiting: [
          { id: 'long', why: "waits for the next night: its band's low end (600 min) does not fit before 06:00" },
          { id: 'cheap-low', why: "waits for the next night: its band's low end (30 min) does not fit before 06:00" },
          { id: 'big-high', why: "waits for the next night: its band's low end (60 min) does not fit before 06:00" },
        ],
      },
    ],
  ])('%s', (_what, now, slots, want) => expect(planNight(jobs, night, now, slots, hhmm)).toEqual(want));

  it('a job whose low end ends exactly as the window closes still starts', () => {
    expect(planNight([job('exact', 10, band(1, 2, 30))], night, 29.5 * H, 1, hhmm).start).toEqual(['exact']);
  });

  it('a job with no worth value goes after every valued one, the cheaper first', () => {
    const plan = planNight([job('u-big', null, band(10, 20, 5)), job('u-small', null, band(1, 2, 5)), job('v', 1, band(50, 90, 5))], night, 23 * H, 3, hhmm);
    expect(plan.start).toEqual(['v', 'u-small', 'u-big']);
  });
});
