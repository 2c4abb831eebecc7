import { execFile, execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { generateSeatKeys } from '../../musher/handoff/keys.js';
import { readHeader, seal } from '../../musher/handoff/seal.js';
import { openGitTransport } from '../../musher/handoff/git-transport.js';
import { CLI, disposeWorld, makeWorld, startMusher, type SledsWorld } from '../support/sleds-env.js';

const DAY = 86_400_000;
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

const git = (cwd: string, ...args: string[]): string =>
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@x', '-c', 'init.defaultBranch=main', ...args], { cwd, encoding: 'utf8' });

function runIn(w: SledsWorld, cwd: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [...CLI, ...args], { cwd, env: w.env }, (err, stdout, stderr) => resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }));
  });
}

describe('sleds handoffs prune', () => {
  it("removes only the expired hand-offs from the repository's remote", async () => {
    const w = makeWorld({ SLEDS_NO_AUTOSTART: '1' });
    cleanups.push(() => disposeWorld(w));
    const remote = join(w.root, 'shop.git');
    git(w.root, 'init', '-q', '--bare', remote);
    const repo = join(w.root, 'shop');
    mkdirSync(repo);
    git(repo, 'init', '-q');
    writeFileSync(join(repo, 'a.txt'), 'a\n');
    git(repo, 'add', '.');
    git(repo, 'commit', '-q', '-m', 'a');
    git(repo, 'remote', 'add', 'origin', remote);
    git(repo, 'push', '-q', 'origin', 'main');

    const sam = generateSeatKeys();
    const dana = generateSeatKeys();
    const sealAt = (nowMs: number) => seal(Buffer.from('work'), { sender: { handle: 'sam', signingKey: sam.ed25519.privateKey }, recipient: { handle: 'dana', x25519: dana.x25519.publicKey }, nowMs });
    const old = sealAt(Date.now() - 8 * DAY);
    const fresh = sealAt(Date.now());
    const transport = await openGitTransport({ repoDir: repo, readExpiry: (b) => readHeader(b).expiresAt, clock: { now: () => Date.now() } });
    await transport.send({ id: readHeader(old).id, bundle: old });
    await transport.send({ id: readHeader(fresh).id, bundle: fresh });

    await startMusher(w);
    const r = await runIn(w, repo, ['handoffs', 'prune', '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ pruned: [readHeader(old).id] });
    const refs = git(repo, 'ls-remote', 'origin', 'refs/sleds/*');
    expect(refs).toContain(`refs/sleds/handoffs/${readHeader(fresh).id}`);
    expect(refs).not.toContain(readHeader(old).id);
    expect((await runIn(w, repo, ['handoffs', 'prune'])).stdout).toBe('No expired hand-offs on the remote.\n');
    expect((await runIn(w, w.root, ['handoffs', 'prune'])).stderr).toMatch(/^sleds: /);
  });
});
