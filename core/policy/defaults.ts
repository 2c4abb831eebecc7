/**
 * The policy when the repository has no `.sleds/policy.yml` and the user no override: written in the file's own
 * words, so it goes through the same schema as a real file (a test holds it to that). examples/policy.yml
 * explains each part.
 */
export const DEFAULT_POLICY_INPUT = {
  amber_at: 90,
  worth: {
    high: { keeps: '4h' },
    normal: { keeps: '1d' },
    low: { keeps: '7d' },
    // Work nobody rated has no worth: the rules that need one do not fire, so it is asked about, not spent on.
    default: 'none',
  },
  allowance: {
    default: { per_day: '$40', per_week: '$150' },
  },
  overnight: { from: '22:00', to: '06:00' },
  cheaper: {
    'claude-fable-5*': 'claude-opus-5-5',
    'claude-opus-5-5': 'claude-sonnet-5-5',
    'claude-opus-5': 'claude-sonnet-5',
    'claude-opus-4*': 'claude-sonnet-4-6',
    'claude-sonnet-5*': 'claude-haiku-5-5',
    'claude-sonnet-4*': 'claude-haiku-4-5',
    'gpt-6-sol': 'gpt-6-luna',
    'gpt-5.4': 'gpt-5.4-mini',
  },
  // What a finished task of each level is worth: the picker offers a seat only when worth ÷ its cost is at least 1.
  worth_values: { high: '$200', normal: '$50', low: '$10' },
  rules: [
    { name: 'hand off when the owner is idle', when: { owner_idle: '30m' }, then: 'handoff' },
    { name: 'hold when the reset is near', when: { reset_within: '45m' }, then: 'hold' },
    { name: 'continue high-worth work on the key', when: { worth: 'high', allowance_left: true }, then: 'continue' },
    { name: 'overnight when it keeps until morning', when: { keeps_until_morning: true }, then: 'overnight' },
  ],
} as const;

export const DEFAULTS_SOURCE = 'defaults';
