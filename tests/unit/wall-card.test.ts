import { describe, expect, it } from 'vitest';
import { priceExits } from '../../core/exits/offers.js';
import type { ExitContext } from '../../core/exits/types.js';
import { renderWallCard, renderWallLine } from '../../core/wall/card.js';
import { isWallId, wallIdFrom, WALL_ID_ALPHABET } from '../../core/wall/wall-id.js';

const NOW = Date.UTC(2026, 10, 30, 17, 0);
const RESET = Date.UTC(2026, 11, 3, 14, 0);
const ctx: ExitContext = {
  nowMs: NOW,
  timeZone: 'America/New_York',
  wall: { window: 'seven_day', resetAtMs: RESET },
  session: { id: 's1', harness: 'claude-code', provider: 'anthropic', model: 'claude-opus-5-5' },
  remaining: { usd: { loMicros: 4_100_000, hiMicros: 9_300_000 }, minutes: { lo: 20, hi: 55 }, fit: 0.82, burnPerHourMicros: null },
  key: { allowanceLeft: { dayMicros: 38_000_000, weekMicros: null } },
  cheaper: { model: 'claude-sonnet-5', priceRatio: 0.2 },
  overnight: null,
  teammate: { handle: 'dana', name: 'Dana', idleMs: 42 * 60_000 },
  handoffReady: true,
  coldCache: null,
};
const base = {
  wallId: 'jd7k2m9qa45p',
  window: 'seven_day',
  resetAtMs: RESET,
  nowMs: NOW,
  timeZone: 'America/New_York',
  snapshotId: 'abc',
  snapshotNote: null,
  remaining: ctx.remaining,
  offers: priceExits(ctx),
};

describe('the wall card', () => {
  it('reads like the issue shows it, unavailable rows saying why', () => {
    expect(renderWallCard({ ...base, choice: null })).toBe(
      [
        'Wall: usage limit reached. Session snapshotted.',
        'Provider: Weekly limit reached. Resets Thursday 9:00 am EST.',
        'Remaining work: $4.10–9.30 · 20–55 min · 82%',
        '1 Continue now      platform key · allowance left $38.00',
        '2 Hold until reset  free · resumes Thursday 9:00 am EST · saves ≈ $6.70 vs continuing now',
        '3 Run overnight     — no overnight window in the policy',
        '4 Switch model      sonnet 5 · platform key · $0.82–1.86 · same time · rest of session',
        '5 Hand off to Dana  (idle 42m) · Slack + /sled pickup',
        '6 Defer to reset    runs itself Thursday 9:00 am EST · same model · full price · $4.10–9.30',
        'Reply /sled 1 … /sled 6.  wall jd7k2m9qa45p',
      ].join('\n'),
    );
  });

  it('names the policy and its rule when the policy chose', () => {
    const card = renderWallCard({ ...base, choice: { exit: 'hold', by: 'policy', rule: 'reset is near', outcome: 'Holding: Claude Code continues by itself at 9:00 am.' } });
    expect(card).toContain('The policy chose 2 Hold until reset (rule: reset is near); the audit log says so.');
    expect(card).toContain('Holding: Claude Code continues by itself at 9:00 am.');
    expect(card.split('\n').at(-1)).toBe('Reply /sled 1 … /sled 6 to choose otherwise.  wall jd7k2m9qa45p');
  });

  it('says so when there is no snapshot', () => {
    expect(renderWallCard({ ...base, snapshotId: null, snapshotNote: 'the transcript is gone', choice: null }).split('\n')[0]).toBe(
      'Wall: usage limit reached. No snapshot: the transcript is gone.',
    );
  });

  it('the statusline line lists only the exits that apply', () => {
    expect(renderWallLine('jd7k2m9qa45p', priceExits(ctx))).toBe('⛔ wall jd7k2m9qa45p · 1 key $38 left · 2 hold → 9:00am · 4 sonnet 5 · 5 Dana · 6 defer');
  });
});

describe('wall ids', () => {
  it('never use the characters people confuse', () => {
    expect(WALL_ID_ALPHABET).not.toMatch(/[0o1l]/);
    expect(WALL_ID_ALPHABET).toHaveLength(32);
  });

  it('take all 32 symbols from random bytes and round-trip isWallId', () => {
    const seen = new Set<string>();
    for (let b = 0; b < 256; b++) {
      const id = wallIdFrom(new Uint8Array(12).fill(b));
      expect(isWallId(id)).toBe(true);
      seen.add(id[0]!);
    }
    expect(seen.size).toBe(32);
    expect(isWallId('jd7k2m9qa41p')).toBe(false); // a 1
    expect(() => wallIdFrom(new Uint8Array(4))).toThrow(/12 random bytes/);
  });
});
