import { describe, expect, it } from 'vitest';
import { parseLimitText } from '../../harnesses/claude-code/limit-text.js';

const NOW = Date.UTC(2026, 10, 29, 19, 0);

describe('parseLimitText', () => {
  it.each([
    ["You've hit your 5-hour limit · resets 8:55pm (UTC)", 'five_hour', Date.UTC(2026, 10, 29, 20, 55)],
    ["You've hit your 5-hour limit · resets 6:10pm (UTC)", 'five_hour', Date.UTC(2026, 10, 30, 18, 10)],
    ["You've hit your weekly limit · resets Dec 2, 3:42am (UTC)", 'seven_day', Date.UTC(2026, 11, 2, 3, 42)],
    ["You've hit your Opus limit · resets 12am (UTC)", 'seven_day_opus', Date.UTC(2026, 10, 30, 0, 0)],
    ["You've hit your Sonnet limit · resets 9:00pm (Europe/Berlin)", 'seven_day_sonnet', null],
    ['API Error: Request rejected (429)', null, null],
    // Whole minutes: a reset at 7:00:40pm reads "7pm", already past by a few seconds at the wall itself.
    ["You've hit your 5-hour limit · resets 6:59pm (UTC)", 'five_hour', Date.UTC(2026, 10, 29, 18, 59)],
    ["You've hit your 5-hour limit · resets 6:58pm (UTC)", 'five_hour', Date.UTC(2026, 10, 30, 18, 58)],
  ])('%j → %s at %s', (text, window, resetsAt) => {
    expect(parseLimitText(text, NOW)).toEqual({ window, resetsAtMs: resetsAt });
  });
});
