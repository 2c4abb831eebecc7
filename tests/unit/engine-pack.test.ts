import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { buildPack, readFieldBook, type PackInput } from '../../musher/engine/pack.js';

const AT = Date.UTC(2026, 11, 1, 14, 30);

function input(over: Partial<PackInput> = {}): PackInput {
  return {
    route: { key: 'eng-503', title: 'Large exports by email', notes: 'Exports over 10k rows go by email, never inline.', tracker: 'ENG-503' },
    node: { id: 'export-api', title: 'The export endpoint', brief: 'Add POST /exports that queues an export job and returns its id.' },
    fieldBook: [{ name: 'CLAUDE.md', text: 'Run npm test before you finish. Use zod at every boundary.' }, { name: 'AGENTS.md', text: 'Small modules, one job each.' }],
    decisions: [
      { question: 'CSV or XLSX?', answer: 'CSV', answeredBy: 'dana', at: AT },
      { question: 'Who pays for the mail?', answer: 'the tenant', answeredBy: 'li', at: AT - 3_600_000 },
    ],
    dependencies: [{ nodeId: 'schema', title: 'The exports table', prUrl: 'https://github.com/acme/shop/pull/12', summary: 'Adds table exports(id, tenant, status, url).' }],
    feedback: null,
    limits: { maxChars: 20_000 },
    ...over,
  };
}

describe('the pack a node is handed', () => {
  it('carries the brief, the field book and route notes, the decisions (oldest first, with who and when) and the dependency summaries', () => {
    const pack = buildPack(input());
    expect(pack).toMatch(/^# The export endpoint \(node export-api of route eng-503: Large exports by email, ENG-503\)/);
    expect(pack).toContain('## Your task\n\nAdd POST /exports that queues an export job and returns its id.');
    expect(pack).toContain('### Route notes\n\nExports over 10k rows go by email, never inline.');
    expect(pack).toContain('### CLAUDE.md\n\nRun npm test before you finish.');
    expect(pack).toContain('### AGENTS.md\n\nSmall modules, one job each.');
    expect(pack).toContain('- Who pays for the mail? → **the tenant** (li, 2026-12-01 13:30Z)\n- CSV or XLSX? → **CSV** (dana, 2026-12-01 14:30Z)');
    expect(pack).toContain('### The exports table (schema) — https://github.com/acme/shop/pull/12\n\nAdds table exports(id, tenant, status, url).');
    expect(pack).not.toMatch(/checks failed|requested changes/);
  });

  it.each([
    ['verify-failed', /## The repository's checks failed on your last attempt/],
    ['checks-failed', /## The PR's checks failed/],
    ['changes-requested', /## A reviewer requested changes on the PR/],
    ['conflict', /## The PR conflicts with the base branch/],
    ['answer', /## Your parked question was answered/],
  ] as const)('says what came back (%s), with its text', (kind, heading) => {
    const pack = buildPack(input({ feedback: { kind, text: 'FAIL tests/export.test.ts > rows' } }));
    expect(pack).toMatch(heading);
    expect(pack).toContain('FAIL tests/export.test.ts > rows');
  });

  it('never exceeds its limit: the field book goes first, a failing log keeps its tail, the brief survives', () => {
    const log = Array.from({ length: 3000 }, (_, i) => `log line ${i}`).join('\n') + '\nAssertionError: expected 3 rows, got 0';
    const big = input({ fieldBook: [{ name: 'CLAUDE.md', text: 'house rule '.repeat(5000) }], feedback: { kind: 'verify-failed', text: log }, limits: { maxChars: 6000 } });
    const pack = buildPack(big);
    expect(pack.length).toBeLessThanOrEqual(6000);
    expect(pack).toContain('Add POST /exports that queues an export job and returns its id.');
    expect(pack).toContain('AssertionError: expected 3 rows, got 0');
    expect(pack).not.toContain('log line 0\n');
    expect(pack).toContain('CSV or XLSX?');
    for (const max of [50, 400, 1200, 3000]) expect(buildPack({ ...big, limits: { maxChars: max } }).length).toBeLessThanOrEqual(max);
  });

  it('an empty route (no notes, decisions, dependencies or field book) is just the task and how to finish', () => {
    const pack = buildPack(input({ route: { key: 'r', title: 'R', notes: null, tracker: null }, fieldBook: [], decisions: [], dependencies: [] }));
    expect(pack).not.toMatch(/Field book|Decisions|before you landed/);
    expect(pack).toContain('## When you are done');
  });
});

describe('the field book read from a worktree', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it('reads CLAUDE.md and AGENTS.md, capped; a symlink out of the worktree is not read', () => {
    const root = mkdtempSync(join(tmpdir(), 'sl-book-'));
    dirs.push(root);
    const wt = join(root, 'wt');
    mkdirSync(wt);
    writeFileSync(join(root, 'secret.md'), 'PRIVATE');
    writeFileSync(join(wt, 'CLAUDE.md'), 'x'.repeat(5000));
    symlinkSync(join(root, 'secret.md'), join(wt, 'AGENTS.md'));
    return readFieldBook(wt, 1000).then((book) => {
      expect(book.map((f) => f.name)).toEqual(['CLAUDE.md']);
      expect(book[0]!.text.startsWith('x'.repeat(1000))).toBe(true);
      expect(book[0]!.text.length).toBeLessThan(1100);
      expect(book[0]!.text).toMatch(/…\(cut\)…$/);
    });
  });
});
