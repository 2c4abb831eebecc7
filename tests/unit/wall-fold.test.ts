import { describe, expect, it } from 'vitest';
import { refinedBy, sameLimit } from '../../core/wall/fold.js';

const MIN = 60_000;
const EXACT = Date.UTC(2026, 11, 1, 21, 24, 37);
const ROUNDED = Date.UTC(2026, 11, 1, 21, 24, 0);

describe('sameLimit: signals of one session that fold into one wall', () => {
  const cases: Array<[string, { window: string | null; resetsAtMs: number | null }, { window: string | null; resetsAtMs: number | null }, boolean]> = [
    ['the hook (no window, rounded) and the transcript (five_hour, exact)', { window: null, resetsAtMs: ROUNDED }, { window: 'five_hour', resetsAtMs: EXACT }, true],
    ['the transcript, then the hook', { window: 'five_hour', resetsAtMs: EXACT }, { window: null, resetsAtMs: ROUNDED }, true],
    ['a reset unknown on one side', { window: 'five_hour', resetsAtMs: null }, { window: 'five_hour', resetsAtMs: EXACT }, true],
    ['the same window and reset', { window: 'five_hour', resetsAtMs: EXACT }, { window: 'five_hour', resetsAtMs: EXACT }, true],
    ['two windows', { window: 'five_hour', resetsAtMs: EXACT }, { window: 'seven_day', resetsAtMs: EXACT }, false],
    ['resets hours apart (a later window)', { window: 'five_hour', resetsAtMs: EXACT }, { window: null, resetsAtMs: EXACT + 5 * 60 * MIN }, false],
    ['resets two minutes apart', { window: 'five_hour', resetsAtMs: ROUNDED }, { window: 'five_hour', resetsAtMs: ROUNDED + 2 * MIN }, false],
  ];
  for (const [name, wall, signal, same] of cases) it(name, () => expect(sameLimit(wall, signal)).toBe(same));
});

describe('refinedBy: the precise reset and the named window win', () => {
  it('the transcript makes the hook-opened wall exact and names its window', () => {
    expect(refinedBy({ window: null, resetsAtMs: ROUNDED }, { window: 'five_hour', resetsAtMs: EXACT, precise: true })).toEqual({ window: 'five_hour', resetsAtMs: EXACT });
  });
  it("the hook's rounded reset never replaces the transcript's exact one", () => {
    expect(refinedBy({ window: 'five_hour', resetsAtMs: EXACT }, { window: null, resetsAtMs: ROUNDED, precise: false })).toEqual({ window: null, resetsAtMs: null });
  });
  it('a rounded reset is better than none', () => {
    expect(refinedBy({ window: 'five_hour', resetsAtMs: null }, { window: null, resetsAtMs: ROUNDED, precise: false })).toEqual({ window: null, resetsAtMs: ROUNDED });
  });
});
