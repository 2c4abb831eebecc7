import { describe, expect, it } from 'vitest';
import { globToRegExp, ownerOf, parseCodeowners, RosterFile } from '../../core/roster.js';

describe('roster globs', () => {
  it.each([
    ['src/**', 'src/a/b.ts', true],
    ['src/**', 'lib/src/a.ts', false],
    ['*.md', 'docs/guide.md', true],
    ['/README.md', 'docs/README.md', false],
    ['docs/', 'docs/a/b.md', true],
    ['api/*.ts', 'api/x.ts', true],
    ['api/*.ts', 'api/v1/x.ts', false],
    ['**/migrations/**', 'musher/store/migrations/1.sql', true],
    ['file?.txt', 'file1.txt', true],
  ])('%s matches %s: %s', (glob, file, expected) => {
    expect(globToRegExp(glob).test(file)).toBe(expected);
  });
});

describe('the area owner', () => {
  const roster = RosterFile.parse({
    teammates: [
      { handle: 'ana', name: 'Ana', areas: ['docs/**'] },
      { handle: 'dana', name: 'Dana', areas: ['src/**', 'api/'] },
      { handle: 'lee', name: 'Lee', areas: ['src/ui/**'] },
    ],
  });
  it.each([
    ['most changed files decide', ['src/ui/a.tsx', 'src/core/b.ts', 'api/c.ts'], null, 'dana'],
    ['a tie goes to the roster order', ['docs/a.md', 'src/x.ts'], null, 'ana'],
    ['never yourself', ['src/core/b.ts', 'src/ui/a.tsx'], 'dana', 'lee'],
    ['nobody owns it', ['Makefile'], null, null],
    ['no changes', [], null, null],
  ] as const)('%s', (_n, files, self, expected) => {
    expect(ownerOf(roster, files, self)?.handle ?? null).toBe(expected);
  });

  it('CODEOWNERS counts too: its last matching rule, naming a teammate by handle or GitHub login', () => {
    const team = RosterFile.parse({ teammates: [{ handle: 'ana', areas: [] }, { handle: 'dana', github: 'dana-gh', areas: [] }] });
    const rules = parseCodeowners(['# who owns what', '*.ts @ana', 'src/payments/ @dana-gh  # payments', ''].join('\n'));
    expect(ownerOf(team, ['src/payments/a.ts', 'src/payments/b.ts', 'src/ui/c.ts'], null, rules)?.handle).toBe('dana');
    expect(ownerOf(team, ['src/ui/c.ts'], null, rules)?.handle).toBe('ana');
    expect(ownerOf(team, ['README.md'], null, rules)).toBeNull();
    expect(parseCodeowners('docs/** @org/writers writer@example.com')[0]!.owners).toEqual(['org/writers', 'writer@example.com']);
  });

  it('rejects a handle that is not one', () => {
    expect(RosterFile.safeParse({ teammates: [{ handle: 'dana smith' }] }).success).toBe(false);
  });
});
