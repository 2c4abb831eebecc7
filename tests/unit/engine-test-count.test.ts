import { describe, expect, it } from 'vitest';
import { testCountOf } from '../../musher/engine/test-count.js';
import { checksFromPolicy, splitCommand, tailOf } from '../../musher/engine/verify.js';

const ESC = '\u001b';

describe('the test count a runner prints', () => {
  it.each([
    ['vitest, all passed', ` Test Files  12 passed (12)\n      Tests  340 passed (340)\n   Start at  04:42:56\n`, { passed: 340, total: 340 }],
    ['vitest, some failed, with colours', ` ${ESC}[2m     Tests ${ESC}[22m ${ESC}[1m${ESC}[31m2 failed${ESC}[39m${ESC}[22m${ESC}[2m | ${ESC}[22m${ESC}[1m${ESC}[32m338 passed${ESC}[39m${ESC}[22m${ESC}[90m (340)${ESC}[39m\n`, { passed: 338, total: 340 }],
    ['vitest with skipped', `      Tests  10 passed | 2 skipped (12)\n`, { passed: 10, total: 12 }],
    ['jest', `Test Suites: 1 failed, 9 passed, 10 total\nTests:       1 failed, 339 passed, 340 total\nSnapshots:   0 total\n`, { passed: 339, total: 340 }],
    ['node --test (TAP)', `1..3\n# tests 3\n# suites 0\n# pass 2\n# fail 1\n`, { passed: 2, total: 3 }],
    ['node --test (spec)', `ℹ tests 340\nℹ suites 0\nℹ pass 340\nℹ fail 0\n`, { passed: 340, total: 340 }],
    ['pytest, passed', `============================= 340 passed in 1.23s ==============================\n`, { passed: 340, total: 340 }],
    ['pytest, failed and skipped', `==== 2 failed, 338 passed, 1 skipped in 2.10s ====\n`, { passed: 338, total: 340 }],
    ['mocha', `  338 passing (2s)\n  2 failing\n`, { passed: 338, total: 340 }],
    ['the last summary wins', `      Tests  1 failed | 9 passed (10)\n…\n      Tests  10 passed (10)\n`, { passed: 10, total: 10 }],
    ['tsc: no count', `src/a.ts(3,1): error TS2304: Cannot find name 'x'.\n`, null],
    ['a sentence that only mentions tests', `ran the tests, all good\n`, null],
  ])('%s', (_name, output, want) => {
    expect(testCountOf(output)).toEqual(want);
  });
});

describe('checks from the policy', () => {
  it('split into argv without a shell, quotes kept together, in the policy’s order', () => {
    expect(checksFromPolicy({ test: 'npm test', types: 'npx tsc --noEmit -p "tsconfig build.json"', lint: '', build: "npm run build -- --mode 'prod x'" })).toEqual([
      { name: 'test', argv: ['npm', 'test'] },
      { name: 'types', argv: ['npx', 'tsc', '--noEmit', '-p', 'tsconfig build.json'] },
      { name: 'build', argv: ['npm', 'run', 'build', '--', '--mode', 'prod x'] },
    ]);
    expect(splitCommand(`pytest -k ''`)).toEqual(['pytest', '-k', '']);
  });

  it.each([
    ['npm test && npm run lint', '"&&"'],
    ['npm test | tee log', '"|"'],
    ['CI=1 npm test', '"CI=1"'],
    ['echo $(whoami)', '"$(whoami)"'],
    ['npm test > out.txt', '">"'],
  ])('refuses %s, which needs a shell, naming what', (line, what) => {
    expect(() => checksFromPolicy({ test: line })).toThrow(new RegExp(`verify\\.test .* uses ${what.replace(/[$()|]/g, '\\$&')}, which needs a shell`));
  });

  it('refuses an unclosed quote', () => {
    expect(() => checksFromPolicy({ test: 'npm test "oops' })).toThrow(/unclosed "/);
  });
});

describe('a log tail', () => {
  it('keeps the end, cut at a line start, within the limit', () => {
    const log = Array.from({ length: 500 }, (_, i) => `line ${i}`).join('\n');
    const tail = tailOf(log, 100);
    expect(tail.length).toBeLessThanOrEqual(100);
    expect(tail.endsWith('line 499')).toBe(true);
    expect(tail.startsWith('line ')).toBe(true);
    expect(tailOf('short\n\n')).toBe('short');
  });
});
