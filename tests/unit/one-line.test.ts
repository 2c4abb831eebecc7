import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { oneLine } from '../../core/format.js';

describe('oneLine: text from elsewhere (a title, an error, a server answer) in one line of ours', () => {
  it.each([
    ['plain', 'fix the build', 200, 'fix the build'],
    ['newlines and runs of space collapse', 'fix\n  the\r\n\tbuild  ', 200, 'fix the build'],
    ['control characters become spaces (no terminal escapes)', 'fix\u001b[31m the\u0007 build\u007f', 200, 'fix [31m the build'],
    ['cut at max with an ellipsis', 'abcdefghij', 6, 'abcde…'],
    ['exactly max is kept whole', 'abcdef', 6, 'abcdef'],
    ['empty stays empty', ' \n ', 200, ''],
  ])('%s', (_what, input, max, expected) => {
    expect(oneLine(input, max)).toBe(expected);
  });

  it('is the only oneLine: no module keeps its own copy', () => {
    const root = join(import.meta.dirname, '..', '..');
    const copies: string[] = [];
    const walk = (dir: string): void => {
      for (const name of readdirSync(join(root, dir))) {
        const path = join(dir, name);
        if (statSync(join(root, path)).isDirectory()) walk(path);
        else if (/\.tsx?$/.test(name) && /\b(function|const|let)\s+oneLine\b/.test(readFileSync(join(root, path), 'utf8'))) copies.push(path);
      }
    };
    for (const dir of ['core', 'musher', 'cli', 'hooks', 'statusline', 'mcp-server', 'harnesses', 'protocol']) if (statSync(join(root, dir), { throwIfNoEntry: false })) walk(dir);
    expect(copies).toEqual(['core/format.ts']);
  });
});
