import { describe, expect, it } from 'vitest';
import { eachCase } from '../support/each-case.js';
import { formatDuration, parseDuration } from '../../core/policy/duration.js';
import { parseMoney } from '../../core/policy/money.js';
import { checkPolicyFile, formatIssuePath } from '../../core/policy/schema.js';
import { defaultPolicy, resolvePolicy } from '../../core/policy/resolve.js';
import { DEFAULT_POLICY_INPUT } from '../../core/policy/defaults.js';

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;

describe('durations', () => {
  it.each([
    ['45m', 45 * MIN],
    ['4h', 4 * HOUR],
    ['1d', DAY],
    ['7d', 7 * DAY],
    ['2w', 14 * DAY],
    ['90s', 90_000],
    ['1h30m', 90 * MIN],
    ['1h 30m', 90 * MIN],
    ['1.5h', 90 * MIN],
    [' 30M ', 30 * MIN],
  ])('%j is %d ms', (text, ms) => {
    expect(parseDuration(text)).toEqual({ ok: true, ms });
  });

  it.each([
    [45, /no unit.*45m/],
    ['45', /not a span/],
    ['soon', /not a span/],
    ['4 hours', /not a span/],
    ['-5m', /not a span/],
    [null, /expected a span/],
    [true, /expected a span/],
  ])('%j is refused with a hint', (value, message) => {
    const r = parseDuration(value);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error).toMatch(message);
  });

  it.each([
    [30_000, '30s'],
    [45 * MIN, '45m'],
    [2 * HOUR + 10 * MIN, '2h 10m'],
    [DAY + 4 * HOUR, '1d 4h'],
    [7 * DAY, '1w'],
    [10 * DAY, '10d'],
    [3 * HOUR, '3h'],
  ])('%d ms reads %s', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });
});

describe('money', () => {
  eachCase([
    ['$40', 40_000_000],
    [40, 40_000_000],
    ['40', 40_000_000],
    ['40.50 USD', 40_500_000],
    ['40.5 usd', 40_500_000],
    [40.5, 40_500_000],
    ['$0.10', 100_000],
    [0.1, 100_000],
    ['$1,500', 1_500_000_000],
    ['$0', 0],
    [0, 0],
    ['$ 12.345678', 12_345_678],
  ])('%j is %d micro-dollars, exactly', (value, micros) => {
    expect(parseMoney(value)).toEqual({ ok: true, micros });
  });

  eachCase([
    ['-5', /negative/],
    [-5, /not an amount/],
    ['€40', /not in US dollars/],
    ['40 EUR', /not in US dollars/],
    ['$40 USD', /dollars twice/],
    ['forty', /not an amount/],
    ['$1.1234567', /not an amount/],
    [null, /expected an amount/],
  ])('%j is refused: %s', (value, message) => {
    const r = parseMoney(value);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error).toMatch(message);
  });
});

describe('the policy file schema', () => {
  it('the built-in defaults are a valid policy with the documented shape', () => {
    expect(checkPolicyFile(DEFAULT_POLICY_INPUT).errors).toEqual([]);
    const p = defaultPolicy();
    expect(p.amberAt).toBe(90);
    expect(p.worth.levels.map((l) => [l.name, l.keepsMs])).toEqual([
      ['high', 4 * HOUR],
      ['normal', DAY],
      ['low', 7 * DAY],
    ]);
    expect(p.worth.default).toBeNull();
    expect(p.allowance.default).toEqual({ perDayMicros: 40_000_000, perWeekMicros: 150_000_000 });
    expect(p.overnight).toMatchObject({ from: '22:00', to: '06:00', fromMinute: 22 * 60, toMinute: 6 * 60, timeZone: null });
    expect(p.rules.map((r) => r.then)).toEqual(['handoff', 'hold', 'continue', 'overnight']);
    expect(p.rules.every((r) => r.line === null)).toBe(true);
    expect(p.rulesSource).toBe('defaults');
    expect(p.handoff).toEqual({ folder: null, allowUntracked: [] });
  });

  it('handoff.folder names the shared folder hand-offs travel through', () => {
    const r = resolvePolicy([{ source: '.sleds/policy.yml', data: { handoff: { folder: '~/Dropbox/sleds', allow_untracked: ['.env.test', 'fixtures/*.pem'] } } }]);
    expect(r.errors).toEqual([]);
    expect(r.policy?.handoff).toEqual({ folder: '~/Dropbox/sleds', allowUntracked: ['.env.test', 'fixtures/*.pem'] });
  });

  it.each<[string, unknown, string, RegExp]>([
    ['an exit nobody knows', { rules: [{ then: 'panic' }] }, 'rules[0].then', /expected one of continue\|hold\|overnight\|switch\|handoff\|defer\|ask/],
    ['a missing then', { rules: [{ when: { reset_within: '45m' } }] }, 'rules[0].then', /^missing: expected one of continue/],
    ['a span without a unit', { rules: [{ when: { reset_within: 45 }, then: 'hold' }] }, 'rules[0].when.reset_within', /no unit/],
    ['a misspelt condition', { rules: [{ when: { owner_idel: '30m' }, then: 'handoff' }] }, 'rules[0].when.owner_idel', /unknown condition/],
    ['an amber threshold over 100', { amber_at: 150 }, 'amber_at', /at most 100/],
    ['an amber threshold as text', { amber_at: 'high' }, 'amber_at', /expected a number, got "high"/],
    ['a cap in euros', { allowance: { default: { per_day: '€40' } } }, 'allowance.default.per_day', /US dollars/],
    ['a seat cap that is not money', { allowance: { seats: { dana: { per_week: 'lots' } } } }, 'allowance.seats.dana.per_week', /not an amount/],
    ['a level without keeps', { worth: { high: {} } }, 'worth.high.keeps', /missing/],
    ['a level named none', { worth: { none: { keeps: '1h' } } }, 'worth.none', /cannot name a worth level/],
    ['a time of day that is not one', { overnight: { from: '10pm', to: '06:00' } }, 'overnight.from', /time of day like "22:00"/],
    ['an empty overnight window', { overnight: { from: '22:00', to: '22:00' } }, 'overnight.to', /empty/],
    ['an unknown time zone', { overnight: { from: '22:00', to: '06:00', time_zone: 'Mars/Olympus' } }, 'overnight.time_zone', /IANA time zone/],
    ['a glob in the middle', { cheaper: { 'claude-*-5': 'claude-sonnet-5' } }, 'cheaper.claude-*-5', /only at the end/],
    ['rules that are not a list', { rules: { then: 'ask' } }, 'rules', /expected a list, got a mapping/],
    ['allowance_left as a word', { rules: [{ when: { allowance_left: 'some' }, then: 'continue' }] }, 'rules[0].when.allowance_left', /true, false or an amount/],
    ['a window with capitals', { rules: [{ when: { window: 'Five_Hour' }, then: 'hold' }] }, 'rules[0].when.window', /not a window name/],
    ['a relative hand-off folder', { handoff: { folder: 'shared/handoffs' } }, 'handoff.folder', /absolute path or ~\/…/],
  ])('%s is an error at its path', (_what, input, path, message) => {
    const r = checkPolicyFile(input);
    expect(r.file).toBeNull();
    const hit = r.errors.find((e) => formatIssuePath(e.path) === path);
    expect(hit, JSON.stringify(r.errors)).toBeDefined();
    expect(hit!.message).toMatch(message);
  });

  it('unknown keys are warnings naming them, and the rest of the file still applies', () => {
    const r = checkPolicyFile({ amber: 80, amber_at: 75, allowance: { default: { per_day: '$10', per_month: '$100' } }, rules: [{ then: 'hold', note: 'x' }] });
    expect(r.errors).toEqual([]);
    expect(r.warnings.map((w) => formatIssuePath(w.path)).sort()).toEqual(['allowance.default.per_month', 'amber', 'rules[0].note']);
    expect(r.file?.amber_at).toBe(75);
    expect(r.file?.allowance?.default?.per_day).toBe(10_000_000);
  });

  it('a level name a rule uses must exist in the merged policy', () => {
    const r = resolvePolicy([{ source: 'team.yml', data: { rules: [{ when: { worth: ['high', 'urgent'] }, then: 'continue' }, { when: { worth_at_least: 'critical' }, then: 'hold' }] } }]);
    expect(r.policy).toBeNull();
    expect(r.errors.map((e) => `${e.source} ${formatIssuePath(e.path)}: ${e.message}`)).toEqual([
      "team.yml rules[0].when.worth: 'urgent' is not a worth level (levels: high, normal, low)",
      "team.yml rules[1].when.worth_at_least: 'critical' is not a worth level (levels: high, normal, low)",
    ]);
  });

  it('the default worth must be a level or none', () => {
    const bad = resolvePolicy([{ source: 'u', data: { worth: { default: 'medium' } } }]);
    expect(bad.errors.map((e) => formatIssuePath(e.path))).toEqual(['worth.default']);
    const good = resolvePolicy([{ source: 'u', data: { worth: { default: 'normal' } } }]);
    expect(good.policy?.worth.default).toBe('normal');
  });

  it('reads the short forms: high: 4h, amber_at: 85%, overnight: none, a cap of none, an empty when', () => {
    const r = resolvePolicy([
      {
        source: 'f',
        data: {
          amber_at: '85%',
          worth: { urgent: '2h', later: { keeps: '3d' }, default: 'later' },
          overnight: 'none',
          allowance: { default: { per_day: '$20', per_week: 'none' }, seats: { Dana: { per_day: null } } },
          rules: [{ when: null, then: 'ask' }],
        },
      },
    ]);
    expect(r.errors).toEqual([]);
    const p = r.policy!;
    expect(p.amberAt).toBe(85);
    expect(p.worth.levels).toEqual([
      { name: 'urgent', keepsMs: 2 * HOUR },
      { name: 'later', keepsMs: 3 * DAY },
    ]);
    expect(p.overnight).toBeNull();
    expect(p.allowance.default).toEqual({ perDayMicros: 20_000_000, perWeekMicros: null });
    expect(p.allowance.seats.dana).toEqual({ perDayMicros: null });
    expect(p.rules[0]).toMatchObject({ name: 'always ask', when: {}, then: 'ask' });
  });

  it('a file that is not a mapping says what it should be', () => {
    const r = checkPolicyFile(['rules']);
    expect(r.errors[0]!.message).toMatch(/expected a mapping of amber_at, worth, allowance, overnight, cheaper, rules, worth_values, handoff, tracker, engine; got a list/);
  });
});
