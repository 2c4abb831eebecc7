import { describe, expect, it } from 'vitest';
import { eachCase } from '../support/each-case.js';
import type { Band } from '../../core/estimate/band.js';
import { modelLadder } from '../../core/picker/models.js';
import { barApplies, buildPicker, gateReason, HELD, worthRatio, type PickerBar, type PickerInput } from '../../core/picker/rows.js';
import { bandText, pickerText, wallLine } from '../../core/picker/words.js';
import { buildPolicy, checkPolicyFile } from '../../core/policy/schema.js';
import { mergePolicyLayers } from '../../core/policy/merge.js';

const NOW = Date.UTC(2026, 10, 30, 14, 0); // 2:00 pm UTC
const MIN = 60_000;
const $ = (d: number): number => Math.round(d * 1_000_000);

function band(lo: number, hi: number, extra: Partial<Band> = {}): Band {
  return { lowMicros: $(lo), highMicros: $(hi), lowMinutes: 20, highMinutes: 55, fit: { inBand: 4, of: 5 }, basis: 'receipts', n: 12, ...extra };
}

const BANDS: Record<string, Band | null> = {
  'claude-opus-5-5': band(4, 11),
  'claude-sonnet-5-5': band(2, 6),
  'claude-haiku-5-5': null,
  'gpt-6-sol': band(3, 8),
  'gpt-6-luna': band(0.5, 1.5),
};

function fiveHour(usedPct: number, dollarsToWall: number | null, crossesAtMs: number | null): PickerBar {
  return { provider: 'anthropic', window: 'five_hour', name: '5-hour', usedPct, resetsAtMs: NOW + 5 * 60 * MIN, dollarsToWallMicros: dollarsToWall === null ? null : $(dollarsToWall), crossesAtMs };
}

function input(over: Partial<PickerInput> = {}): PickerInput {
  return {
    nowMs: NOW,
    timeZone: 'UTC',
    task: { id: 'k3m9x2qa45pz', title: 'Fix the flaky login test', worth: 'normal', state: 'open' },
    worthValueMicros: $(50),
    running: null,
    atWall: null,
    ladders: [
      { harness: 'claude-code', name: 'Claude Code', provider: 'anthropic', models: ['claude-opus-5-5', 'claude-sonnet-5-5', 'claude-haiku-5-5'] },
      { harness: 'codex', name: 'Codex', provider: 'openai', models: ['gpt-6-sol', 'gpt-6-luna'] },
    ],
    bandOf: (_h, model) => BANDS[model] ?? null,
    bars: [fiveHour(38, 20, NOW + 100 * MIN), { provider: 'openai', window: 'codex_primary', name: 'Codex primary', usedPct: 10, resetsAtMs: null, dollarsToWallMicros: null, crossesAtMs: null }],
    overnight: { startMs: NOW + 8 * 60 * MIN, endMs: NOW + 16 * 60 * MIN },
    keyFor: { anthropic: true, openai: false },
    teammates: [{ handle: 'dana', name: 'Dana' }],
    handoffReady: true,
    ...over,
  };
}

/** The rows as a table: seat · band · headroom · wall · verb. */
function table(i: PickerInput): string[] {
  return buildPicker(i).rows.map((r) => [r.seat === 'you' ? `${r.harness}/${r.model}` : r.seat, r.bandText, r.headroom, r.wall ?? '-', r.verb, r.reason ?? ''].join(' | '));
}

describe('picker rows', () => {
  it('one row per harness × model, the overnight batch tier, each teammate and a person, with verbs', () => {
    expect(table(input())).toEqual([
      'claude-code/claude-opus-5-5 | $4–11 · 20–55 min | 62% of the bar left | lands before the wall | Dispatch | ',
      'claude-code/claude-sonnet-5-5 | $2–6 · 20–55 min | 62% of the bar left | lands before the wall | Dispatch | ',
      'claude-code/claude-haiku-5-5 | no band yet | 62% of the bar left | - | Dispatch | ',
      'codex/gpt-6-sol | $3–8 · 20–55 min | 90% of the bar left | - | Dispatch | ',
      'codex/gpt-6-luna | $0.50–1.50 · 20–55 min | 90% of the bar left | - | Dispatch | ',
      'overnight batch | $2–5.50 · 20–55 min | off the bar (platform key) | - | Queue | ½ price · runs 10:00pm–6:00am · lands by 6:00am',
      'dana | $4–11 · 20–55 min | their own bars | - | Offer | not at a wall: ask them',
      'a person with the agent | $4–11 · 20–55 min | a person’s time | - | Offer | a person drives the agent: post it to the team',
    ]);
  });

  it('a harness that cannot run here: its rows have no verb and say why; the other harness keeps its verbs', () => {
    const why = 'Codex is not installed here (not on PATH, nor binaries.codex in config.yml)';
    const rows = buildPicker(input({ cannotRun: { codex: why } })).rows.filter((r) => r.kind === 'here');
    expect(rows.filter((r) => r.harness === 'codex').map((r) => [r.verb, r.reason])).toEqual(rows.filter((r) => r.harness === 'codex').map(() => ['—', why]));
    expect(rows.some((r) => r.harness === 'claude-code' && r.verb !== '—')).toBe(true);
  });

  it('a task with no worth is held: every row says so, the bands still show, and the text leads with it', () => {
    const view = buildPicker(input({ task: { id: 'k3m9x2qa45pz', title: 'Fix it', worth: null, state: 'open' }, worthValueMicros: null }));
    expect(view.held).toBe(HELD);
    expect(new Set(view.rows.map((r) => r.verb))).toEqual(new Set(['—']));
    expect(view.rows.every((r) => r.reason === `held: ${HELD}`)).toBe(true);
    expect(view.rows[0]!.bandText).toBe('$4–11 · 20–55 min');
    expect(view.text).toContain(`Held: ${HELD}.`);
  });

  eachCase([
    // worth value, band high → gate
    [$(50), 11, null],
    [$(10), 11, 'may cost up to $11, more than normal worth of $10'],
    [$(11), 11, null],
    [null, 11, null],
  ])('the gate by worth ÷ cost: worth %s against a band topping out at %s micro-dollars → %s', (worth, hi, reason) => {
    expect(gateReason('normal', worth, band(1, hi))).toBe(reason);
  });

  it('worth ÷ cost is on each row; a row that may cost more than the worth is "—" with the reason, cheaper rows stay open', () => {
    const view = buildPicker(input({ task: { id: 't', title: 'Tidy', worth: 'low', state: 'open' }, worthValueMicros: $(7) }));
    const byModel = Object.fromEntries(view.rows.filter((r) => r.kind === 'here').map((r) => [r.model, r]));
    expect(byModel['claude-opus-5-5']).toMatchObject({ verb: '—', reason: 'may cost up to $11, more than low worth of $7', worthRatio: 0.64 });
    expect(byModel['claude-sonnet-5-5']).toMatchObject({ verb: 'Dispatch', worthRatio: 1.17 });
    expect(byModel['claude-haiku-5-5']).toMatchObject({ verb: 'Dispatch', worthRatio: null });
    // The overnight tier halves the band: $2–5.50 passes a $7 worth.
    expect(view.rows.find((r) => r.kind === 'overnight')).toMatchObject({ verb: 'Queue', bandText: '$2–5.50 · 20–55 min' });
    expect(view.rows.find((r) => r.kind === 'teammate')!.verb).toBe('—');
    expect(worthRatio($(50), band(1, 0))).toBe(Infinity);
  });

  it.each([
    // dollars to the wall, band high → crossing
    [20, 11, false, 'lands before the wall'],
    [6, 11, true, 'crosses before it lands'],
    [11, 11, false, 'lands before the wall'],
    [null, 11, null, null],
  ])('the wall against the band: %s micro-dollars to the wall, band up to %s → %s', (toWall, hi, crosses, words) => {
    const view = buildPicker(input({ bars: [fiveHour(40, toWall, NOW + 100 * MIN)], bandOf: () => band(2, hi) }));
    expect(view.rows[0]).toMatchObject({ crosses, wall: words });
  });

  it('a full bar closes its rows until the reset; the other harness stays open', () => {
    const view = buildPicker(input({ bars: [fiveHour(100, 0, null)] }));
    expect(view.rows[0]).toMatchObject({ verb: '—', reason: 'the 5-hour bar is full until 7:00pm', headroom: '0% of the bar left' });
    expect(view.rows.find((r) => r.harness === 'codex' && r.kind === 'here')!.verb).toBe('Dispatch');
    expect(view.wallLine).toBe('the 5-hour bar is full; it resets at 7:00 pm UTC');
  });

  it('a running task: its own row is "—", the others Switch; at a wall a teammate gets Hand off', () => {
    const running = { harness: 'claude-code' as const, model: 'claude-opus-5-5', sessionId: 'abcdef1234567890' };
    const view = buildPicker(input({ running, atWall: { sessionId: running.sessionId, wallId: 'w1' } }));
    expect(view.rows[0]).toMatchObject({ verb: '—', reason: 'it runs here now (session abcdef12)' });
    expect(view.rows[1]!.verb).toBe('Switch');
    expect(view.rows.find((r) => r.kind === 'teammate')).toMatchObject({ verb: 'Hand off', reason: 'Dana picks it up with /sled pickup' });
    const notReady = buildPicker(input({ running, atWall: { sessionId: running.sessionId, wallId: 'w1' }, handoffReady: false }));
    expect(notReady.rows.find((r) => r.kind === 'teammate')).toMatchObject({ verb: '—', reason: "hand-offs are not set up on this machine — 'sleds keys init'" });
  });

  it('the overnight row needs a window and a key for its provider', () => {
    expect(buildPicker(input({ overnight: null })).rows.find((r) => r.kind === 'overnight')).toMatchObject({ verb: '—', reason: 'no overnight window in the policy' });
    expect(buildPicker(input({ keyFor: { anthropic: false, openai: false } })).rows.find((r) => r.kind === 'overnight')).toMatchObject({
      verb: '—',
      reason: "no platform key for anthropic: the batch tier runs on it ('sleds key set anthropic')",
    });
  });

  it('a done task offers nothing', () => {
    const view = buildPicker(input({ task: { id: 't', title: 'x', worth: 'high', state: 'done' } }));
    expect(view.rows.every((r) => r.verb === '—' && r.reason === 'the task is done')).toBe(true);
    expect(view.held).toBeNull();
  });

  it('the wall line before starting, and the paragraph naming the best rows', () => {
    const view = buildPicker(input({ bars: [fiveHour(70, 6, NOW + 100 * MIN)] }));
    expect(view.wallLine).toBe('$6 more; you will cross at 3:40 pm UTC');
    expect(view.text).toBe(
      'Task k3m9x2qa45pz "Fix the flaky login test", worth normal ($50). Best: ' +
        'row 5, Codex · gpt-6-luna: $0.50–1.50 · 20–55 min, 80% in band → Dispatch; ' +
        'row 6, overnight batch · opus 5.5: $2–5.50 · 20–55 min, 80% in band → Queue (½ price · runs 10:00pm–6:00am · lands by 6:00am); ' +
        'row 2, Claude Code · sonnet 5.5: $2–6 · 20–55 min, 80% in band, 30% of the bar left, lands before the wall → Dispatch. ' +
        'Wall: $6 more; you will cross at 3:40 pm UTC.',
    );
  });
});

describe('picker words', () => {
  eachCase([
    [{ usedPct: 70, dollarsToWallMicros: $(6), crossesAtMs: NOW + 100 * MIN }, '$6 more; you will cross at 3:40 pm UTC'],
    [{ usedPct: 70, dollarsToWallMicros: $(6), crossesAtMs: null }, '$6 more to the 5-hour wall; at this pace it resets first'],
    [{ usedPct: 70, dollarsToWallMicros: null, crossesAtMs: NOW + 100 * MIN }, 'you will cross the 5-hour wall at 3:40 pm UTC'],
    [{ usedPct: 70, dollarsToWallMicros: null, crossesAtMs: null }, null],
    [{ usedPct: 100, dollarsToWallMicros: 0, crossesAtMs: null }, 'the 5-hour bar is full; it resets at 7:00 pm UTC'],
  ])('wall line %o → %s', (w, line) => {
    expect(wallLine({ nowMs: NOW, timeZone: 'UTC', name: '5-hour', resetsAtMs: NOW + 5 * 60 * MIN, ...w })).toBe(line);
  });

  eachCase([
    [band(4, 11), '$4–11 · 20–55 min'],
    [band(0.4, 0.9, { basis: 'prior', n: 0, fit: null }), '$0.40–0.90 · 20–55 min (prior)'],
    [band(5, 5, { lowMinutes: 30, highMinutes: 30 }), '$5 · 30 min'],
    [null, 'no band yet'],
  ])('band %o → %s', (b, text) => {
    expect(bandText(b)).toBe(text);
  });

  it('a model-specific weekly bar binds only its family', () => {
    expect(barApplies({ provider: 'anthropic', window: 'seven_day_opus' }, 'anthropic', 'claude-opus-5-5')).toBe(true);
    expect(barApplies({ provider: 'anthropic', window: 'seven_day_opus' }, 'anthropic', 'claude-sonnet-5-5')).toBe(false);
    expect(barApplies({ provider: 'anthropic', window: 'five_hour' }, 'openai', 'gpt-6-sol')).toBe(false);
  });

  it('a paragraph with no open seat says why', () => {
    const text = pickerText({ task: { id: 't', title: 'x', worth: 'low', state: 'open' } as never, worthValueMicros: $(1), rows: buildPicker(input({ worthValueMicros: $(0.1), overnight: null, bandOf: () => band(4, 11) })).rows, held: null, wallLine: null });
    expect(text).toMatch(/^Task t "x", worth low \(\$1\)\. No seat is open: Claude Code · opus 5.5 — may cost up to \$11/);
  });
});

describe('models offered', () => {
  const cheaper: Record<string, string> = { 'claude-opus-5-5': 'claude-sonnet-5-5', 'claude-sonnet-5-5': 'claude-haiku-5-5', a: 'b', b: 'c', c: 'a' };
  it.each([
    ['claude-opus-5-5', ['claude-opus-5-5', 'claude-sonnet-5-5', 'claude-haiku-5-5']],
    ['claude-sonnet-5-5', ['claude-sonnet-5-5', 'claude-haiku-5-5']],
    ['gpt-5.1-codex', ['gpt-5.1-codex']],
    ['a', ['a', 'c']],
  ])('%s → %o (cheaper steps the price table knows, no cycles)', (start, ladder) => {
    expect(modelLadder(start, (m) => cheaper[m] ?? null, (m) => m !== 'b')).toEqual(ladder);
  });
});

describe('policy worth values', () => {
  it('defaults give dollars per level; a file adds to them or changes one', () => {
    const build = (files: Array<Record<string, unknown>>) => {
      const merged = mergePolicyLayers(files.map((data) => ({ source: 'f', data })));
      const check = checkPolicyFile(merged.data);
      expect(check.errors).toEqual([]);
      return buildPolicy(check.file!, 'f').policy.worthValues;
    };
    expect(build([])).toEqual({ high: $(200), normal: $(50), low: $(10) });
    expect(build([{ worth_values: { low: '$25' } }])).toEqual({ high: $(200), normal: $(50), low: $(25) });
    expect(checkPolicyFile({ worth_values: { high: 'lots' } }).errors[0]!.path).toEqual(['worth_values', 'high']);
  });
});
