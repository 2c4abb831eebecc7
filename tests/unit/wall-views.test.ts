import { describe, expect, it } from 'vitest';
import { priceExits } from '../../core/exits/offers.js';
import type { ExitContext } from '../../core/exits/types.js';
import { nextCommands, renderOutcomeForPrompt, renderTakenForPrompt, type ExitOutcome } from '../../core/exits/outcome.js';
import { renderCardForPrompt } from '../../core/wall/card.js';
import { wallCardOf, type WallCard, type WallFacts } from '../../core/wall/view.js';
import { renderWallCardForTerminal } from '../../cli/wall-view.js';
import { renderHandOffForTool, renderOutcomeForTool } from '../../mcp-server/exit-view.js';
import { ExitOutcomeSchema, WallCardSchema } from '../../protocol/schemas.js';

/**
 * Issue 13 part 5: walls and exits answer with typed view models (WallCard, ExitOutcome), and each surface renders
 * the same model. The prompt's words are today's exactly (the e2e and integration tests hold them); every surface
 * keeps every fact.
 */

const NOW = Date.UTC(2026, 10, 30, 17, 0); // Monday 12:00 pm EST
const RESET = Date.UTC(2026, 11, 3, 14, 0); // Thursday 9:00 am EST
const TZ = 'America/New_York';
const ctx: ExitContext = {
  nowMs: NOW,
  timeZone: TZ,
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
const facts: WallFacts = {
  wallId: 'jd7k2m9qa45p',
  window: 'seven_day',
  resetAtMs: RESET,
  nowMs: NOW,
  timeZone: TZ,
  snapshotId: 'snap01',
  snapshotNote: null,
  remaining: ctx.remaining,
  offers: priceExits(ctx),
  choice: null,
};
const picked: WallFacts = { ...facts, choice: { exit: 'hold', by: 'policy', rule: 'reset is near', outcome: 'Holding: Claude Code continues by itself at Thursday 9:00 am EST. Nothing is spent until then.' } };

const SURFACES: Array<[string, (c: WallCard) => string]> = [
  ['the prompt', renderCardForPrompt],
  ['the terminal (sleds wall show)', renderWallCardForTerminal],
];

describe('the WallCard model', () => {
  it('holds the wall as facts: the six exits with number, kind, availability and why not, and the pick', () => {
    const card = wallCardOf(picked);
    expect(card.exits.map((e) => [e.number, e.kind, e.available])).toEqual([
      [1, 'continue', true],
      [2, 'hold', true],
      [3, 'overnight', false],
      [4, 'switch', true],
      [5, 'handoff', true],
      [6, 'defer', true],
    ]);
    expect(card.exits[2]).toMatchObject({ detail: null, whyNot: 'no overnight window in the policy' });
    expect(card.exits[0]).toMatchObject({ detail: 'platform key · allowance left $38.00', whyNot: null, short: 'key $38 left' });
    expect(card).toMatchObject({ windowTitle: 'Weekly', resetAtMs: RESET, snapshot: { id: 'snap01', note: null } });
    expect(card.pick).toEqual({ exit: 'hold', number: 2, title: 'Hold until reset', by: 'policy', rule: 'reset is near', outcome: picked.choice!.outcome });
    // The protocol's schema is the model's: what musher sends, a client parses whole.
    expect(WallCardSchema.parse(JSON.parse(JSON.stringify(card)))).toEqual(card);
  });

  it("the prompt's card is today's, word for word", () => {
    expect(renderCardForPrompt(wallCardOf(picked))).toBe(
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
        'The policy chose 2 Hold until reset (rule: reset is near); the audit log says so.',
        'Holding: Claude Code continues by itself at Thursday 9:00 am EST. Nothing is spent until then.',
        'Reply /sled 1 … /sled 6 to choose otherwise.  wall jd7k2m9qa45p',
      ].join('\n'),
    );
  });

  // Each fact of the model, changed, must change what every surface shows: a renderer that drops one fails here.
  const FACTS: Array<[string, (c: WallCard) => WallCard, string]> = [
    ['the wall id', (c) => ({ ...c, wallId: 'zz9zz9zz9zz9' }), 'zz9zz9zz9zz9'],
    ['the window', (c) => ({ ...c, windowTitle: 'Opus weekly' }), 'Opus weekly limit reached'],
    ['the reset', (c) => ({ ...c, resetAtMs: Date.UTC(2026, 11, 1, 15, 30) }), 'Resets Tuesday 10:30 am EST'],
    ['no snapshot, and why', (c) => ({ ...c, snapshot: { id: null, note: 'the transcript is gone' } }), 'No snapshot: the transcript is gone'],
    ['the remaining work', (c) => ({ ...c, remaining: { ...c.remaining, minutes: { lo: 7, hi: 9 } } }), '7–9 min'],
    ['an exit’s price', (c) => ({ ...c, exits: c.exits.map((e) => (e.kind === 'defer' ? { ...e, detail: 'runs itself at 3:00 pm' } : e)) }), '6 Defer to reset    runs itself at 3:00 pm'],
    ['an exit’s why-not', (c) => ({ ...c, exits: c.exits.map((e) => (e.kind === 'continue' ? { ...e, available: false, detail: null, whyNot: 'allowance spent for today' } : e)) }), '1 Continue now      — allowance spent for today'],
    ['the exit’s title', (c) => ({ ...c, exits: c.exits.map((e) => (e.kind === 'handoff' ? { ...e, title: 'Hand off to Lee' } : e)) }), '5 Hand off to Lee'],
    ['who picked', (c) => ({ ...c, pick: { ...c.pick!, by: 'user', rule: null } }), 'You chose 2 Hold until reset.'],
    ['the policy’s rule', (c) => ({ ...c, pick: { ...c.pick!, rule: 'night owl' } }), '(rule: night owl)'],
    ['what the pick did', (c) => ({ ...c, pick: { ...c.pick!, outcome: 'Held for an hour.' } }), '\nHeld for an hour.\n'],
  ];
  for (const [surface, render] of SURFACES) {
    for (const [fact, change, shown] of FACTS) {
      it(`${surface} shows ${fact}`, () => {
        const card = wallCardOf(picked);
        expect(render(card)).not.toContain(shown);
        expect(render(change(card))).toContain(shown);
      });
    }
  }
});

const at = { wallId: 'jd7k2m9qa45p', atMs: NOW, timeZone: TZ };
/** Every outcome an exit can have, with the words the prompt has always said for it (musher/exits/ before issue 13). */
const OUTCOMES: Array<[string, ExitOutcome, string, string[]]> = [
  [
    '1 in its pane',
    { ...at, exit: 'continue', result: 'continuing', where: 'pane', harnessName: null, model: null, allowanceLeftMicros: 38_000_000 },
    'Continuing this session on the platform key, here in this pane. Allowance left $38.00.',
    [],
  ],
  [
    '1 with no pane, uncapped',
    { ...at, exit: 'continue', result: 'continuing', where: 'terminal', harnessName: null, model: null, allowanceLeftMicros: null },
    'Run `sleds go jd7k2m9qa45p` in a terminal: it resumes this session on the platform key.',
    ['sleds go jd7k2m9qa45p'],
  ],
  [
    '4 for Codex',
    { ...at, exit: 'switch', result: 'continuing', where: 'terminal', harnessName: 'Codex', model: 'gpt-5.5-mini', allowanceLeftMicros: 1_500_000 },
    'Run `sleds go jd7k2m9qa45p` in a terminal: it resumes this Codex session on gpt-5.5-mini on the platform key. Allowance left $1.50.',
    ['sleds go jd7k2m9qa45p'],
  ],
  [
    '2 plain',
    { ...at, exit: 'hold', result: 'held', resumesAtMs: RESET, resumedBy: 'harness', harnessName: 'Claude Code', ownContinueHeldBack: false },
    'Holding: Claude Code continues by itself at Thursday 9:00 am EST. Nothing is spent until then.',
    [],
  ],
  [
    '2 moved',
    { ...at, exit: 'hold', result: 'scheduled', resumesAtMs: NOW + 2 * 3_600_000, resumedBy: 'sleds', harnessName: 'Claude Code', ownContinueHeldBack: true },
    "Holding until 2:00 pm EST; sleds resumes this session then. Claude Code's own continue at the reset is held back. /sled cancel undoes it.",
    ['/sled cancel'],
  ],
  [
    '2 for Codex',
    { ...at, exit: 'hold', result: 'scheduled', resumesAtMs: RESET, resumedBy: 'sleds', harnessName: 'Codex', ownContinueHeldBack: false },
    'Holding until Thursday 9:00 am EST; sleds resumes this session then. /sled cancel undoes it.',
    ['/sled cancel'],
  ],
  [
    '3',
    { ...at, exit: 'overnight', result: 'scheduled', startMs: Date.UTC(2026, 11, 1, 6, 0), endMs: Date.UTC(2026, 11, 1, 12, 0), job: 'night-4f2a9c', lowMicros: 6_400_000, highMicros: 15_000_000, capMicros: 20_000_000 },
    "Queued as overnight job night-4f2a9c for tonight's window (1:00am–7:00am) on the batch tier at ½ price ($6.40–15, cap $20): this session resumes headless where it stopped, in its own worktree. `sleds queue` shows it; /sled cancel undoes it.",
    ['sleds queue', 'sleds queue cancel night-4f2a9c'],
  ],
  [
    '6',
    { ...at, exit: 'defer', result: 'scheduled', runsAtMs: RESET },
    'Deferred: this session runs itself headless at Thursday 9:00 am EST on the same model; the result shows at your next prompt and in `sleds status`. /sled cancel undoes it.',
    ['sleds status', '/sled cancel'],
  ],
  [
    '5',
    { ...at, exit: 'handoff', result: 'handed-off', handoffId: 'k3m9x2qa4bn7', words: 'Handed off to Dana as k3m9x2qa4bn7.' },
    'Handed off to Dana as k3m9x2qa4bn7.',
    ['sleds handoffs'],
  ],
];

describe('the ExitOutcome model', () => {
  for (const [name, outcome, words, next] of OUTCOMES) {
    it(`${name}: the prompt says what it always said, the next commands are named, the schema takes it`, () => {
      expect(renderOutcomeForPrompt(outcome)).toBe(words);
      expect(nextCommands(outcome)).toEqual(next);
      for (const cmd of next.filter((c) => c.startsWith('sleds go'))) expect(words).toContain(cmd);
      expect(ExitOutcomeSchema.parse(JSON.parse(JSON.stringify(outcome)))).toEqual(outcome);
    });
  }

  it('/sled N answers with who chose which exit, then the outcome', () => {
    const [, hold, words] = OUTCOMES[3]!;
    expect(renderTakenForPrompt({ exit: 'hold', number: 2, title: 'Hold until reset', by: 'user', rule: null }, hold)).toBe(`2 Hold until reset. ${words}`);
    expect(renderTakenForPrompt({ exit: 'hold', number: 2, title: 'Hold until reset', by: 'policy', rule: 'reset is near' }, hold)).toBe(`The policy chose 2 Hold until reset (rule: reset is near). ${words}`);
  });

  it("the MCP handoff tool renders exit 5's outcome, not the prompt's sentence with its '5 Hand off to Dana.'", () => {
    const [, handoff] = OUTCOMES[8]!;
    const told = "Handed off to Dana as k3m9x2qa4bn7. This session's work is theirs now: stop here and tell the person.";
    expect(renderOutcomeForTool(handoff)).toBe(told);
    expect(renderHandOffForTool({ line: 'ignored when the outcome is there', outcome: handoff })).toBe(told);
    expect(renderHandOffForTool({ line: 'Handed off to Lee as q4bn7k3m9x2a.' })).toBe("Handed off to Lee as q4bn7k3m9x2a. This session's work is theirs now: stop here and tell the person.");
  });

  it('the schema refuses an outcome that lost a fact', () => {
    const [, defer] = OUTCOMES[7]!;
    const { runsAtMs: _dropped, ...rest } = defer as Extract<ExitOutcome, { exit: 'defer' }>;
    expect(ExitOutcomeSchema.safeParse(rest).success).toBe(false);
  });
});
