import { describe, expect, it } from 'vitest';
import { resolvePolicy } from '../../core/policy/resolve.js';
import { deepMerge } from '../../core/policy/merge.js';
import { formatIssuePath } from '../../core/policy/schema.js';
import { allowanceFor, cheaperModel } from '../../core/policy/evaluate.js';

const USD = 1_000_000;
const TEAM = '.sleds/policy.yml';
const USER = '~/.config/sleds/policy.yml';

function resolve(team: Record<string, unknown> | null, user: Record<string, unknown> | null) {
  const layers = [];
  if (team) layers.push({ source: TEAM, data: team });
  if (user) layers.push({ source: USER, data: user });
  return resolvePolicy(layers);
}

describe('merging the team file and the user file', () => {
  const team = {
    amber_at: 80,
    worth: { critical: '2h', routine: '3d', default: 'routine' },
    allowance: { default: { per_day: '$40', per_week: '$150' }, seats: { dana: { per_day: '$60' } } },
    rules: [
      { name: 'team 1', when: { reset_within: '30m' }, then: 'hold' },
      { name: 'team 2', then: 'defer' },
    ],
  };

  it('the user wins key by key; what the user does not name stays the team’s', () => {
    const r = resolve(team, { amber_at: 95, allowance: { seats: { dana: { per_week: '$200' } } } });
    expect(r.errors).toEqual([]);
    const p = r.policy!;
    expect(p.amberAt).toBe(95);
    expect(p.worth.levels.map((l) => l.name)).toEqual(['critical', 'routine']);
    expect(allowanceFor(p, 'dana')).toEqual({ perDayMicros: 60 * USD, perWeekMicros: 200 * USD });
    expect(allowanceFor(p, 'bob')).toEqual({ perDayMicros: 40 * USD, perWeekMicros: 150 * USD });
    expect(r.provenance).toMatchObject({ amber_at: [TEAM, USER], worth: [TEAM], allowance: [TEAM, USER], overnight: ['defaults'], rules: [TEAM] });
    expect(p.rulesSource).toBe(TEAM);
  });

  it('rules are replaced whole, never spliced', () => {
    const r = resolve(team, { rules: [{ name: 'mine', then: 'ask' }] });
    expect(r.policy!.rules.map((x) => x.name)).toEqual(['mine']);
    expect(r.policy!.rulesSource).toBe(USER);
  });

  it('a section the files name replaces the default section: no per_week written means no weekly cap', () => {
    const r = resolve({ allowance: { default: { per_day: '$60' } } }, null);
    expect(allowanceFor(r.policy!, null)).toEqual({ perDayMicros: 60 * USD, perWeekMicros: null });
  });

  it('cheaper steps add to the built-in ones, and none removes one', () => {
    const p = resolve({ cheaper: { 'my-model': 'my-small-model', 'claude-opus-5-5': 'none' } }, null).policy!;
    expect(cheaperModel(p, 'my-model')).toBe('my-small-model');
    expect(cheaperModel(p, 'claude-sonnet-5-5')).toBe('claude-haiku-5-5');
    expect(cheaperModel(p, 'claude-opus-5-5')).toBeNull();
  });

  it('worth with only a default keeps the built-in levels; worth with levels replaces them', () => {
    expect(resolve({ worth: { default: 'normal' } }, null).policy!.worth).toMatchObject({ default: 'normal', levels: [{ name: 'high' }, { name: 'normal' }, { name: 'low' }] });
    expect(resolve({ worth: { only: '1h' }, rules: [] }, null).policy!.worth.levels.map((l) => l.name)).toEqual(['only']);
  });

  it('levels of its own without rules of its own: told at the worth section that the built-in rules need high', () => {
    const r = resolve({ worth: { critical: '2h', routine: '3d' } }, null);
    expect(r.errors.map((e) => [e.source, formatIssuePath(e.path), e.message])).toEqual([
      [TEAM, 'worth', "the built-in rules use the worth level 'high': define it, or write rules of your own"],
    ]);
  });

  it('the user can turn the overnight window off', () => {
    expect(resolve({ overnight: { from: '21:00', to: '05:00' } }, { overnight: 'none' }).policy!.overnight).toBeNull();
  });

  it('an error is named by the file its value came from', () => {
    const r = resolve(team, { rules: [{ when: { worth: 'high' }, then: 'continue' }] });
    // The user's rule names a level the team's worth does not define.
    expect(r.errors.map((e) => [e.source, formatIssuePath(e.path)])).toEqual([[USER, 'rules[0].when.worth']]);
    const seat = resolve({ ...team, allowance: { seats: { dana: { per_day: 'lots' } } } }, { amber_at: 95 });
    expect(seat.errors.map((e) => [e.source, formatIssuePath(e.path)])).toEqual([[TEAM, 'allowance.seats.dana.per_day']]);
  });

  it('the default worth set by the user must be one of the team’s levels', () => {
    const r = resolve(team, { worth: { default: 'high' } });
    expect(r.errors.map((e) => [e.source, formatIssuePath(e.path), e.message])).toEqual([[USER, 'worth.default', "'high' is not a worth level (levels: critical, routine; or none)"]]);
  });

  it('deepMerge: mappings merge, lists and scalars replace, null replaces', () => {
    expect(deepMerge({ a: { b: 1, c: [1, 2] }, d: 1 }, { a: { c: [3] }, d: null })).toEqual({ a: { b: 1, c: [3] }, d: null });
  });
});
