import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Clock } from '../../musher/clock.js';
import { runChecks } from '../../musher/engine/verify.js';

/** Real child processes: node's own test runner on real test files, and small scripts that print a runner's lines. */
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'sl-verify-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** A clock that moves 250 ms each time it is read: each check's duration is two reads apart. */
function steppingClock(): Clock {
  let t = Date.UTC(2026, 11, 2, 9, 0);
  return { now: () => (t += 250) };
}

const ENV = { PATH: process.env.PATH, NO_COLOR: '1' };

describe('the checks run in a worktree before the PR', () => {
  it('a passing node --test run and a count-less check: ok, the count parsed from the real output', async () => {
    writeFileSync(join(dir, 'a.test.mjs'), "import test from 'node:test';\nfor (const n of ['a','b','c','d']) test(n, () => {});\n");
    writeFileSync(join(dir, 'types.mjs'), "console.log('no type errors');\n");
    const v = await runChecks(dir, [
      { name: 'test', argv: [process.execPath, '--test', '--test-reporter=tap', 'a.test.mjs'] },
      { name: 'types', argv: [process.execPath, 'types.mjs'] },
    ], ENV, steppingClock());
    expect(v.ok).toBe(true);
    expect(v.summary).toBe('test ✓ (4/4 tests) · types ✓');
    expect(v.results.map((r) => [r.name, r.ok, r.exitCode, r.durationMs])).toEqual([['test', true, 0, 250], ['types', true, 0, 250]]);
  });

  it('a failing check returns its exit code and its log tail (the end, not the start); the others still run', async () => {
    writeFileSync(join(dir, 'b.test.mjs'), "import test from 'node:test';\ntest('adds', () => {});\ntest('exports rows', () => { throw new Error('expected 3 rows, got 0'); });\n");
    writeFileSync(join(dir, 'noisy.mjs'), "for (let i = 0; i < 5000; i++) console.log('compiling module ' + i);\nconsole.error('src/export.ts(12,3): error TS2322: Type string is not assignable to number');\nprocess.exit(2);\n");
    writeFileSync(join(dir, 'vitest-like.mjs'), "console.log(' Test Files  3 passed (3)');\nconsole.log('      Tests  340 passed (340)');\n");
    const v = await runChecks(dir, [
      { name: 'test', argv: [process.execPath, '--test', '--test-reporter=tap', 'b.test.mjs'] },
      { name: 'types', argv: [process.execPath, 'noisy.mjs'] },
      { name: 'unit', argv: [process.execPath, 'vitest-like.mjs'] },
    ], ENV, steppingClock());
    expect(v.ok).toBe(false);
    expect(v.summary).toBe('test ✗ (1/2 tests) · types ✗ · unit ✓ (340/340 tests)');
    const [test, types] = v.results;
    expect(test!.exitCode).toBe(1);
    expect(test!.logTail).toContain('expected 3 rows, got 0');
    expect(types!.exitCode).toBe(2);
    expect(types!.logTail).toMatch(/error TS2322: Type string is not assignable to number$/);
    expect(types!.logTail).not.toContain('compiling module 0\n');
    expect(types!.logTail.length).toBeLessThanOrEqual(4000);
  });

  it('a check whose program is not installed fails with one line saying so', async () => {
    const v = await runChecks(dir, [{ name: 'lint', argv: ['sleds-no-such-linter', '.'] }], ENV, steppingClock());
    expect(v.ok).toBe(false);
    expect(v.results[0]).toMatchObject({ name: 'lint', ok: false, exitCode: null, logTail: 'sleds-no-such-linter: not found on PATH' });
    expect(v.summary).toBe('lint ✗');
  });

  it('a check past its time is killed and fails', async () => {
    writeFileSync(join(dir, 'hang.mjs'), "console.log('waiting for a database'); setInterval(() => {}, 1000);\n");
    const v = await runChecks(dir, [{ name: 'test', argv: [process.execPath, 'hang.mjs'] }], ENV, steppingClock(), { timeoutMs: 300 });
    expect(v.results[0]).toMatchObject({ ok: false, exitCode: null });
    expect(v.results[0]!.logTail).toMatch(/waiting for a database\n\(killed after 0.3 s\)$/);
  });
});
