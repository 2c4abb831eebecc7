import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Task } from '../../core/task/task.js';
import { RECEIPT_START, receiptLineIn } from '../../core/receipt/pr-block.js';
import type { PrWatchRound } from '../../musher/github/pr-watcher.js';
import { sleds, startMusher, waitFor, type SledsWorld } from '../support/sleds-env.js';
import { useWorlds } from '../support/worlds.js';
import { writeSledsConfig } from '../support/sleds-config.js';
import { startFakeGithub, type FakeGithub } from '../support/fake-github.js';

const TOKEN = 'ghp_musher_pr_token_never_printed';

const world = useWorlds();
const fakes: FakeGithub[] = [];
const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(fakes.splice(0).map((f) => f.close()));
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function repo(branch: string, origin: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'sl-ghm-'));
  dirs.push(dir);
  const git = (...args: string[]) => execFileSync('git', args, { cwd: dir, stdio: 'ignore', env: { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null' } });
  git('init', '-q', '-b', branch);
  git('remote', 'add', 'origin', origin);
  return dir;
}

async function tasks(w: SledsWorld): Promise<Task[]> {
  const r = await sleds(w, ['tasks', '--json']);
  expect(r.code, r.stderr).toBe(0);
  return (JSON.parse(r.stdout) as { tasks: Task[] }).tasks;
}

describe('the PR watcher and the receipt in the PR body (sleds musher against the fake GitHub API)', () => {
  it("a PR opened for the task's branch ends the task, and its receipt lands in the PR body once", async () => {
    const gh = await startFakeGithub({ token: TOKEN });
    fakes.push(gh);
    const w = world({ SLEDS_KEYRING: 'file' });
    writeSledsConfig(w, { upstreams: { github: gh.apiUrl }, binaries: { gh: '/nonexistent/gh' } });
    expect((await sleds(w, ['github', 'set-token'], TOKEN)).code).toBe(0);
    await startMusher(w);
    const checkout = repo('feature/login', 'git@github.com:acme/shop.git');
    const prompt = JSON.stringify({ session_id: 's-login', prompt: 'Fix the flaky login test', cwd: checkout, hook_event_name: 'UserPromptSubmit' });
    expect((await sleds(w, ['hook', 'UserPromptSubmit'], prompt)).code).toBe(0);
    const [task] = await tasks(w);
    expect(task).toMatchObject({ title: 'Fix the flaky login test', state: 'open' });

    gh.createRepo('acme/shop');
    const before = await sleds(w, ['github', 'watch', '--json']);
    expect(before.code, before.stderr).toBe(0);
    expect(JSON.parse(before.stdout) as PrWatchRound).toEqual({ repos: ['acme/shop'], finished: [], errors: [] });

    const pr = gh.openPull('acme/shop', { branch: 'feature/login', body: '## What\nFixes the flaky login test.', createdAt: Date.now() });
    const round = await sleds(w, ['github', 'watch']);
    expect(round.code, round.stderr).toBe(0);
    expect(round.stdout).toContain(`task ${task!.id} done: https://github.com/acme/shop/pull/${pr.number} opened`);

    const body = await waitFor('the receipt in the PR body', () => receiptLineIn(gh.pull('acme/shop', pr.number)!.body) && gh.pull('acme/shop', pr.number)!.body, 20_000);
    expect(body.startsWith(`## What\nFixes the flaky login test.\n\n${RECEIPT_START}\n`)).toBe(true);
    expect(receiptLineIn(body)).toMatch(/ min · \$\d+\.\d\d · .*seat /);
    expect((await tasks(w)).find((t) => t.id === task!.id)!.state).toBe('done');
    const receipts = await sleds(w, ['receipts', '--json']);
    expect(receipts.stdout).toContain(task!.id);

    // The task is done: later rounds leave it (and the PR body) alone.
    const again = await sleds(w, ['github', 'watch', '--json']);
    expect(JSON.parse(again.stdout) as PrWatchRound).toMatchObject({ finished: [] });
    expect(gh.requests.filter((q) => q.method === 'PATCH')).toHaveLength(1);
    expect(gh.pull('acme/shop', pr.number)!.body!.split(RECEIPT_START)).toHaveLength(2);
  });
});
