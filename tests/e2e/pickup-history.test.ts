/**
 * The acceptance's two-home hand-off (issue 12), with the REAL Claude Code on both sides against the fake Anthropic
 * API: sam hits the 5-hour wall, `/sled 5 dana`, and dana picks up straight after — about a minute after the wall,
 * well inside the window where a limit record reads as a wall happening now. Her seat gets no wall, her prompt is
 * not blocked and reaches the model with sam's conversation in its messages, her Today holds only her own calls,
 * and `claude --continue` in the worktree resumes the same session (the transcript is under the worktree's slug).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runClaudePrint } from './harness/claude-env.js';
import { conversationText, lastUserPrompt, type RecordedRequest } from './harness/fake-anthropic.js';
import { useE2eFixture } from './harness/fixture.js';
import { REPO_ROOT, sleds, startMusher, status, waitFor } from '../support/sleds-env.js';

const PLUGIN_DIR = join(REPO_ROOT, 'plugin');
const git = (cwd: string, ...args: string[]): string => execFileSync('git', args, { cwd, encoding: 'utf8', env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@x', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@x' } });
const header = (r: RecordedRequest, name: string): string | undefined => {
  const v = r.headers[name];
  return Array.isArray(v) ? v[0] : v;
};
const slug = (dir: string): string => dir.replace(/[^A-Za-z0-9]/g, '-');

/** The distinct model calls (message ids with usage) in a transcript's bytes from `from` on. */
function callsAfter(file: string, from: number): number {
  const ids = new Set<string>();
  for (const line of readFileSync(file).subarray(from).toString('utf8').split('\n')) {
    if (!line.includes('"usage"')) continue;
    const r = JSON.parse(line) as { type?: string; message?: { id?: string; model?: string } };
    if (r.type === 'assistant' && r.message?.id && r.message.model !== '<synthetic>') ids.add(r.message.id);
  }
  return ids.size;
}

describe('a pickup a minute after the wall, with the real claude', { timeout: 300_000 }, () => {
  const fx = useE2eFixture({ claude: true });

  async function seat(handle: string, cwd: string, fakeUrl: string) {
    const { home, world } = await fx.claudeWithSleds({
      mode: 'subscriber',
      fakeUrl,
      cwd,
      sledsEnv: { SLEDS_SEAT: handle, SLEDS_KEYRING: 'file' },
      sledsConfig: { binaries: { claude: fx.claudeBin } },
    });
    for (const k of ['GIT_AUTHOR_NAME', 'GIT_COMMITTER_NAME']) home.env[k] = handle;
    for (const k of ['GIT_AUTHOR_EMAIL', 'GIT_COMMITTER_EMAIL']) home.env[k] = `${handle}@example.com`;
    const keys = await sleds(world, ['keys', 'init', '--name', handle === 'dana' ? 'Dana' : 'Sam', '--json']);
    expect(keys.code, `${keys.stdout}${keys.stderr}`).toBe(0); // with --json its error is on stdout
    return { home, world, entry: JSON.parse(keys.stdout).entry as Record<string, unknown> };
  }

  it("dana's seat gets no wall and none of sam's spend; her prompt reaches the model with his conversation, and --continue in the worktree resumes it", async () => {
    const fake = await fx.fakeAnthropic({ reply: (req) => `Answer to: ${lastUserPrompt(req).slice(0, 50)}` });
    const root = mkdtempSync(join(tmpdir(), 'sl-phe-'));
    fx.later(() => rm(root, { recursive: true, force: true }));
    const remote = join(root, 'shop.git');
    git(root, 'init', '-q', '--bare', '-b', 'main', remote);
    mkdirSync(join(root, 'sam'));
    git(join(root, 'sam'), 'clone', '-q', remote, 'shop');
    const a = join(root, 'sam', 'shop');
    writeFileSync(join(a, 'cart.ts'), 'export const total = 1;\n');
    git(a, 'add', '.');
    git(a, 'commit', '-q', '-m', 'cart');
    git(a, 'push', '-q', 'origin', 'HEAD:main');
    const sam = await seat('sam', a, fake.url);
    mkdirSync(join(root, 'dana'));
    git(join(root, 'dana'), 'clone', '-q', remote, 'shop');
    const b = join(root, 'dana', 'shop');
    const dana = await seat('dana', b, fake.url);
    mkdirSync(join(a, '.sleds'));
    writeFileSync(join(a, '.sleds', 'roster.yml'), JSON.stringify({ teammates: [sam.entry, { ...dana.entry, areas: ['*.ts'] }] }, null, 2));
    git(a, 'add', '.sleds');
    git(a, 'commit', '-q', '-m', 'roster');
    git(a, 'push', '-q', 'origin', 'HEAD:main');
    git(b, 'pull', '-q', 'origin', 'main');
    expect((await sleds(dana.world, ['keys', 'trust', 'sam', '--yes'], undefined, {}, b)).code).toBe(0);
    await startMusher(sam.world);
    await startMusher(dana.world);

    // Sam works, leaves a change uncommitted, and hits the 5-hour wall.
    const first = await runClaudePrint(fx.claudeBin, ['-p', 'remember the word PELICAN', '--plugin-dir', PLUGIN_DIR, '--output-format', 'json'], { env: sam.home.env, cwd: a, timeoutMs: 60_000 });
    expect(first.code, first.stderr).toBe(0);
    const sessionId = (JSON.parse(first.stdout) as { session_id: string }).session_id;
    writeFileSync(join(a, 'cart.ts'), 'export const total = 2; // half done\n');
    fake.setBehaviour({ usageLimitRejection: { claim: 'five_hour', resetsAt: Math.floor(Date.now() / 1000) + 3 * 3600 } });
    await runClaudePrint(fx.claudeBin, ['-p', '--resume', sessionId, 'next step', '--plugin-dir', PLUGIN_DIR], { env: sam.home.env, cwd: a, timeoutMs: 60_000 });
    await waitFor("sam's wall and its snapshot", async () => (await status(sam.world)).wallBook.find((w) => w.sessionId === sessionId && w.snapshotId), 30_000);
    const handedOff = await runClaudePrint(fx.claudeBin, ['-p', '--resume', sessionId, '/sled 5 dana', '--plugin-dir', PLUGIN_DIR], { env: sam.home.env, cwd: a, timeoutMs: 60_000 });
    const id = /\/sled pickup ([2-9a-km-np-z]{12})/.exec(handedOff.stdout)?.[1];
    expect(id, handedOff.stdout).toBeDefined();
    await waitFor('the push', async () => (JSON.parse((await sleds(sam.world, ['handoffs', '--json'])).stdout) as { handoffs: Array<{ id: string; state: string }> }).handoffs.find((h) => h.id === id && h.state === 'sent'), 30_000);
    fake.setBehaviour({ usageLimitRejection: null }); // dana's own seat has room

    // Dana picks it up straight away: inside a minute or two of sam's wall.
    const picked = await runClaudePrint(fx.claudeBin, ['-p', `/sled pickup ${id}`, '--plugin-dir', PLUGIN_DIR], { env: dana.home.env, cwd: b, timeoutMs: 60_000 });
    const dir = /the work is in (\S+) \(branch sleds\/handoff\//.exec(picked.stdout)?.[1];
    expect(dir, picked.stdout).toBeDefined();
    const installed = join(dana.home.claudeDir, 'projects', slug(dir!), `${sessionId}.jsonl`);
    const installedBytes = statSync(installed).size;

    const requestsBefore = fake.messageRequests().length;
    const resumed = await runClaudePrint(fx.claudeBin, ['-p', '--resume', sessionId, 'carry on from here', '--plugin-dir', PLUGIN_DIR], { env: dana.home.env, cwd: dir!, timeoutMs: 60_000 });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toMatch(/^Answer to: [^]*carry on from here/); // not a wall card: the model answered (sam's unanswered turn and hers are one user turn)
    const req = fake.messageRequests().slice(requestsBefore).find((r) => lastUserPrompt(r).includes('carry on from here'));
    expect(req, 'her prompt never reached the model').toBeDefined();
    expect(header(req!, 'x-claude-code-session-id')).toBe(sessionId);
    expect(conversationText(req!)).toContain('remember the word PELICAN');

    // Once her musher has read the file through her own calls: no wall on her seat, and Today holds her calls only.
    const hers = callsAfter(installed, installedBytes);
    expect(hers).toBeGreaterThan(0);
    const read = await waitFor("dana's calls in her Today", async () => {
      const s = await status(dana.world);
      return s.today.byModel.reduce((n, m) => n + m.records, 0) >= hers ? s : null;
    }, 30_000);
    expect(read.today.byModel.reduce((n, m) => n + m.records, 0)).toBe(hers);
    expect(read.wallBook).toEqual([]);

    // `claude --continue` in the worktree finds the same conversation.
    const cont = await runClaudePrint(fx.claudeBin, ['-p', '--continue', 'and once more', '--plugin-dir', PLUGIN_DIR], { env: dana.home.env, cwd: dir!, timeoutMs: 60_000 });
    expect(cont.code, cont.stderr).toBe(0);
    const again = fake.messageRequests().find((r) => lastUserPrompt(r).includes('and once more'));
    expect(again, 'the --continue prompt never reached the model').toBeDefined();
    expect(header(again!, 'x-claude-code-session-id')).toBe(sessionId);
    expect(conversationText(again!)).toContain('remember the word PELICAN');
  });
});
