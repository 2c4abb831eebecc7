/**
 * Who am I: `sleds keys init --handle <h>` stores the seat's handle in the user's config.yml, where every sleds
 * process reads it when it needs it — a musher already running hands off under the new handle without a restart.
 * SLEDS_SEAT still overrides it. The worlds here have no SLEDS_SEAT unless a test sets one: the OS user is the
 * fallback. Real CLI, real musher, real git remote, real seal.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { disposeWorld, makeWorld, sleds, startMusher, waitFor, type SledsWorld } from '../support/sleds-env.js';
import { sledsConfigFile } from '../support/sleds-config.js';

const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function world(env: NodeJS.ProcessEnv = {}): SledsWorld {
  const w = makeWorld({ SLEDS_KEYRING: 'file', ...env });
  delete w.env.SLEDS_SEAT;
  Object.assign(w.env, env);
  cleanups.push(() => disposeWorld(w));
  return w;
}

const git = (cwd: string, ...args: string[]): string =>
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@x', '-c', 'init.defaultBranch=main', ...args], { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

interface Step {
  id: string;
  status: string;
  message: string;
}

describe('sleds keys init --handle', () => {
  it('stores the handle in config.yml (keeping what the file says), and keys show, doctor and a second init read it from there', async () => {
    const w = world();
    const config = sledsConfigFile(w);
    mkdirSync(join(config, '..'), { recursive: true });
    const mine = '# my settings\nupstreams:\n  slack: https://slack.example.test/api/ # the team proxy\n';
    writeFileSync(config, mine);

    const made = await sleds(w, ['keys', 'init', '--handle', 'Dana', '--name', 'Dana Lee', '--json']);
    expect(made.code, made.stdout + made.stderr).toBe(0);
    const out = JSON.parse(made.stdout) as { created: boolean; entry: { handle: string; name: string }; handleFile: string };
    expect(out).toMatchObject({ created: true, entry: { handle: 'dana', name: 'Dana Lee' }, handleFile: config });
    expect(readFileSync(config, 'utf8')).toBe(`${mine}handle: dana\n`);

    const shown = await sleds(w, ['keys', 'show', '--json']);
    expect(JSON.parse(shown.stdout).entry.handle).toBe('dana');
    const d = JSON.parse((await sleds(w, ['doctor', '--json'])).stdout) as { steps: Step[] };
    expect(d.steps.find((s) => s.id === 'handle')).toMatchObject({ status: 'ok', message: `handle: dana (handle: in ${config})` });
    expect(d.steps.find((s) => s.id === 'config')?.status).toBe('info'); // handle: is a known key, not a typo

    // The seat already has keys: a new handle keeps them (the roster entry's keys stay the same).
    const renamed = await sleds(w, ['keys', 'init', '--handle', 'dana.lee']);
    expect(renamed.code, renamed.stderr).toBe(0);
    expect(renamed.stdout).toMatch(/^Handle set to dana\.lee in .*config\.yml; the hand-off keys are unchanged \(private keys in .*\)\./m);
    const after = JSON.parse((await sleds(w, ['keys', 'show', '--json'])).stdout) as { entry: { handle: string; keys: unknown } };
    expect(after.entry).toMatchObject({ handle: 'dana.lee', keys: JSON.parse(shown.stdout).entry.keys });

    // SLEDS_SEAT still overrides, for that one process.
    const over = await sleds(w, ['keys', 'show', '--json'], undefined, { SLEDS_SEAT: 'jo' });
    expect(JSON.parse(over.stdout).entry.handle).toBe('jo');

    // A handle that is not one: refused, nothing written.
    const bad = await sleds(w, ['keys', 'init', '--handle', '../x', '--json']);
    expect(bad.code).toBe(1); // --json: every failure exits 1
    expect(JSON.parse(bad.stdout).error).toBe("'../x' is not a handle: letters, digits, '.', '_' or '-', starting with a letter or digit — e.g. sleds keys init --handle dana");
    expect(readFileSync(config, 'utf8')).toBe(`${mine}handle: dana.lee\n`);
  });

  it('without --handle nor config, the OS user is the handle and doctor says where to set another', async () => {
    const w = world();
    const d = JSON.parse((await sleds(w, ['doctor', '--json'])).stdout) as { steps: Step[] };
    expect(d.steps.find((s) => s.id === 'handle')).toMatchObject({ status: 'info', message: `handle: ${userInfo().username.toLowerCase()} (your OS user; set another with 'sleds keys init --handle <name>')` });
  });

  it('a musher started before `keys init --handle sam` sends the hand-off as sam, with no restart', { timeout: 120_000 }, async () => {
    const root = mkdtempSync(join(tmpdir(), 'sl-who-'));
    cleanups.push(() => rmSync(root, { recursive: true, force: true }));
    const remote = join(root, 'shop.git');
    git(root, 'init', '-q', '--bare', remote);
    const a = join(root, 'sam-shop');
    git(root, 'clone', '-q', remote, a);
    writeFileSync(join(a, 'cart.ts'), 'export const total = 1;\n');
    git(a, 'add', '.');
    git(a, 'commit', '-q', '-m', 'cart');

    // Sam's musher is up (a hook started it) before he ever says who he is.
    const sam = world();
    await startMusher(sam);
    const samKeys = await sleds(sam, ['keys', 'init', '--handle', 'sam', '--name', 'Sam', '--json']);
    expect(samKeys.code, samKeys.stdout + samKeys.stderr).toBe(0);
    const dana = world({ SLEDS_SEAT: 'dana' });
    const danaKeys = await sleds(dana, ['keys', 'init', '--name', 'Dana', '--json']);
    const samEntry = JSON.parse(samKeys.stdout).entry as Record<string, unknown>;
    expect(samEntry.handle).toBe('sam');
    mkdirSync(join(a, '.sleds'));
    writeFileSync(join(a, '.sleds', 'roster.yml'), JSON.stringify({ teammates: [samEntry, { ...JSON.parse(danaKeys.stdout).entry, areas: ['*.ts'] }] }, null, 2));
    git(a, 'add', '.sleds');
    git(a, 'commit', '-q', '-m', 'roster');
    git(a, 'push', '-q', 'origin', 'HEAD:main');
    const b = join(root, 'dana-shop');
    git(root, 'clone', '-q', remote, b);
    expect((await sleds(dana, ['keys', 'trust', 'sam', '--yes', '--json'], undefined, {}, b)).code).toBe(0);
    await startMusher(dana);

    const sessionId = '7c2e9a41-3b5d-4f80-9e1a-2d4c6b8f0a13';
    const tx = join(sam.claudeDir, 'projects', a.replace(/[^A-Za-z0-9]/g, '-'), `${sessionId}.jsonl`);
    const base = { isSidechain: false, userType: 'external', entrypoint: 'cli', cwd: a, sessionId, version: '2.1.328', gitBranch: 'main' };
    mkdirSync(join(tx, '..'), { recursive: true });
    writeFileSync(tx, `${JSON.stringify({ ...base, parentUuid: null, type: 'user', message: { role: 'user', content: 'fix the cart total' }, uuid: '00000001-1111-4222-8333-000000000001', timestamp: '2026-11-30T10:00:01.000Z' })}\n`);
    const prompt = async (text: string): Promise<{ decision?: string; reason?: string }> => {
      const r = await sleds(sam, ['hook', 'UserPromptSubmit'], JSON.stringify({ session_id: sessionId, prompt: text, cwd: a, transcript_path: tx, hook_event_name: 'UserPromptSubmit' }));
      expect(r.code, r.stderr).toBe(0);
      return r.stdout.trim() === '' ? {} : JSON.parse(r.stdout);
    };
    await prompt('fix the cart total');
    writeFileSync(join(a, 'cart.ts'), 'export const total = 2; // half done\n');

    const answer = await prompt('/sled handoff dana');
    const id = /\/sled pickup ([2-9a-km-np-z]{12})/.exec(answer.reason ?? '')?.[1];
    expect(id, answer.reason).toBeDefined();
    await waitFor('the push', async () => {
      const list = JSON.parse((await sleds(sam, ['handoffs', '--json'])).stdout).handoffs as Array<{ id: string; state: string }>;
      return list.find((h) => h.id === id && h.state === 'sent');
    }, 30_000);

    // Dana's pickup checks the bundle's sender against the roster: it is sam, signed with sam's key.
    const picked = await sleds(dana, ['pickup', id!, '--json'], undefined, {}, b);
    expect(picked.code, picked.stdout + picked.stderr).toBe(0);
    const got = JSON.parse(picked.stdout) as { peer: string; dir: string };
    expect(got.peer).toBe('sam');
    expect(readFileSync(join(got.dir, 'cart.ts'), 'utf8')).toBe('export const total = 2; // half done\n');
  });
});

describe('examples/roster.yml', () => {
  it('is a roster the real reader takes: every teammate, their areas, and the owner of a changed file', async () => {
    const { RosterReader } = await import('../../musher/roster/reader.js');
    const repo = mkdtempSync(join(tmpdir(), 'sl-roster-'));
    cleanups.push(() => rmSync(repo, { recursive: true, force: true }));
    git(repo, 'init', '-q');
    mkdirSync(join(repo, '.sleds'));
    writeFileSync(join(repo, '.sleds', 'roster.yml'), readFileSync(join(import.meta.dirname, '..', '..', 'examples', 'roster.yml'), 'utf8'));
    mkdirSync(join(repo, 'web', 'checkout'), { recursive: true });
    writeFileSync(join(repo, 'web', 'checkout', 'cart.ts'), 'x\n');
    const errors: string[] = [];
    const reader = new RosterReader({ info: () => undefined, warn: (m) => errors.push(m), error: (m) => errors.push(m) });
    const roster = reader.rosterAt(repo);
    expect(errors).toEqual([]);
    expect(roster?.teammates.map((t) => t.handle)).toEqual(['jake', 'dana']);
    expect(roster?.teammates.every((t) => t.keys && t.areas.length > 0)).toBe(true);
    // jake changed web/checkout/cart.ts: dana owns web/ — she is the one a wall hands it to.
    expect((await reader.ownerFor(repo, 'jake'))?.handle).toBe('dana');
  });
});
