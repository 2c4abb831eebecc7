import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { cdAndRun, shellLine, shellQuote } from '../../core/shell-quote.js';

/** What a real POSIX shell makes of a word: `sh -c 'printf %s\\0 <word>'` and split on NUL. */
function shellSees(line: string): string[] {
  const out = execFileSync('/bin/sh', ['-c', `printf '%s\\0' ${line}`], { encoding: 'utf8', env: { PATH: '/usr/bin:/bin', HOME: '/nonexistent-home' } });
  return out.split('\0').slice(0, -1);
}

const TABLE: Array<[string, string]> = [
  ['claude', 'claude'],
  ['--resume=0b9c2f4a-6a5e-4a8e-9a57-1f3c9d7e2b10', '--resume=0b9c2f4a-6a5e-4a8e-9a57-1f3c9d7e2b10'],
  ['/home/dana/shop-handoff-jd7k2m9qa41p', '/home/dana/shop-handoff-jd7k2m9qa41p'],
  ['a,b:c@d%e+f', 'a,b:c@d%e+f'],
  ['', "''"],
  ['my proj', "'my proj'"],
  ["don't", "'don'\\''t'"],
  ["'", "''\\'''"],
  ['$(touch /tmp/pwned)', "'$(touch /tmp/pwned)'"],
  ['`id`', "'`id`'"],
  ['"$HOME"', `'"$HOME"'`],
  ['a;b', "'a;b'"],
  ['a&&b', "'a&&b'"],
  ['x|y', "'x|y'"],
  ['*.ts', "'*.ts'"],
  ['~/work', "'~/work'"],
  ['=cmd', "'=cmd'"],
  ['a=b', 'a=b'],
  ['!!', "'!!'"],
  ['line\nbreak', "'line\nbreak'"],
  ['--settings={"hooks":{}}', `'--settings={"hooks":{}}'`],
  ['back\\slash', "'back\\slash'"],
];

describe('shellQuote', () => {
  it.each(TABLE)('%j → %s', (word, quoted) => {
    expect(shellQuote(word)).toBe(quoted);
  });

  it('a real sh reads every quoted word back as exactly the word, expanding nothing', () => {
    const words = TABLE.map(([w]) => w);
    expect(shellSees(shellLine(words))).toEqual(words);
  });
});

describe('cdAndRun', () => {
  it('quotes the folder and each argument', () => {
    expect(cdAndRun('/home/dana/my $(rm -rf ~) `x`', ['claude', '--resume=0b9c2f4a-6a5e-4a8e-9a57-1f3c9d7e2b10'])).toBe(
      "cd '/home/dana/my $(rm -rf ~) `x`' && claude --resume=0b9c2f4a-6a5e-4a8e-9a57-1f3c9d7e2b10",
    );
    expect(cdAndRun("/w/Bob's", ['codex', 'resume', '--', '0b9c2f4a-6a5e-4a8e-9a57-1f3c9d7e2b10'])).toBe("cd '/w/Bob'\\''s' && codex resume -- 0b9c2f4a-6a5e-4a8e-9a57-1f3c9d7e2b10");
  });
});
