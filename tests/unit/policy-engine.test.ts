import { describe, expect, it } from 'vitest';
import { defaultPolicy, resolvePolicy } from '../../core/policy/resolve.js';
import { formatIssuePath } from '../../core/policy/schema.js';

/** The policy's engine block (issue 14): its defaults, key by key; commands as argv, never for a shell. */
const repo = (engine: unknown) => resolvePolicy([{ source: '.sleds/policy.yml', data: { engine } }]);

describe('policy: engine', () => {
  it('without a block: approve, 2 at once, a 2-minute lease, no checks, no setup, 3 verify attempts, 10 ports', () => {
    expect(defaultPolicy().engine).toEqual({
      mode: 'approve',
      concurrency: 2,
      leaseMs: 120_000,
      verify: { test: null, types: null, lint: null, build: null },
      maxVerifyAttempts: 3,
      setup: null,
      include: [],
      portBlock: 10,
      harness: null,
      atLimit: { then: 'wait', harness: null, model: null },
    });
  });

  it('a block fills each key it names and keeps the defaults of the rest; commands become argv', () => {
    const r = repo({ mode: 'auto', concurrency: 3, lease: '5m', verify: { test: 'npm  test', types: 'npx tsc --noEmit' }, setup: 'npm ci', include: ['.env', 'config/local.json'], harness: 'codex' });
    expect(r.errors).toEqual([]);
    expect(r.policy!.engine).toEqual({
      mode: 'auto',
      concurrency: 3,
      leaseMs: 300_000,
      verify: { test: ['npm', 'test'], types: ['npx', 'tsc', '--noEmit'], lint: null, build: null },
      maxVerifyAttempts: 3,
      setup: ['npm', 'ci'],
      include: ['.env', 'config/local.json'],
      portBlock: 10,
      harness: 'codex',
      atLimit: { then: 'wait', harness: null, model: null },
    });
  });

  it('at_limit: a word, or {then, harness, model}', () => {
    expect(repo({ at_limit: 'wait' }).policy!.engine.atLimit).toEqual({ then: 'wait', harness: null, model: null });
    expect(repo({ at_limit: { then: 'switch', harness: 'codex' } }).policy!.engine.atLimit).toEqual({ then: 'switch', harness: 'codex', model: null });
    expect(repo({ at_limit: { then: 'ask', model: 'claude-sonnet-5' } }).policy!.engine.atLimit).toEqual({ then: 'ask', harness: null, model: 'claude-sonnet-5' });
  });

  const REFUSED: Array<[string, unknown, string, string]> = [
    ['a shell pipeline', { verify: { test: 'npm test | tee log' } }, 'engine.verify.test', `needs a shell`],
    ['a variable', { setup: 'npm ci $FLAGS' }, 'engine.setup', `needs a shell`],
    ['an empty command', { verify: { lint: '  ' } }, 'engine.verify.lint', 'expected a command like "npm test"'],
    ['a bad mode', { mode: 'yolo' }, 'engine.mode', 'expected approve or auto'],
    ['no concurrency', { concurrency: 0 }, 'engine.concurrency', 'must be at least 1'],
    ['a lease too short to renew', { lease: '5s' }, 'engine.lease', 'a lease under 10s'],
    ['a switch with nowhere to go', { at_limit: 'switch' }, 'engine.at_limit', 'need somewhere to switch to'],
    ['an ask with nowhere to go', { at_limit: { then: 'ask' } }, 'engine.at_limit', 'need somewhere to switch to'],
    ['an unknown at_limit', { at_limit: 'panic' }, 'engine.at_limit', 'expected wait, switch, ask'],
    ['an include outside the repository', { include: ['../secrets'] }, 'engine.include[0]', 'is not a path inside the repository'],
  ];
  it.each(REFUSED)('refuses %s, naming the key', (_what, engine, path, words) => {
    const r = repo(engine);
    expect(r.policy).toBeNull();
    expect(r.errors.map((e) => formatIssuePath(e.path))).toEqual([path]);
    expect(r.errors[0]!.message).toContain(words);
  });
});
