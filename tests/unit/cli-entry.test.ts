import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isSourceEntry, nodeArgsFor } from '../../core/cli-entry.js';
import { cliCommand, cliMainPath, packageRoot, runningCliEntry } from '../../musher/package-root.js';

const TSX = ['--import', 'file:///repo/node_modules/tsx/dist/loader.mjs'];

describe('running the CLI again (core/cli-entry.ts)', () => {
  // entry, this process's execArgv, the node arguments that run it
  const TABLE: Array<[string, string[], string[]]> = [
    ['/usr/lib/node_modules/sleds/dist/cli/main.js', [], ['/usr/lib/node_modules/sleds/dist/cli/main.js']],
    // The compiled CLI never inherits this process's flags (an --inspect port would clash).
    ['/repo/dist/cli/main.js', ['--inspect=9229'], ['/repo/dist/cli/main.js']],
    ['/repo/cli/main.ts', TSX, [...TSX, '/repo/cli/main.ts']],
    ['/repo/cli/main.mts', TSX, [...TSX, '/repo/cli/main.mts']],
    ['/repo/cli/main.ts', [], ['/repo/cli/main.ts']],
  ];
  it.each(TABLE)('%s with %j runs as %j', (entry, execArgv, args) => {
    expect(nodeArgsFor(entry, execArgv)).toEqual(args);
  });

  it.each([
    ['/repo/cli/main.ts', true],
    ['/repo/cli/main.cts', true],
    ['/repo/dist/cli/main.js', false],
    ['/repo/dist/hook.cjs', false],
    ['/repo/cli/main.tsx.js', false],
  ])('%s is a source entry: %s', (entry, yes) => {
    expect(isSourceEntry(entry)).toBe(yes);
  });
});

describe("the CLI this process runs again (musher/package-root.ts)", () => {
  const source = join(packageRoot(), 'cli', 'main.ts');

  it('a process started from the source entry runs the source again, under its own loader', () => {
    expect(runningCliEntry(source)).toBe(source);
    expect(cliCommand(source, TSX)).toEqual([process.execPath, ...TSX, source]);
  });

  it('any other process (the shipped bin, a test runner, none) runs the compiled CLI, without its flags', () => {
    for (const argv1 of [cliMainPath(), process.argv[1], '/elsewhere/cli/main.ts', undefined]) {
      expect(runningCliEntry(argv1)).toBe(cliMainPath());
      expect(cliCommand(argv1, TSX)).toEqual([process.execPath, cliMainPath()]);
    }
  });

  it('the compiled CLI is the package\'s dist/cli/main.js', () => {
    expect(cliMainPath()).toBe(join(packageRoot(), 'dist', 'cli', 'main.js'));
  });
});
