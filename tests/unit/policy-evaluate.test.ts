import { describe, expect, it } from 'vitest';
import { eachCase } from '../support/each-case.js';
import { allowanceFor, amberAt, cheaperModel, evaluatePolicy, isWorthLevel, worthLevels, type PolicyContext } from '../../core/policy/evaluate.js';
import { PolicyDecisionSchema } from '../../core/policy/decision.js';
import { renderPolicyExplanation } from '../../core/policy/explain.js';
import { defaultPolicy, resolvePolicy } from '../../core/policy/resolve.js';
import { EXIT_KINDS, type ExitKind, type Policy } from '../../core/policy/schema.js';

const MIN = 60_000;
const HOUR = 60 * MIN;
const USD = 1_000_000;
/** Wednesday 10 June 2026, 16:00 UTC. */
const NOW = Date.UTC(2026, 5, 10, 16, 0);

function policyOf(data: Record<string, unknown>): Policy {
  const r = resolvePolicy([{ source: '.sleds/policy.yml', data }]);
  if (!r.policy) throw new Error(JSON.stringify(r.errors));
  return r.policy;
}

const ALL_OPEN = Object.fromEntries(EXIT_KINDS.map((k) => [k, { ok: true }])) as Record<ExitKind, { ok: boolean; why?: string }>;

function ctx(over: Partial<PolicyContext> = {}): PolicyContext {
  return {
    nowMs: NOW,
    timeZone: 'UTC',
    window: 'five_hour',
    resetAtMs: NOW + 3 * HOUR,
    worth: null,
    allowanceLeft: { dayMicros: 38 * USD, weekMicros: 112 * USD },
    owner: null,
    available: ALL_OPEN,
    ...over,
  };
}

type Row = [what: string, when: Record<string, unknown>, over: Partial<PolicyContext>, held: boolean, reason: RegExp, extra?: Record<string, unknown>];

const CONDITIONS: Row[] = [
  ['reset 30m away, within 45m', { reset_within: '45m' }, { resetAtMs: NOW + 30 * MIN }, true, /reset in 30m \(4:30pm\), within 45m/],
  ['reset exactly 45m away', { reset_within: '45m' }, { resetAtMs: NOW + 45 * MIN }, true, /within 45m/],
  ['reset 46m away', { reset_within: '45m' }, { resetAtMs: NOW + 46 * MIN }, false, /reset in 46m \(4:46pm\), not within 45m/],
  ['reset unknown', { reset_within: '45m' }, { resetAtMs: null }, false, /reset time unknown/],
  ['reset already passed', { reset_within: '45m' }, { resetAtMs: NOW - MIN }, true, /reset already due/],

  ['worth high, wanted high', { worth: 'high' }, { worth: 'high' }, true, /worth high is high/],
  ['worth normal, wanted high', { worth: 'high' }, { worth: 'normal' }, false, /worth normal, not high/],
  ['worth normal, wanted high or normal', { worth: ['high', 'normal'] }, { worth: 'normal' }, true, /is one of high or normal/],
  ['no worth and no default', { worth: 'high' }, { worth: null }, false, /no worth set/],
  ['no worth, the default is high', { worth: 'high' }, { worth: null }, true, /worth high \(the default\) is high/, { worth: { default: 'high' } }],
  ['a worth the policy does not know', { worth: 'high' }, { worth: 'urgent' }, false, /'urgent' is not a level/],

  ['worth high, at least normal', { worth_at_least: 'normal' }, { worth: 'high' }, true, /worth high is at least normal/],
  ['worth normal, at least normal', { worth_at_least: 'normal' }, { worth: 'normal' }, true, /at least normal/],
  ['worth low, at least normal', { worth_at_least: 'normal' }, { worth: 'low' }, false, /worth low is below normal/],
  ['no worth, at least low', { worth_at_least: 'low' }, { worth: null }, false, /no worth set/],

  ['allowance left', { allowance_left: true }, {}, true, /allowance left \$38\.00 today, \$112\.00 this week/],
  ['today spent', { allowance_left: true }, { allowanceLeft: { dayMicros: 0, weekMicros: 100 * USD } }, false, /\$0\.00 today.*: spent/],
  ['the week spent', { allowance_left: true }, { allowanceLeft: { dayMicros: 10 * USD, weekMicros: 0 } }, false, /\$0\.00 this week: spent/],
  ['no caps at all', { allowance_left: true }, { allowanceLeft: { dayMicros: null, weekMicros: null } }, true, /no daily cap, no weekly cap/],
  ['no platform key', { allowance_left: true }, { allowanceLeft: null }, false, /no platform key configured/],
  ['$5 wanted, $5 left', { allowance_left: '$5' }, { allowanceLeft: { dayMicros: 5 * USD, weekMicros: 100 * USD } }, true, /at least \$5\.00/],
  ['$5 wanted, $4.99 left today', { allowance_left: '$5' }, { allowanceLeft: { dayMicros: 4_990_000, weekMicros: 100 * USD } }, false, /\$4\.99 today.*less than \$5\.00/],
  ['$5 wanted, $3 left this week', { allowance_left: 5 }, { allowanceLeft: { dayMicros: 20 * USD, weekMicros: 3 * USD } }, false, /less than \$5\.00/],
  ['allowance_left false, spent', { allowance_left: false }, { allowanceLeft: { dayMicros: 0, weekMicros: 9 * USD } }, true, /spent/],
  ['allowance_left false, no key', { allowance_left: false }, { allowanceLeft: null }, true, /no platform key/],
  ['allowance_left false, money left', { allowance_left: false }, {}, false, /not spent/],

  ['owner idle 42m', { owner_idle: '30m' }, { owner: { handle: 'dana', idleMs: 42 * MIN } }, true, /owner dana idle 42m, at least 30m/],
  ['owner idle exactly 30m', { owner_idle: '30m' }, { owner: { handle: 'dana', idleMs: 30 * MIN } }, true, /at least 30m/],
  ['owner idle 12m', { owner_idle: '30m' }, { owner: { handle: 'dana', idleMs: 12 * MIN } }, false, /owner dana idle 12m, less than 30m/],
  ['owner unknown', { owner_idle: '30m' }, { owner: null }, false, /owner is unknown/],
  ["owner's idle time unknown", { owner_idle: '30m' }, { owner: { handle: 'dana', idleMs: null } }, false, /dana: idle time unknown/],

  // 16:00 UTC; the window 22:00–06:00 UTC ends 14 h from now.
  ['worth low (7d) keeps until morning', { keeps_until_morning: true }, { worth: 'low' }, true, /worth low keeps 1w, past the overnight window's end \(6:00am\)/],
  ['worth normal (1d) keeps until morning', { keeps_until_morning: true }, { worth: 'normal' }, true, /past the overnight window's end/],
  ['worth high (4h) does not', { keeps_until_morning: true }, { worth: 'high' }, false, /worth high keeps 4h, only until 8:00pm; the overnight window ends 6:00am/],
  ['keeps_until_morning false, worth high', { keeps_until_morning: false }, { worth: 'high' }, true, /only until 8:00pm/],
  ['keeps_until_morning false, worth low', { keeps_until_morning: false }, { worth: 'low' }, false, /past the overnight/],
  ['keeps: no worth', { keeps_until_morning: true }, { worth: null }, false, /no worth set/],
  ['keeps: no worth, and false is not true either', { keeps_until_morning: false }, { worth: null }, false, /no worth set/],
  ['keeps: no overnight window', { keeps_until_morning: true }, { worth: 'low' }, false, /no overnight window/, { overnight: 'none' }],
  ['keeps: a 15h level inside the window', { keeps_until_morning: true }, { worth: 'x', nowMs: NOW + 8 * HOUR }, true, /past the overnight/, { worth: { x: '15h' } }],

  ['window five_hour', { window: 'five_hour' }, {}, true, /binding window five_hour/],
  ['window seven_day, binding five_hour', { window: 'seven_day' }, {}, false, /binding window five_hour, not seven_day/],
  ['window glob seven_day*', { window: 'seven_day*' }, { window: 'seven_day_opus' }, true, /seven_day_opus/],
  ['window list', { window: ['five_hour', 'seven_day'] }, { window: 'seven_day' }, true, /seven_day/],
  ['window unknown', { window: 'five_hour' }, { window: null }, false, /binding window unknown/],
];

describe('each condition', () => {
  eachCase(CONDITIONS)('%s', (_what, when, over, held, reason, extra) => {
    const policy = policyOf({ ...(extra ?? {}), rules: [{ name: 'the rule', when, then: 'hold' }] });
    const d = evaluatePolicy(policy, ctx(over));
    expect(d.choice).toBe(held ? 'hold' : 'ask');
    expect(d.rule?.name ?? null).toBe(held ? 'the rule' : null);
    expect(d.trace).toHaveLength(1);
    expect(d.trace[0]!.matched).toBe(held);
    expect(d.trace[0]!.reasons.join(' | ')).toMatch(reason);
  });
});

describe('the rules in order', () => {
  const rules = [
    { name: 'A', when: { owner_idle: '30m' }, then: 'handoff' },
    { name: 'B', when: { reset_within: '45m' }, then: 'hold' },
    { name: 'C', when: { worth: 'high', allowance_left: true }, then: 'continue' },
    { name: 'D', then: 'defer' },
  ];
  const idle = { owner: { handle: 'dana', idleMs: HOUR } };
  const soon = { resetAtMs: NOW + 10 * MIN };

  it.each<[string, Partial<PolicyContext>, string, string[]]>([
    ['the first match wins over later ones', { ...idle, ...soon, worth: 'high' }, 'handoff', ['A']],
    ['a rule that fails passes to the next', { ...soon, worth: 'high' }, 'hold', ['A', 'B']],
    ['every condition must hold', { worth: 'high', allowanceLeft: { dayMicros: 0, weekMicros: 50 * USD } }, 'defer', ['A', 'B', 'C', 'D']],
    ['an unavailable exit is skipped', { ...idle, available: { ...ALL_OPEN, handoff: { ok: false, why: 'no teammate in the roster' } } }, 'defer', ['A', 'B', 'C', 'D']],
    ['an unavailable exit without a why', { ...soon, available: { ...ALL_OPEN, hold: { ok: false } } }, 'defer', ['A', 'B', 'C', 'D']],
  ])('%s', (_what, over, choice, evaluated) => {
    const d = evaluatePolicy(policyOf({ rules }), ctx(over));
    expect(d.choice).toBe(choice);
    expect(d.trace.map((t) => t.name)).toEqual(evaluated);
    expect(d.trace.filter((t) => t.matched).map((t) => t.name)).toEqual([evaluated[evaluated.length - 1]]);
    expect(d.rule?.index).toBe(evaluated.length - 1);
  });

  it('the skipped rule says its conditions held and why its exit could not apply', () => {
    const d = evaluatePolicy(policyOf({ rules }), ctx({ ...idle, available: { ...ALL_OPEN, handoff: { ok: false, why: 'no teammate in the roster' } } }));
    expect(d.trace[0]).toMatchObject({ name: 'A', matched: false });
    expect(d.trace[0]!.reasons).toEqual(['owner dana idle 1h, at least 30m', 'but handoff cannot apply: no teammate in the roster']);
  });

  it('a failing rule lists every condition that failed, not only the first', () => {
    const d = evaluatePolicy(policyOf({ rules: [{ when: { worth: 'high', reset_within: '45m', owner_idle: '1h' }, then: 'hold' }] }), ctx({ worth: 'low' }));
    expect(d.trace[0]!.reasons).toHaveLength(3);
  });

  it('when no rule matches, the implicit last rule asks', () => {
    const d = evaluatePolicy(policyOf({ rules: rules.slice(0, 3) }), ctx());
    expect(d).toMatchObject({ choice: 'ask', rule: null });
    expect(d.trace.map((t) => t.matched)).toEqual([false, false, false]);
  });

  it('a rule that says ask asks, and names itself', () => {
    const d = evaluatePolicy(policyOf({ rules: [{ name: 'always ask first', then: 'ask' }, ...rules] }), ctx({ ...idle }));
    expect(d.choice).toBe('ask');
    expect(d.rule).toEqual({ index: 0, name: 'always ask first', line: null });
  });

  it('no rules at all: ask', () => {
    expect(evaluatePolicy(policyOf({ rules: [] }), ctx({ ...idle }))).toMatchObject({ choice: 'ask', rule: null, trace: [] });
  });

  it('a rule without conditions always matches', () => {
    const d = evaluatePolicy(policyOf({ rules: [{ then: 'defer' }] }), ctx());
    expect(d.trace[0]).toMatchObject({ name: 'always defer', matched: true, reasons: ['no conditions'] });
  });
});

describe('the built-in rules', () => {
  const policy = defaultPolicy();
  it.each<[string, Partial<PolicyContext>, string]>([
    ["the area's owner is idle: hand off", { owner: { handle: 'dana', idleMs: 40 * MIN }, resetAtMs: NOW + 10 * MIN }, 'handoff'],
    ['the reset is 20 minutes away: hold', { resetAtMs: NOW + 20 * MIN, worth: 'high' }, 'hold'],
    ['high worth with allowance left: continue on the key', { worth: 'high' }, 'continue'],
    ['high worth, no platform key; it does not keep until morning: ask', { worth: 'high', allowanceLeft: null, available: { ...ALL_OPEN, continue: { ok: false, why: 'no key configured' } } }, 'ask'],
    ['normal worth keeps until morning: overnight', { worth: 'normal' }, 'overnight'],
    ['normal worth, no overnight exit: ask', { worth: 'normal', available: { ...ALL_OPEN, overnight: { ok: false, why: 'no overnight window' } } }, 'ask'],
    ['unrated work: ask', { worth: null }, 'ask'],
  ])('%s', (_what, over, choice) => {
    expect(evaluatePolicy(policy, ctx(over)).choice).toBe(choice);
  });
});

describe('the decision as JSON', () => {
  it('reads back through its schema unchanged, and tolerates fields it does not know', () => {
    const d = evaluatePolicy(defaultPolicy(), ctx({ worth: 'high' }));
    const back = PolicyDecisionSchema.parse(JSON.parse(JSON.stringify({ ...d, future: 1 })));
    expect(back).toEqual(d);
    expect(PolicyDecisionSchema.safeParse({ choice: 'panic', rule: null, trace: [] }).success).toBe(false);
  });
});

describe('the explanation', () => {
  it('names each rule, why it did not match, the choice and that the policy made it', () => {
    const policy = { ...policyOf({ rules: [{ name: 'idle owner', when: { owner_idle: '30m' }, then: 'handoff' }, { name: 'near reset', when: { reset_within: '45m' }, then: 'hold' }, { then: 'defer' }] }) };
    policy.rules = policy.rules.map((r, i) => ({ ...r, line: 10 + i * 4 }));
    const d = evaluatePolicy(policy, ctx({ resetAtMs: NOW + 20 * MIN }));
    const text = renderPolicyExplanation(d, { wallId: 'jd7k2m9qa4zp', ruleCount: policy.rules.length });
    expect(text).toBe(
      [
        'Policy at wall jd7k2m9qa4zp — rules from .sleds/policy.yml',
        '  1. idle owner (.sleds/policy.yml:10): no',
        "       ✗ the area's owner is unknown",
        '  2. near reset (.sleds/policy.yml:14): matched → hold',
        '       ✓ reset in 20m (4:20pm), within 45m',
        '  (1 later rule not reached: the first match wins)',
        'Chose hold: the policy chose it (rule 2, "near reset", .sleds/policy.yml:14).',
        '',
      ].join('\n'),
    );
  });

  it('says it asked when no rule chose', () => {
    const d = evaluatePolicy(defaultPolicy(), ctx());
    const text = renderPolicyExplanation(d);
    expect(text).toMatch(/^Policy evaluation — rules from the built-in defaults\n/);
    expect(text).toContain('  1. hand off when the owner is idle (built-in): no');
    expect(text).toContain('  otherwise: ask');
    expect(text).toMatch(/Asked: no rule chose an exit/);
    expect(text).not.toMatch(/the policy chose it/);
  });

  it('says it asked when a rule said to ask', () => {
    const text = renderPolicyExplanation(evaluatePolicy(policyOf({ rules: [{ name: 'be careful', then: 'ask' }] }), ctx()));
    expect(text).toMatch(/Asked: rule 1 \("be careful"\) says to ask/);
  });
});

describe('what the wall card asks of the policy', () => {
  const policy = policyOf({
    amber_at: 85,
    allowance: { default: { per_day: '$40', per_week: '$150' }, seats: { dana: { per_day: '$60' }, intern: { per_day: 0 }, ops: { per_week: 'none' } } },
    cheaper: { 'claude-opus-5-5': 'claude-sonnet-5', 'claude-opus-*': 'claude-sonnet-4-6', 'claude-*': 'claude-haiku-5-5', 'claude-haiku-5-5': 'none' },
  });

  it.each<[string | null, number | null, number | null]>([
    [null, 40 * USD, 150 * USD],
    ['bob', 40 * USD, 150 * USD],
    ['dana', 60 * USD, 150 * USD],
    ['Dana', 60 * USD, 150 * USD],
    ['intern', 0, 150 * USD],
    ['ops', 40 * USD, null],
  ])('allowance for %s: %s a day, %s a week', (seat, perDay, perWeek) => {
    expect(allowanceFor(policy, seat)).toEqual({ perDayMicros: perDay, perWeekMicros: perWeek });
  });

  it('no allowance section in a file means no caps (a missing cap is no cap)', () => {
    expect(allowanceFor(policyOf({ allowance: { default: { per_day: '$10' } } }), 'x')).toEqual({ perDayMicros: 10 * USD, perWeekMicros: null });
  });

  it.each<[string, string | null]>([
    ['claude-opus-5-5', 'claude-sonnet-5'],
    // The built-in exact step stays: a file's `cheaper` adds to the built-in steps.
    ['claude-opus-5', 'claude-sonnet-5'],
    ['claude-opus-6', 'claude-sonnet-4-6'],
    ['claude-opus-4-8', 'claude-sonnet-4-6'],
    ['claude-sonnet-5', 'claude-haiku-5-5'],
    ['claude-haiku-5-5', null],
    ['gpt-6-sol', 'gpt-6-luna'],
    ['mistral-large', null],
  ])('the cheaper step for %s is %s (exact first, then the longest prefix)', (model, cheaper) => {
    expect(cheaperModel(policy, model)).toBe(cheaper);
  });

  it('amber threshold and worth levels', () => {
    expect(amberAt(policy)).toBe(85);
    expect(worthLevels(policy).map((l) => l.name)).toEqual(['high', 'normal', 'low']);
    expect(isWorthLevel(policy, 'normal')).toBe(true);
    expect(isWorthLevel(policy, 'urgent')).toBe(false);
  });
});
