import { describe, expect, it } from 'vitest';
import { AMBER, RED, RESET, renderStatusline, severityOf, type StatuslineView } from '../../core/statusline-render.js';
import { renderLocalStatusline } from '../../core/statusline-local.js';
import { trustedBars } from '../../core/statusline-trust.js';

const NOW = Date.UTC(2026, 10, 29, 14, 0); // Sun 29 Nov 2026, 14:00 UTC

function view(over: Partial<StatuslineView>): StatuslineView {
  return {
    modelName: 'Opus 5.5',
    bars: [
      { label: '5h', usedPct: 62, resetsAtMs: Date.UTC(2026, 10, 29, 16, 10), ageMs: null },
      { label: 'wk', usedPct: 41, resetsAtMs: Date.UTC(2026, 11, 3, 9, 0), ageMs: null },
    ],
    noBarsReason: 'not-yet',
    session: { costMicros: 3_210_000, unpricedRecords: 0 },
    today: { costMicros: 18_400_000, unpricedRecords: 0 },
    musherAway: false,
    nowMs: NOW,
    timeZone: 'UTC',
    color: true,
    ...over,
  };
}

describe('renderStatusline', () => {
  it('shows the seat at a glance', () => {
    expect(renderStatusline(view({}))).toBe('Opus 5.5 · 5h 62% ↻4:10pm · wk 41% ↻Thu 9:00am · $3.21 session · $18.40 today');
  });

  it.each([
    [40, 'ok'],
    [89.9, 'ok'],
    [90, 'amber'],
    [91.5, 'amber'],
    [99.9, 'amber'],
    [100, 'red'],
  ] as const)('a bar at %s%% is %s', (pct, severity) => {
    const bars = [{ label: '5h', usedPct: pct, resetsAtMs: null, ageMs: null }];
    expect(severityOf(bars)).toBe(severity);
    const line = renderStatusline(view({ bars }));
    expect(line.startsWith(AMBER)).toBe(severity === 'amber');
    expect(line.startsWith(RED)).toBe(severity === 'red');
    if (severity !== 'ok') expect(line.endsWith(RESET)).toBe(true);
  });

  it('names the binding wall when it comes before the reset, amber when it is under 30 minutes away', () => {
    const later = renderStatusline(view({ wall: { atMs: Date.UTC(2026, 10, 29, 15, 40), soon: false } }));
    expect(later).toBe('Opus 5.5 · 5h 62% ↻4:10pm · wk 41% ↻Thu 9:00am · → wall 3:40pm · $3.21 session · $18.40 today');
    const soon = renderStatusline(view({ wall: { atMs: Date.UTC(2026, 10, 29, 14, 20), soon: true } }));
    expect(soon.startsWith(AMBER)).toBe(true);
    expect(soon).toContain('→ wall 2:20pm');
  });

  it('at amber it names the exits the wall would offer; below amber it does not', () => {
    const hint = 'at 100%: key $38 left · hold → 4:10pm';
    const amber = renderStatusline(view({ color: false, exitsHint: hint, bars: [{ label: '5h', usedPct: 92, resetsAtMs: null, ageMs: null }] }));
    expect(amber).toBe(`Opus 5.5 · 5h 92% · $3.21 session · $18.40 today · ${hint}`);
    expect(renderStatusline(view({ color: false, exitsHint: hint }))).not.toContain('at 100%');
  });

  it("the policy's amber threshold moves the colour", () => {
    const bars = [{ label: '5h', usedPct: 80, resetsAtMs: null, ageMs: null }];
    expect(renderStatusline(view({ bars })).startsWith(AMBER)).toBe(false);
    expect(renderStatusline(view({ bars, amberAtPct: 75 })).startsWith(AMBER)).toBe(true);
  });

  it('at a wall a second, red line names the wall and its exits', () => {
    const line = renderStatusline(view({ wallLine: '⛔ wall jd7k2m9qa45p · 2 hold → 4:10pm · 6 defer' }));
    const [first, second] = line.split('\n');
    expect(first!.startsWith(RED)).toBe(true);
    expect(second).toBe(`${RED}⛔ wall jd7k2m9qa45p · 2 hold → 4:10pm · 6 defer${RESET}`);
    expect(renderStatusline(view({ color: false, wallLine: '⛔ wall x' })).split('\n')[1]).toBe('⛔ wall x');
  });

  it('the worst bar decides the colour', () => {
    const bars = [
      { label: '5h', usedPct: 20, resetsAtMs: null, ageMs: null },
      { label: 'wk', usedPct: 100, resetsAtMs: null, ageMs: null },
    ];
    expect(renderStatusline(view({ bars })).startsWith(RED)).toBe(true);
  });

  it('honours NO_COLOR (color: false) even at the wall', () => {
    const line = renderStatusline(view({ color: false, bars: [{ label: '5h', usedPct: 100, resetsAtMs: null, ageMs: null }] }));
    expect(line).not.toContain('\x1b[');
  });

  it('says there are no plan bars instead of inventing numbers', () => {
    expect(renderStatusline(view({ bars: null, noBarsReason: 'api-key' }))).toBe('Opus 5.5 · no plan bars (API key) · $3.21 session · $18.40 today');
    expect(renderStatusline(view({ bars: null, noBarsReason: 'not-yet' }))).toContain('no plan bars yet');
  });

  it('shows a stale bar with its age', () => {
    const bars = [{ label: '5h', usedPct: 62, resetsAtMs: null, ageMs: 25 * 60_000 }];
    expect(renderStatusline(view({ bars }))).toContain('5h 62% (25m old)');
    expect(renderStatusline(view({ bars: [{ ...bars[0]!, ageMs: 60_000 }] }))).not.toContain('old');
  });

  it('shows unpriced usage as unpriced, never as $0', () => {
    expect(renderStatusline(view({ session: { costMicros: 0, unpricedRecords: 3 } }))).toContain('unpriced session');
    expect(renderStatusline(view({ session: { costMicros: 1_500_000, unpricedRecords: 1 } }))).toContain('$1.50 + unpriced session');
  });
});

describe('renderLocalStatusline (musher away)', () => {
  const json = (extra: object) =>
    JSON.stringify({ session_id: 's', model: { id: 'claude-opus-5-5', display_name: 'Opus 5.5' }, cost: { total_cost_usd: 0.0269 }, ...extra });

  it('renders the bars from the JSON alone and says musher is away', () => {
    const line = renderLocalStatusline(
      json({ rate_limits: { five_hour: { used_percentage: 91.5, resets_at: 1795989234 }, seven_day: { used_percentage: 17, resets_at: 1796241234 } } }),
      NOW,
      true,
    );
    expect(line.startsWith(AMBER)).toBe(true);
    expect(line).toContain('5h 91.5%');
    expect(line).toContain('wk 17%');
    expect(line).toContain('(musher away)');
  });

  it('an API-key session (a reply came, no rate_limits) has no plan bars', () => {
    const line = renderLocalStatusline(json({ context_window: { current_usage: { input_tokens: 3 } } }), NOW, false);
    expect(line).toContain('no plan bars (API key)');
    expect(line).toContain('$0.03 session');
  });

  it('still prints a line for garbage input', () => {
    expect(renderLocalStatusline('{not json', NOW, true)).toBe('no plan bars yet · (musher away)');
  });
});

describe('trustedBars: one figure per bar, the one the colour is from', () => {
  const stdin = [{ label: '5h', usedPct: 40, resetsAtMs: null, ageMs: null }];
  it("Claude Code's figure where musher holds the same", () => {
    expect(trustedBars(stdin, [{ label: '5h', usedPct: 40, resetsAtMs: null, ageMs: 0, source: 'statusline' }])).toEqual(stdin);
  });
  it("musher's figure, with its source and age, where it trusts another", () => {
    const bars = trustedBars(stdin, [{ label: '5h', usedPct: 100, resetsAtMs: null, ageMs: 120_000, source: 'usage-endpoint' }]);
    const line = renderStatusline({ modelName: null, bars, noBarsReason: 'not-yet', session: null, today: null, musherAway: false, nowMs: 0, color: true });
    expect(line.startsWith(RED)).toBe(true);
    expect(line).toContain('5h 100% (usage endpoint, 2m ago)');
    expect(line).not.toContain('40%');
  });
});
