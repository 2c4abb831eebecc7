import { describe, expect, it } from 'vitest';
import { priceExits } from '../../core/exits/offers.js';
import { burnPerHourMicros } from '../../core/exits/burn.js';
import { exitByNumber, exitNumber, type ExitContext } from '../../core/exits/types.js';
import { formatBand, formatRemaining, formatWhen, shortModel } from '../../core/exits/words.js';

const NOW = Date.UTC(2026, 10, 30, 17, 0); // 12:00 pm in New York
const RESET = Date.UTC(2026, 11, 3, 14, 0); // Thursday 9:00 am in New York
const TZ = 'America/New_York';

function ctx(over: Partial<ExitContext> = {}): ExitContext {
  return {
    nowMs: NOW,
    timeZone: TZ,
    wall: { window: 'seven_day', resetAtMs: RESET },
    session: { id: 's1', harness: 'claude-code', provider: 'anthropic', model: 'claude-opus-5-5' },
    remaining: { usd: { loMicros: 4_100_000, hiMicros: 9_300_000 }, minutes: { lo: 20, hi: 55 }, fit: 0.82, burnPerHourMicros: 12_400_000 },
    key: { allowanceLeft: { dayMicros: 38_000_000, weekMicros: 120_000_000 } },
    cheaper: { model: 'claude-sonnet-5', priceRatio: 0.2 },
    overnight: { startMs: Date.UTC(2026, 11, 1, 3, 0), endMs: Date.UTC(2026, 11, 1, 11, 0) },
    teammate: { handle: 'dana', name: 'Dana', idleMs: 42 * 60_000 },
    handoffReady: true,
    coldCache: null,
    ...over,
  };
}

const byExit = (c: ExitContext) => Object.fromEntries(priceExits(c).map((o) => [o.exit, o]));

describe('the six exits, priced', () => {
  it('everything configured: each row as the card shows it', () => {
    const o = byExit(ctx());
    expect(priceExits(ctx()).map((x) => x.number)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(o.continue).toMatchObject({ ok: true, detail: 'platform key · allowance left $38.00', short: 'key $38 left' });
    expect(o.hold).toMatchObject({ ok: true, detail: 'free · resumes Thursday 9:00 am EST · saves ≈ $6.70 vs continuing now', short: 'hold → 9:00am' });
    expect(o.overnight).toMatchObject({ ok: true, detail: 'batch tier · ½ price · runs 10:00pm–6:00am · $2.05–4.65', short: 'overnight ½' });
    expect(o.switch).toMatchObject({ ok: true, detail: 'sonnet 5 · platform key · $0.82–1.86 · same time · rest of session', short: 'sonnet 5' });
    expect(o.handoff).toMatchObject({ ok: true, title: 'Hand off to Dana', detail: '(idle 42m) · Slack + /sled pickup', short: 'Dana' });
    expect(o.defer).toMatchObject({ ok: true, detail: 'runs itself Thursday 9:00 am EST · same model · full price · $4.10–9.30' });
  });

  it.each([
    ['no platform key', { key: null }, ['continue', 'overnight', 'switch'], /no platform key configured \(sleds key set anthropic\)/],
    ['allowance spent today', { key: { allowanceLeft: { dayMicros: 0, weekMicros: 50_000_000 } } }, ['continue', 'overnight', 'switch'], /allowance spent for today/],
    ['allowance spent this week', { key: { allowanceLeft: { dayMicros: null, weekMicros: 0 } } }, ['continue', 'overnight', 'switch'], /allowance spent for this week/],
    ['no overnight window', { overnight: null }, ['overnight'], /no overnight window in the policy/],
    ['no cheaper model', { cheaper: null }, ['switch'], /no cheaper step for opus 5.5 in the policy/],
    ['nobody in the roster', { teammate: null }, ['handoff'], /no teammate in the roster/],
    ['reset unknown', { wall: { window: null, resetAtMs: null } }, ['hold', 'defer'], /reset time is not known/],
  ] as const)('%s: the rows that cannot apply say why', (_name, over, closed, why) => {
    const o = byExit(ctx(over as Partial<ExitContext>));
    for (const k of closed) {
      expect(o[k]!.ok, k).toBe(false);
      expect(o[k]!.detail, k).toMatch(why);
      expect(o[k]!.cost, k).toBeNull();
    }
    const open = Object.values(o).filter((x) => !(closed as readonly string[]).includes(x.exit));
    expect(open.every((x) => x.ok)).toBe(true);
  });

  it('the owner named, but no hand-off until this machine can send one', () => {
    const o = byExit(ctx({ handoffReady: false }));
    expect(o.handoff).toMatchObject({ ok: false, title: 'Hand off to Dana', detail: 'Dana owns the changed files; hand-offs are not set up on this machine yet' });
  });

  it('an uncapped allowance is said so, not as $0', () => {
    const o = byExit(ctx({ key: { allowanceLeft: { dayMicros: null, weekMicros: null } } }));
    expect(o.continue).toMatchObject({ ok: true, detail: 'platform key · no allowance cap', short: 'key' });
  });

  it('with no estimate, rows give no invented dollars; switch falls back to the burn rate', () => {
    const o = byExit(ctx({ remaining: { usd: null, minutes: null, fit: null, burnPerHourMicros: 12_000_000 } }));
    expect(o.hold!.detail).toBe('free · resumes Thursday 9:00 am EST');
    expect(o.defer!.detail).toBe('runs itself Thursday 9:00 am EST · same model · full price');
    expect(o.switch!.detail).toBe('sonnet 5 · platform key · ≈ $2.40/h at this pace · same time · rest of session');
    expect(o.overnight!.cost).toBeNull();
  });

  it('a cold prompt cache at the reset is a warning on the hold', () => {
    const o = byExit(ctx({ coldCache: { writeCostMicros: 1_250_000 } }));
    expect(o.hold!.detail).toContain('prompt cache cold by then (≈ $1.25 to rewrite)');
  });

  it('numbers map to exits both ways', () => {
    expect([1, 2, 3, 4, 5, 6].map((n) => exitByNumber(n))).toEqual(['continue', 'hold', 'overnight', 'switch', 'handoff', 'defer']);
    expect(exitByNumber(7)).toBeNull();
    expect(exitNumber('defer')).toBe(6);
  });
});

describe('words on the card', () => {
  it.each([
    [{ loMicros: 4_100_000, hiMicros: 9_300_000 }, '$4.10–9.30'],
    [{ loMicros: 2_000_000, hiMicros: 2_001_000 }, '$2.00'],
    [{ loMicros: 900_000, hiMicros: 12_500_000 }, '$0.90–12.50'],
  ])('band %# reads as written', (b, text) => expect(formatBand(b)).toBe(text));

  it.each([
    [{ usd: { loMicros: 4_100_000, hiMicros: 9_300_000 }, minutes: { lo: 20, hi: 55 }, fit: 0.81, burnPerHourMicros: null }, '$4.10–9.30 · 20–55 min · 81%'],
    [{ usd: null, minutes: null, fit: null, burnPerHourMicros: 12_400_000 }, 'estimate: none (this session burns $12.40/h)'],
    [{ usd: null, minutes: null, fit: null, burnPerHourMicros: null }, 'estimate: none'],
  ])('remaining work %# reads as written', (r, text) => expect(formatRemaining(r)).toBe(text));

  it.each([
    ['claude-sonnet-5', 'sonnet 5'],
    ['claude-opus-5-5', 'opus 5.5'],
    ['claude-haiku-4-5-20251001', 'haiku 4.5'],
    ['gpt-5.1-codex', 'gpt-5.1-codex'],
  ])('model %s → %s', (id, short) => expect(shortModel(id)).toBe(short));

  it.each([
    [Date.UTC(2026, 10, 30, 20, 40), '3:40 pm EST'],
    [RESET, 'Thursday 9:00 am EST'],
    [Date.UTC(2026, 11, 9, 14, 0), 'Dec 9, 9:00 am EST'],
  ])('when %s → %s', (ms, text) => expect(formatWhen(ms, NOW, TZ)).toBe(text));
});

describe('a session burn per active hour', () => {
  const min = 60_000;
  it.each([
    ['too few records', [{ ts: 0, costMicros: 1_000_000 }], null],
    ['steady: a dollar every 5 minutes, 13 dollars over the hour', Array.from({ length: 13 }, (_, i) => ({ ts: i * 5 * min, costMicros: 1_000_000 })), 13_000_000],
    ['an idle hour in the middle does not dilute it', [
      ...Array.from({ length: 7 }, (_, i) => ({ ts: i * 5 * min, costMicros: 1_000_000 })),
      ...Array.from({ length: 7 }, (_, i) => ({ ts: 90 * min + i * 5 * min, costMicros: 1_000_000 })),
    ], 14_000_000],
    ['under five active minutes is too noisy to say', [{ ts: 0, costMicros: 1 }, { ts: 2 * min, costMicros: 1 }], null],
  ])('%s', (_n, records, expected) => {
    const r = burnPerHourMicros(records);
    if (expected === null) expect(r).toBeNull();
    else expect(r).toBeCloseTo(expected, -4);
  });
});
