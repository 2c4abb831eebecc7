import { execFile, execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI, type RunResult, type SledsWorld } from '../support/sleds-env.js';
import { useWorlds } from '../support/worlds.js';

const newWorld = useWorlds();

interface Repo {
  world: SledsWorld;
  repo: string;
  teamFile: string;
  userFile: string;
}

/** A sleds world with a real git repository in it; `sleds policy` reads the files directly, no musher. */
function repoWorld(): Repo {
  const world = newWorld();
  const repo = join(world.root, 'repo');
  mkdirSync(join(repo, '.sleds'), { recursive: true });
  mkdirSync(join(repo, 'pkg'), { recursive: true });
  mkdirSync(join(world.sledsHome, 'config'), { recursive: true });
  execFileSync('git', ['init', '-q'], { cwd: repo });
  return { world, repo, teamFile: join(repo, '.sleds', 'policy.yml'), userFile: join(world.sledsHome, 'config', 'policy.yml') };
}

function policyCmd(r: Repo, args: string[], cwd = r.repo): Promise<RunResult> {
  return new Promise((done) => {
    execFile(process.execPath, [...CLI, 'policy', ...args], { cwd, env: r.world.env, timeout: 30_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : 1) : 0;
      done({ code, stdout, stderr });
    });
  });
}

const TEAM = `amber_at: 80
worth:
  high: 4h
  normal: 1d
  low: 7d
  default: normal
allowance:
  default: { per_day: $40, per_week: $150 }
  seats:
    dana: { per_day: $60 }
rules:
  - name: near reset
    when: { reset_within: 45m }
    then: hold
  - name: high worth on the key
    when: { worth: high, allowance_left: true }
    then: continue
`;

describe('sleds policy check', () => {
  it("checks the directory's effective policy and says so in one line", async () => {
    const r = repoWorld();
    writeFileSync(r.teamFile, TEAM);
    const out = await policyCmd(r, ['check'], join(r.repo, 'pkg'));
    expect(out.code, out.stderr).toBe(0);
    expect(out.stdout).toBe(`policy ok: ${r.teamFile} (2 rules, then ask)\n`);
    expect(out.stderr).toBe('');
  });

  it('a malformed file: exit 1 with one line per error, naming file, line and path', async () => {
    const r = repoWorld();
    writeFileSync(r.teamFile, TEAM.replace('then: continue', 'then: spend').replace('per_day: $60', 'per_day: 60 EUR'));
    const out = await policyCmd(r, ['check']);
    expect(out.code).toBe(1);
    const lines = out.stderr.trim().split('\n');
    expect(lines).toEqual([
      '.sleds/policy.yml:10: allowance.seats.dana.per_day: \'60 EUR\' is not in US dollars: platform keys bill in USD',
      '.sleds/policy.yml:17: rules[1].then: expected one of continue|hold|overnight|switch|handoff|defer|ask',
      "sleds: the policy has 2 errors — fix the lines above and run 'sleds policy check' again",
    ]);
    expect(out.stdout).toBe('');
  });

  it('--json reports ok, errors and warnings, and exits 1 on errors', async () => {
    const r = repoWorld();
    writeFileSync(r.teamFile, `colour: blue\n${TEAM}`);
    const good = await policyCmd(r, ['check', '--json']);
    expect(good.code).toBe(0);
    const g = JSON.parse(good.stdout);
    expect(g).toMatchObject({ ok: true, errors: [], warnings: ['.sleds/policy.yml:1: colour: unknown key, ignored'], sources: [r.teamFile] });
    expect(g.policy.rules.map((x: { line: number }) => x.line)).toEqual([13, 16]);

    writeFileSync(r.teamFile, TEAM.replace('reset_within: 45m', 'reset_within: 45'));
    const bad = await policyCmd(r, ['check', '--json']);
    expect(bad.code).toBe(1);
    expect(JSON.parse(bad.stdout)).toMatchObject({ ok: false, policy: null, errors: ['.sleds/policy.yml:13: rules[0].when.reset_within: 45 has no unit: write e.g. 45m, 45h or 45d'] });
  });

  it('unknown keys are warnings: the check still passes', async () => {
    const r = repoWorld();
    writeFileSync(r.teamFile, TEAM.replace('amber_at: 80', 'amber_at: 80\nambr: 3'));
    const out = await policyCmd(r, ['check']);
    expect(out.code).toBe(0);
    expect(out.stderr).toBe('warning: .sleds/policy.yml:2: ambr: unknown key, ignored\n');
  });

  it('checks a file given by path on its own, named as it was typed', async () => {
    const r = repoWorld();
    writeFileSync(join(r.repo, 'draft.yml'), 'rules:\n  - when: { owner_idle: 30m }\n    then: handoff\n  - then: hold\n    when: {worth: urgent}\n');
    const out = await policyCmd(r, ['check', 'draft.yml']);
    expect(out.code).toBe(1);
    expect(out.stderr.split('\n')[0]).toBe("draft.yml:5: rules[1].when.worth: 'urgent' is not a worth level (levels: high, normal, low)");

    writeFileSync(join(r.repo, 'draft.yml'), 'amber_at: 70\n');
    expect((await policyCmd(r, ['check', 'draft.yml'])).code).toBe(0);
  });

  it('a path that does not exist is one line and exit 1', async () => {
    const r = repoWorld();
    const out = await policyCmd(r, ['check', 'nope.yml']);
    expect(out.code).toBe(1);
    expect(out.stderr).toMatch(/^sleds: no such file: nope\.yml — /);
  });

  it('without files: the built-in defaults, said so', async () => {
    const r = repoWorld();
    const out = await policyCmd(r, ['check']);
    expect(out.code).toBe(0);
    expect(out.stdout).toBe('policy ok: no policy file: the built-in defaults apply (4 rules, then ask)\n');
  });
});

describe('sleds policy show', () => {
  it('shows the effective policy and where each part came from', async () => {
    const r = repoWorld();
    writeFileSync(r.teamFile, TEAM);
    writeFileSync(r.userFile, 'amber_at: 95\nallowance:\n  seats:\n    dana: { per_week: $200 }\n');
    const out = await policyCmd(r, ['show'], join(r.repo, 'pkg'));
    expect(out.code, out.stderr).toBe(0);
    const lines = out.stdout.split('\n');
    expect(lines[0]).toBe(`Policy for ${r.repo}`);
    expect(lines).toContain(`amber_at   95%  [.sleds/policy.yml + ${r.userFile}]`);
    expect(lines).toContain(`allowance  $40.00/day, $150.00/week · dana $60.00/day, $200.00/week  [.sleds/policy.yml + ${r.userFile}]`);
    expect(lines).toContain('overnight  22:00–06:00 (local time) · cap $10.00 a job · 1 at a time  [defaults]');
    expect(lines).toContain('rules      [.sleds/policy.yml]');
    expect(lines).toContain('  1. near reset: reset_within 45m → hold  (line 12)');
    expect(lines).toContain('  3. otherwise → ask');
  });

  it('--json gives the policy, the sources and the provenance', async () => {
    const r = repoWorld();
    writeFileSync(r.teamFile, TEAM);
    writeFileSync(r.userFile, 'overnight: none\n');
    const out = await policyCmd(r, ['show', '--json']);
    expect(out.code).toBe(0);
    const j = JSON.parse(out.stdout);
    expect(j).toMatchObject({ repoRoot: r.repo, sources: [r.teamFile, r.userFile], errors: [], fallback: null });
    expect(j.provenance).toMatchObject({ amber_at: ['.sleds/policy.yml'], overnight: [r.userFile], cheaper: ['defaults'] });
    expect(j.policy.overnight).toBeNull();
    expect(j.policy.allowance.seats.dana).toEqual({ perDayMicros: 60_000_000 });
  });

  it('with a broken file: shows what applies instead and prints the error', async () => {
    const r = repoWorld();
    writeFileSync(r.teamFile, 'amber_at: [\n');
    const out = await policyCmd(r, ['show']);
    expect(out.code).toBe(0);
    expect(out.stdout).toContain('(a file has errors: the built-in defaults apply)');
    expect(out.stderr).toMatch(/^\.sleds\/policy\.yml:\d+: /);
  });

  it('an unknown subcommand is a usage error', async () => {
    const r = repoWorld();
    const out = await policyCmd(r, ['frobnicate']);
    expect(out.code).toBe(2);
    expect(out.stderr).toMatch(/policy takes check \[path\] or show/);
  });
});
