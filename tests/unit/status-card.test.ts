import { describe, expect, it } from 'vitest';
import { creditLine, renderStatusCard, type StatusSnapshot } from '../../core/status.js';

const NOW = Date.UTC(2026, 10, 29, 14);

function snapshot(over: Partial<StatusSnapshot> = {}): StatusSnapshot {
  return {
    now: NOW,
    musher: { pid: 1, version: '0.1.0', startedAt: NOW },
    bars: [{ provider: 'anthropic', account: 'claude-dir:/home/a/.claude', accountLabel: '~/.claude', window: 'five_hour', label: '5h', usedPct: 62, resetsAt: NOW + 2 * 3_600_000, observedAt: NOW - 30_000, ageMs: 30_000, stale: false, source: 'statusline' }],
    today: { since: NOW - 14 * 3_600_000, costMicros: 18_400_000, unpricedRecords: 0, byModel: [{ model: 'claude-opus-5-5', costMicros: 18_400_000, unpricedRecords: 0, records: 9 }] },
    sessions: [],
    walls: [],
    ingest: { files: 1, bytesRead: 10, pendingBytes: 0, backfilling: false },
    totals: { usageRecords: 9, costMicros: 18_400_000, unpricedRecords: 0, inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 },
    hookEvents: {},
    usageEndpoint: 'claude usage endpoint: ok',
    credits: [],
    platformKey: { todayMicros: 0, unpricedRecords: 0, bySeatModel: [] },
    wallBook: [],
    nextWall: null,
    ...over,
  };
}

describe('the /sled status card', () => {
  it('names every bar with its reset and age, the next wall with dollars to it, and today by model', () => {
    const card = renderStatusCard(snapshot({ nextWall: { name: '5-hour', provider: 'anthropic', window: 'five_hour', atMs: Date.UTC(2026, 10, 29, 15, 40), dollarsToWallMicros: 6_100_000 } }), null, 'UTC');
    expect(card).toContain('5h           62%  resets 4:00pm · data 30s old');
    expect(card).toContain('→ 5-hour wall at 3:40pm · $6.10 more');
    expect(card).toMatch(/claude-opus-5-5\s+\$18\.40/);
  });

  it('names the walls of the day with what was chosen and what came of it', () => {
    const card = renderStatusCard(
      snapshot({
        wallBook: [
          { wallId: 'jd7k2m9qa45p', sessionId: 's1', window: 'five_hour', hitAt: NOW - 600_000, resetsAt: NOW + 3_600_000, state: 'chosen', choice: 'defer', chosenBy: 'policy', outcome: 'runs itself at 3:00pm', snapshotId: 'x' },
          { wallId: 'k7m2n9pq4rst', sessionId: 's2', window: 'seven_day', hitAt: NOW - 60_000, resetsAt: null, state: 'open', choice: null, chosenBy: null, outcome: null, snapshotId: null },
        ],
      }),
      null,
      'UTC',
    );
    expect(card).toContain('Wall jd7k2m9qa45p · 5h · chosen · defer (policy) — runs itself at 3:00pm');
    expect(card).toContain('Wall k7m2n9pq4rst · wk · open · waiting for a choice: /sled exits');
  });

  it("names a hand-off and who picked it up", () => {
    const card = renderStatusCard(snapshot({ handoffs: [{ id: 'jd7k2m9qa45p', direction: 'sent', peer: 'dana', state: 'picked_up', pickedUpBy: 'dana', pickedUpAt: Date.UTC(2026, 10, 29, 14, 2), createdAt: NOW - 60_000 }] }), null, 'UTC');
    expect(card).toContain('Hand-off jd7k2m9qa45p to dana · picked up by dana 2:02pm');
  });

  it('says when no wall is forecast before the resets', () => {
    expect(renderStatusCard(snapshot(), null, 'UTC')).toContain('→ no wall forecast before the resets');
  });

  it('at 100% says the wall is now, and until when, not that none is forecast', () => {
    const full = snapshot({ bars: [{ ...snapshot().bars[0]!, usedPct: 100 }] });
    const card = renderStatusCard(full, null, 'UTC');
    expect(card).not.toContain('no wall forecast');
    expect(card).toContain('→ 5-hour wall now: the bar is full until it resets 4:00pm');
  });

  it('with no bars read yet says where they will come from, not that API-key sessions have none', () => {
    const card = renderStatusCard(snapshot({ bars: [], usageEndpoint: 'claude usage endpoint: not polled yet' }), null, 'UTC');
    expect(card).not.toContain('API-key sessions have no plan bars');
    expect(card).toContain("Bars: not read yet — they come with the statusline of Claude Code's next reply, or the usage endpoint's poll (claude usage endpoint: not polled yet)");
  });

  it('shows the platform key only once it has spent something', () => {
    expect(renderStatusCard(snapshot(), null, 'UTC')).not.toContain('Platform key');
    const card = renderStatusCard(snapshot({ platformKey: { todayMicros: 1_050_000, unpricedRecords: 0, bySeatModel: [{ seat: 'dana', model: 'claude-opus-5-5', costMicros: 1_050_000, unpricedRecords: 0, records: 3 }] } }), null, 'UTC');
    expect(card).toContain('Platform key today: $1.05');
  });

  it.each([
    [{ provider: 'anthropic', enabled: true, unlimited: null, currency: 'USD', exponent: 2, usedMinor: 1234, limitMinor: 5000, balanceMinor: 3766, utilizationPct: 24.68 }, 'Extra usage: $12.34 of $50.00 used (25%)'],
    [{ provider: 'anthropic', enabled: true, unlimited: null, currency: 'JPY', exponent: 0, usedMinor: 1500, limitMinor: 10000, balanceMinor: null, utilizationPct: null }, 'Extra usage: 1500 JPY of 10000 JPY used'],
    [{ provider: 'anthropic', enabled: false, unlimited: null, currency: null, exponent: 2, usedMinor: null, limitMinor: null, balanceMinor: null, utilizationPct: null }, 'Extra usage: off'],
    [{ provider: 'openai', enabled: true, unlimited: false, currency: null, exponent: 2, usedMinor: null, limitMinor: null, balanceMinor: 1234, utilizationPct: null }, 'Codex credits: 12.34 left'],
    [{ provider: 'openai', enabled: true, unlimited: true, currency: null, exponent: 0, usedMinor: null, limitMinor: null, balanceMinor: null, utilizationPct: null }, 'Codex credits: unlimited'],
  ])('credits %#: %s', (c, line) => {
    expect(creditLine({ observedAt: NOW, ...c })).toBe(line);
  });
});
