import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PolicyLoader } from '../../musher/policy/loader.js';
import { evaluatePolicy } from '../../core/policy/evaluate.js';
import { EXIT_KINDS, type ExitKind } from '../../core/policy/schema.js';
import type { Log } from '../../musher/log.js';

const roots: string[] = [];
afterEach(() => {
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});

interface World {
  repo: string;
  home: string;
  configDir: string;
  teamFile: string;
  userFile: string;
  logged: string[];
  loader: PolicyLoader;
}

/** A real git repository and a config dir, each in a temp folder. */
function world(): World {
  const root = mkdtempSync(join(tmpdir(), 'sl-pol-'));
  roots.push(root);
  const repo = join(root, 'repo');
  const home = join(root, 'home');
  const configDir = join(home, '.config', 'sleds');
  mkdirSync(join(repo, '.sleds'), { recursive: true });
  mkdirSync(join(repo, 'src', 'deep'), { recursive: true });
  mkdirSync(configDir, { recursive: true });
  execFileSync('git', ['init', '-q'], { cwd: repo });
  const logged: string[] = [];
  const log: Log = { info: (m) => logged.push(`INFO ${m}`), warn: (m) => logged.push(`WARN ${m}`), error: (m) => logged.push(`ERROR ${m}`) };
  return { repo, home, configDir, teamFile: join(repo, '.sleds', 'policy.yml'), userFile: join(configDir, 'policy.yml'), logged, loader: new PolicyLoader({ configDir, homeDir: home, log }) };
}

const GOOD = `# the team's policy
amber_at: 77
worth:
  high: 4h
  normal: 1d
  default: normal
rules:
  - name: near reset
    when: { reset_within: 45m }
    then: hold

  - name: idle owner
    when:
      owner_idle: 30m
    then: handoff
`;

describe('the policy loader', () => {
  it('finds the repository from a folder deep inside it and gives each rule its line', () => {
    const w = world();
    writeFileSync(w.teamFile, GOOD);
    const r = w.loader.forDirectory(join(w.repo, 'src', 'deep'));
    expect(r.errors).toEqual([]);
    expect(r.repoRoot).toBe(w.repo);
    expect(r.sources).toEqual([w.teamFile]);
    expect(r.policy.amberAt).toBe(77);
    expect(r.policy.rules.map((x) => [x.name, x.line])).toEqual([
      ['near reset', 8],
      ['idle owner', 12],
    ]);
    expect(r.policy.rulesSource).toBe('.sleds/policy.yml');
    expect(r.fallback).toBeNull();
  });

  it('a git worktree (.git is a file) is a repository too', () => {
    const w = world();
    const wt = join(w.repo, '..', 'wt');
    writeFileSync(join(w.repo, 'README'), 'x');
    execFileSync('git', ['-c', 'user.email=t@t', '-c', 'user.name=t', 'commit', '-q', '--allow-empty', '-m', 'init'], { cwd: w.repo });
    execFileSync('git', ['worktree', 'add', '-q', wt], { cwd: w.repo });
    mkdirSync(join(wt, '.sleds'), { recursive: true });
    writeFileSync(join(wt, '.sleds', 'policy.yml'), 'amber_at: 66\n');
    expect(w.loader.forDirectory(wt).policy.amberAt).toBe(66);
  });

  it.each<[string, string, string]>([
    ['an unknown exit', GOOD.replace('then: handoff', 'then: panic'), '.sleds/policy.yml:15: rules[1].then: expected one of continue|hold|overnight|switch|handoff|defer|ask'],
    ['a span without a unit', GOOD.replace('owner_idle: 30m', 'owner_idle: 30'), '.sleds/policy.yml:14: rules[1].when.owner_idle: 30 has no unit: write e.g. 30m, 30h or 30d'],
    ['a misspelt condition', GOOD.replace('reset_within: 45m', 'reset_in: 45m'), '.sleds/policy.yml:9: rules[0].when.reset_in: unknown condition — known: reset_within, worth, worth_at_least, allowance_left, owner_idle, keeps_until_morning, window'],
    ['a default that is not a level', GOOD.replace('default: normal', 'default: medium'), ".sleds/policy.yml:6: worth.default: 'medium' is not a worth level (levels: high, normal; or none)"],
    ['a missing then', GOOD.replace('    then: hold\n', ''), '.sleds/policy.yml:8: rules[0].then: missing: expected one of continue|hold|overnight|switch|handoff|defer|ask'],
    ['an unclosed flow mapping', GOOD.replace('{ reset_within: 45m }', '{ reset_within: 45m'), '.sleds/policy.yml:10: Flow map in block collection must be sufficiently indented and end with a }'],
    ['a duplicated key', GOOD.replace('amber_at: 77\n', 'amber_at: 77\namber_at: 78\n'), '.sleds/policy.yml:3: Map keys must be unique'],
    ['a tab for indentation', GOOD.replace('  high: 4h', '\thigh: 4h'), '.sleds/policy.yml:4: Tabs are not allowed as indentation'],
  ])('%s: one line naming the file, the line and the path', (_what, text, line) => {
    const w = world();
    writeFileSync(w.teamFile, text);
    const r = w.loader.forDirectory(w.repo);
    expect(r.errors).toContain(line);
  });

  it('the line named is the line the problem is on', () => {
    const w = world();
    const text = GOOD.replace('then: handoff', 'then: panic');
    writeFileSync(w.teamFile, text);
    const [first] = w.loader.forDirectory(w.repo).errors;
    const n = Number(/:(\d+):/.exec(first!)![1]);
    expect(text.split('\n')[n - 1]).toBe('    then: panic');
  });

  it('a malformed file keeps the last good policy, reports the error once per change, and recovers when fixed', () => {
    const w = world();
    writeFileSync(w.teamFile, GOOD);
    const good = w.loader.forDirectory(w.repo);
    expect(good.policy.amberAt).toBe(77);

    writeFileSync(w.teamFile, GOOD.replace('amber_at: 77', 'amber_at: 55').replace('then: handoff', 'then: panic'));
    const broken = w.loader.forDirectory(w.repo);
    expect(broken.errors).toEqual(['.sleds/policy.yml:15: rules[1].then: expected one of continue|hold|overnight|switch|handoff|defer|ask']);
    expect(broken.fallback).toBe('last-good');
    expect(broken.policy).toEqual(good.policy);
    // Asked again while still broken: the same answer, and nothing new in the log.
    const logSize = w.logged.length;
    expect(w.loader.forDirectory(w.repo).errors).toEqual(broken.errors);
    expect(w.loader.forDirectory(join(w.repo, 'src')).policy.amberAt).toBe(77);
    expect(w.logged.length).toBe(logSize);
    expect(w.logged.filter((l) => l.startsWith('ERROR'))).toEqual([`ERROR policy (${w.repo}): ${broken.errors[0]}`]);
    expect(w.logged.some((l) => /keeping the last good policy/.test(l))).toBe(true);

    // A different mistake is a change: logged again.
    writeFileSync(w.teamFile, GOOD.replace('owner_idle: 30m', 'owner_idle: soon'));
    expect(w.loader.forDirectory(w.repo).errors).toEqual([".sleds/policy.yml:14: rules[1].when.owner_idle: 'soon' is not a span: write e.g. 45m, 4h, 1d, 1h30m"]);
    expect(w.logged.filter((l) => l.startsWith('ERROR'))).toHaveLength(2);

    writeFileSync(w.teamFile, GOOD.replace('amber_at: 77', 'amber_at: 55'));
    const fixed = w.loader.forDirectory(w.repo);
    expect(fixed).toMatchObject({ errors: [], fallback: null });
    expect(fixed.policy.amberAt).toBe(55);
    expect(w.logged[w.logged.length - 1]).toMatch(/fixed; the files apply again/);
  });

  it('broken from the start: the good files alone stand in, else the defaults', () => {
    const w = world();
    writeFileSync(w.teamFile, 'rules: [oops\n');
    writeFileSync(w.userFile, 'amber_at: 85\n');
    const r = w.loader.forDirectory(w.repo);
    expect(r.errors).toHaveLength(1);
    expect(r.fallback).toBe('good-files-only');
    expect(r.policy.amberAt).toBe(85);

    rmSync(w.userFile);
    const d = w.loader.forDirectory(w.repo);
    expect(d.fallback).toBe('defaults');
    expect(d.policy.amberAt).toBe(90);
    expect(d.policy.rulesSource).toBe('defaults');
  });

  it("the user's file wins key by key and is named with ~ in messages", () => {
    const w = world();
    writeFileSync(w.teamFile, GOOD);
    writeFileSync(w.userFile, 'amber_at: 95\nallowance:\n  default: { per_day: $5 }\ncolour: blue\n');
    const r = w.loader.forDirectory(w.repo);
    expect(r.errors).toEqual([]);
    expect(r.sources).toEqual([w.teamFile, w.userFile]);
    expect(r.policy.amberAt).toBe(95);
    expect(r.policy.allowance.default).toEqual({ perDayMicros: 5_000_000, perWeekMicros: null });
    expect(r.policy.rules.map((x) => x.name)).toEqual(['near reset', 'idle owner']);
    expect(r.provenance.amber_at).toEqual(['.sleds/policy.yml', '~/.config/sleds/policy.yml']);
    expect(r.warnings).toEqual(['~/.config/sleds/policy.yml:4: colour: unknown key, ignored']);
  });

  it("rules from the user's file replace the team's whole and carry the user's file's lines", () => {
    const w = world();
    writeFileSync(w.teamFile, GOOD);
    writeFileSync(w.userFile, '# mine\nrules:\n\n  - name: always defer\n    then: defer\n');
    const r = w.loader.forDirectory(w.repo);
    expect(r.policy.rulesSource).toBe('~/.config/sleds/policy.yml');
    expect(r.policy.rules.map((x) => [x.name, x.line])).toEqual([['always defer', 4]]);
  });

  it("an error in the user's file is named at the user's file and line", () => {
    const w = world();
    writeFileSync(w.teamFile, GOOD);
    writeFileSync(w.userFile, '\n\nrules:\n  - when: { worth: high }\n    then: continue\n  - when: { worth: urgent }\n    then: continue\n');
    expect(w.loader.forDirectory(w.repo).errors).toEqual(["~/.config/sleds/policy.yml:6: rules[1].when.worth: 'urgent' is not a worth level (levels: high, normal)"]);
  });

  it('outside any repository: the user file over the defaults', () => {
    const w = world();
    writeFileSync(w.userFile, 'amber_at: 60\n');
    const r = w.loader.forDirectory(w.home);
    expect(r.repoRoot).toBeNull();
    expect(r.policy.amberAt).toBe(60);
    expect(r.sources).toEqual([w.userFile]);
  });

  it('no files at all: the built-in defaults', () => {
    const w = world();
    const r = w.loader.forDirectory(w.repo);
    expect(r).toMatchObject({ errors: [], warnings: [], sources: [], fallback: null });
    expect(r.policy.rules).toHaveLength(4);
  });

  it('an empty file or one with only comments is an empty policy, not an error', () => {
    const w = world();
    writeFileSync(w.teamFile, '# nothing yet\n');
    expect(w.loader.forDirectory(w.repo)).toMatchObject({ errors: [], fallback: null });
    writeFileSync(w.teamFile, '');
    expect(w.loader.forDirectory(w.repo).errors).toEqual([]);
  });

  it('a file that is a list, not a mapping, is one line at line 1', () => {
    const w = world();
    writeFileSync(w.teamFile, '- hold\n- ask\n');
    expect(w.loader.forDirectory(w.repo).errors).toEqual(['.sleds/policy.yml:1: expected a mapping of amber_at, worth, allowance, overnight, cheaper, rules, worth_values, handoff, tracker, engine; got a list']);
  });
});

describe('examples/policy.yml', () => {
  const open = Object.fromEntries(EXIT_KINDS.map((k) => [k, { ok: true }])) as Record<ExitKind, { ok: boolean }>;

  it('checks clean and evaluates', () => {
    const w = world();
    writeFileSync(w.teamFile, readFileSync(join(import.meta.dirname, '..', '..', 'examples', 'policy.yml'), 'utf8'));
    const r = w.loader.forDirectory(w.repo);
    expect(r.errors).toEqual([]);
    expect(r.warnings).toEqual([]);
    expect(r.policy.rules.map((x) => x.then)).toEqual(['handoff', 'hold', 'continue', 'switch', 'overnight', 'ask']);
    expect(r.policy.rules.every((x) => x.line !== null)).toBe(true);
    expect(r.policy.overnight?.timeZone).toBe('America/New_York');

    const now = Date.UTC(2026, 5, 10, 16, 0);
    const ctx = {
      nowMs: now,
      timeZone: 'UTC',
      window: 'seven_day',
      resetAtMs: now + 30 * 3_600_000,
      worth: 'normal',
      allowanceLeft: { dayMicros: 20_000_000, weekMicros: 90_000_000 },
      owner: { handle: 'dana', idleMs: 5 * 60_000 },
      available: open,
    };
    const d = evaluatePolicy(r.policy, ctx);
    expect(d.choice).toBe('switch');
    expect(d.rule).toMatchObject({ index: 3, line: r.policy.rules[3]!.line });
    expect(evaluatePolicy(r.policy, { ...ctx, worth: 'low', window: 'five_hour' }).choice).toBe('overnight');
    expect(evaluatePolicy(r.policy, { ...ctx, worth: null, window: 'five_hour' })).toMatchObject({ choice: 'ask', rule: { index: 5 } });
  });
});
