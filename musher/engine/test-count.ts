/**
 * How many tests passed, read from a test runner's closing lines (pure): vitest, jest, node --test (TAP and spec
 * reporters), pytest, mocha. The last summary in the output wins (a watch-style rerun prints several); null when the
 * output names no count, so the summary says only ✓ or ✗.
 */
export interface TestCount {
  passed: number;
  total: number;
}

// eslint-disable-next-line no-control-regex
const ANSI = /\u001b\[[0-9;?]*[A-Za-z]/g;

type Reader = (text: string) => TestCount | null;

function lastMatch(text: string, re: RegExp): RegExpExecArray | null {
  let last: RegExpExecArray | null = null;
  for (const m of text.matchAll(new RegExp(re.source, re.flags.includes('g') ? re.flags : `${re.flags}g`))) last = m as RegExpExecArray;
  return last;
}

function numberIn(part: string, word: string): number {
  const m = new RegExp(`(\\d+) ${word}`).exec(part);
  return m ? Number(m[1]) : 0;
}

/** vitest: `Tests  2 failed | 338 passed (340)`. */
const vitest: Reader = (t) => {
  const m = lastMatch(t, /^\s*Tests\s+((?:\d+ \w+(?: \| )?)+)\s*\((\d+)\)\s*$/m);
  return m ? { passed: numberIn(m[1]!, 'passed'), total: Number(m[2]) } : null;
};

/** jest: `Tests:       1 failed, 339 passed, 340 total`. */
const jest: Reader = (t) => {
  const m = lastMatch(t, /^\s*Tests:\s+(.*?)(\d+) total\s*$/m);
  return m ? { passed: numberIn(m[1]!, 'passed'), total: Number(m[2]) } : null;
};

/** node --test: `# tests 3` … `# pass 2` (TAP), or `ℹ tests 3` … `ℹ pass 2` (spec). */
const nodeTest: Reader = (t) => {
  const tests = lastMatch(t, /^(?:#|ℹ) tests (\d+)\s*$/m);
  const pass = lastMatch(t, /^(?:#|ℹ) pass (\d+)\s*$/m);
  return tests && pass ? { passed: Number(pass[1]), total: Number(tests[1]) } : null;
};

/** pytest: `==== 2 failed, 338 passed, 1 skipped in 2.10s ====` (skipped tests are not counted as run). */
const pytest: Reader = (t) => {
  const m = lastMatch(t, /^=+ ((?:\d+ (?:passed|failed|errors?|skipped|xfailed|xpassed|warnings?|deselected)(?:, )?)+) in [\d.]+s(?: \([^)]*\))? =+\s*$/m);
  if (!m) return null;
  const part = m[1]!;
  const passed = numberIn(part, 'passed');
  const total = passed + numberIn(part, 'failed') + numberIn(part, 'errors?');
  return total > 0 ? { passed, total } : null;
};

/** mocha: `  340 passing (2s)` and `  2 failing`. */
const mocha: Reader = (t) => {
  const pass = lastMatch(t, /^\s*(\d+) passing\b/m);
  if (!pass) return null;
  const fail = lastMatch(t, /^\s*(\d+) failing\s*$/m);
  const passed = Number(pass[1]);
  return { passed, total: passed + (fail ? Number(fail[1]) : 0) };
};

const READERS: Reader[] = [vitest, jest, nodeTest, pytest, mocha];

export function testCountOf(output: string): TestCount | null {
  const text = output.replace(ANSI, '').replace(/\r/g, '');
  for (const read of READERS) {
    const c = read(text);
    if (c && c.total > 0 && c.passed <= c.total) return c;
  }
  return null;
}
