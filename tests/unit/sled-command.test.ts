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
  ])('%j is ours: %j', (prompt, expected) => {
    expect(parseSledPrompt(prompt)).toEqual(expected);
  });

  it.each(['hello', 'sled the dogs to the lake', 'sled', '/sledge hammer', 'please /sled status', '/slack'])(
    '%j is an ordinary prompt',
    (prompt) => {
      expect(parseSledPrompt(prompt)).toBeNull();
    },
  );
});
