import { describe, expect, it } from 'vitest';
import { diedWords } from '../../cli/dispatch-watch.js';

describe('what a dispatch that died as it started says', () => {
  it.each([
    ['its last stderr lines', { code: 3, signal: null }, ['Error: no such model'], 'claude exited with code 3 as it started, and its window closed. Its last lines:\n  Error: no such model'],
    ['a signal', { code: null, signal: 'SIGKILL' }, ['killed'], 'claude was ended by SIGKILL as it started, and its window closed. Its last lines:\n  killed'],
    ['nothing on stderr: the command to see its screen', { code: 1, signal: null }, [], "claude exited with code 1 as it started, and its window closed. It printed nothing on stderr; run it in a terminal to see what it showed: cd /r && claude -- 'fix it'"],
  ])('%s', (_name, status, lines, want) => {
    expect(diedWords('claude', status, lines, "cd /r && claude -- 'fix it'")).toBe(want);
  });
});
