import { describe, expect, it } from 'vitest';
import { parseSledPrompt } from '../../core/sled-command.js';

describe('parseSledPrompt', () => {
  it.each([
    ['/sled', { verb: 'status' }],
    ['/sled status', { verb: 'status' }],
    ['  /sled   status  ', { verb: 'status' }],
    ['/sled:sled status', { verb: 'status' }],
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
