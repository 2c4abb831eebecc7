import { describe, expect, it } from 'vitest';
import { parseSledPrompt } from '../../core/sled-command.js';
import { titleFromPrompt } from '../../core/task/task.js';

describe('parseSledPrompt', () => {
  it.each([
    ['/sled', { verb: 'status' }],
    ['/sled status', { verb: 'status' }],
    ['  /sled   status  ', { verb: 'status' }],
    ['/sled:sled status', { verb: 'status' }],
    ['/sleds:sled status', { verb: 'status' }],
    ['sled status', { verb: 'status' }],
    ['SLED STATUS', { verb: 'status' }],
    ['/sled help', { verb: 'help' }],
    ['/sled frobnicate now', { verb: 'unknown', word: 'frobnicate' }],
    ['/sled 7', { verb: 'unknown', word: '7' }],
    ['/sled 1', { verb: 'exit', number: 1, arg: null }],
    ['/sled 2 +2h', { verb: 'exit', number: 2, arg: '+2h' }],
    ['/sled 6 2026-12-01T09:00', { verb: 'exit', number: 6, arg: '2026-12-01T09:00' }],
    ['sled 5', { verb: 'exit', number: 5, arg: null }],
    ['sled 5 dana', { verb: 'exit', number: 5, arg: 'dana' }],
    ['/sled exits', { verb: 'exits' }],
    ['/sled cancel', { verb: 'cancel' }],
    ['/sled worth High', { verb: 'worth', level: 'high' }],
    ['/sled worth', { verb: 'worth', level: null }],
    ['/sled pickup JD7K2M9QA45P', { verb: 'pickup', id: 'jd7k2m9qa45p' }],
    ['sled pickup jd7k2m9qa45p', { verb: 'pickup', id: 'jd7k2m9qa45p' }],
    ['/sled pickup', { verb: 'pickup', id: null }],
    ['/sled resume night-4F2A', { verb: 'resume', job: 'night-4f2a' }],
    ['sled resume', { verb: 'resume', job: null }],
    ['/sled overnight', { verb: 'overnight', cap: null }],
    ['/sled overnight cap $20', { verb: 'overnight', cap: 'cap $20' }],
    ['sled overnight cap $20', { verb: 'overnight', cap: 'cap $20' }],
    ['/sled handoff Dana', { verb: 'handoff', to: 'dana' }],
    ['/sled hand-off @dana', { verb: 'handoff', to: 'dana' }],
    ['sled handoff', { verb: 'handoff', to: null }],
  ])('%j is ours: %j', (prompt, expected) => {
    expect(parseSledPrompt(prompt)).toEqual(expected);
  });

  it.each(['hello', 'sled the dogs to the lake', 'sled', '/sledge hammer', 'please /sled status', '/slack', 'sled 7 dogs', 'sled 12'])(
    '%j is an ordinary prompt',
    (prompt) => {
      expect(parseSledPrompt(prompt)).toBeNull();
    },
  );
});

describe('task verbs', () => {
  it.each([
    ['/sled task Migrate the billing tables', { verb: 'task', title: 'Migrate the billing tables' }],
    ['/sled task', { verb: 'task', title: null }],
    ['/sled type bugfix', { verb: 'type', label: 'bugfix' }],
    ['/sled estimate', { verb: 'estimate' }],
    ['/sled done', { verb: 'done' }],
    ['/sled answer k3m9x2qa b', { verb: 'answer', id: 'k3m9x2qa', choice: 'B' }],
    ['sled estimate', { verb: 'estimate' }],
  ])('%s', (prompt, want) => {
    expect(parseSledPrompt(prompt)).toEqual(want);
  });
});

describe('titleFromPrompt', () => {
  it.each([
    ['Fix the login test\nmore detail', 'Fix the login test'],
    ['\n\n   spaced    out   words  \n', 'spaced out words'],
    ['', 'untitled task'],
    ['x'.repeat(100), `${'x'.repeat(79)}…`],
  ])('%j → %j', (prompt, title) => {
    expect(titleFromPrompt(prompt)).toBe(title);
  });
});
