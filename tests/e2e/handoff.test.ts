/**
 * A hand-off end to end: two homes (sam's and dana's), a bare git repository as the shared remote, the REAL Claude
 * Code on both sides against the fake Anthropic API. Sam's session hits the wall → `/sled 5 dana` → on dana's
 * machine `/sled pickup <id>` → dana's `claude --resume` sends the earlier conversation, in a worktree holding sam's
 * uncommitted change; sam's `sleds handoffs` sees the pickup.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runClaudePrint } from './harness/claude-env.js';
import { conversationText, lastUserPrompt, type RecordedRequest } from './harness/fake-anthropic.js';
import { useE2eFixture } from './harness/fixture.js';
import { startFakeSlack } from '../support/fake-slack.js';
import { ensureCodexBinary } from './harness/codex-binary.js';
import { FAKE_KEY_ENV, TEST_OPENAI_KEY, fakeProviderConfigToml } from './harness/codex-env.js';
import { inputMessages } from './harness/fake-openai.js';
import { REPO_ROOT, sleds, startMusher, status, waitFor } from '../support/sleds-env.js';

const PLUGIN_DIR = join(REPO_ROOT, 'plugin');
const git = (cwd: string, ...args: string[]): string => execFileSync('git', args, { cwd, encoding: 'utf8', env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@x', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@x' } });
const header = (r: RecordedRequest, name: string): string | undefined => {
  const v = r.headers[name];
  return Array.isArray(v) ? v[0] : v;
};

describe('hand-off between two machines', { timeout: 240_000 }, () => {
  const fx = useE2eFixture({ claude: true });

  let slackUrl = '';
  async function seat(handle: string, cwd: string, fakeUrl: string) {
    const { home, world } = await fx.claudeWithSleds({
      mode: 'subscriber',
      fakeUrl,
      cwd,
      sledsEnv: { SLEDS_SEAT: handle, SLEDS_KEYRING: 'file' },
      sledsConfig: { upstreams: { slack: slackUrl }, binaries: { claude: fx.claudeBin } },
    });
    for (const k of ['GIT_AUTHOR_NAME', 'GIT_COMMITTER_NAME']) home.env[k] = handle;
    for (const k of ['GIT_AUTHOR_EMAIL', 'GIT_COMMITTER_EMAIL']) home.env[k] = `${handle}@example.com`;
    const keys = await sleds(world, ['keys', 'init', '--name', handle === 'dana' ? 'Dana' : 'Sam', '--json']);
    expect(keys.code, `${keys.stdout}${keys.stderr}`).toBe(0); // with --json its error is on stdout
    return { home, world, entry: JSON.parse(keys.stdout).entry as Record<string, unknown> };
  }

  /** Sam and dana, each with a Claude home, musher and seat keys; a shared bare remote; sam's session handed to dana. */
  async function handedOff() {
    const fake = await fx.fakeAnthropic({ reply: (req) => `Answer to: ${lastUserPrompt(req).slice(0, 50)}` });
    const SLACK_TOKEN = 'xoxb-test-sleds-0123456789';
    const slack = await startFakeSlack({ token: SLACK_TOKEN, known: ['U0DANA', 'U0SAM'] });
    fx.later(() => slack.close());
    const root = mkdtempSync(join(tmpdir(), 'sl-ho-'));
    fx.later(() => rm(root, { recursive: true, force: true }));
    const remote = join(root, 'shop.git');
    git(root, 'init', '-q', '--bare', '-b', 'main', remote);
    const a = join(root, 'sam', 'shop');
    mkdirSync(join(root, 'sam'));
    git(join(root, 'sam'), 'clone', '-q', remote, 'shop');
    writeFileSync(join(a, 'cart.ts'), 'export const total = 1;\n');
    git(a, 'add', '.');
    git(a, 'commit', '-q', '-m', 'cart');
    git(a, 'push', '-q', 'origin', 'HEAD:main');

    slackUrl = slack.apiUrl;
    const sam = await seat('sam', a, fake.url);
    expect((await sleds(sam.world, ['slack', 'set-token'], `${SLACK_TOKEN}\n`)).code).toBe(0);
    // Dana's clone exists before the roster lands; she pulls it like any commit.
    mkdirSync(join(root, 'dana'));
    git(join(root, 'dana'), 'clone', '-q', remote, 'shop');
    const b = join(root, 'dana', 'shop');
    const dana = await seat('dana', b, fake.url);
    mkdirSync(join(a, '.sleds'));
    writeFileSync(join(a, '.sleds', 'roster.yml'), JSON.stringify({ teammates: [{ ...sam.entry, slack: 'U0SAM' }, { ...dana.entry, areas: ['*.ts'], slack: 'U0DANA' }] }, null, 2));
    git(a, 'add', '.sleds');
    git(a, 'commit', '-q', '-m', 'roster');
    git(a, 'push', '-q', 'origin', 'HEAD:main');
    git(b, 'pull', '-q', 'origin', 'main');
    // Dana compared sam's fingerprints with him and pinned his keys: a roster on a branch cannot change them now.
    const trusted = await sleds(dana.world, ['keys', 'trust', 'sam', '--yes'], undefined, {}, b);
    expect(trusted.code, trusted.stderr).toBe(0);
    await startMusher(sam.world);
    await startMusher(dana.world);

    // Sam works, changes a tracked file without committing, adds a new one, and hits the 5-hour wall.
    const first = await runClaudePrint(fx.claudeBin, ['-p', 'remember the word PELICAN', '--plugin-dir', PLUGIN_DIR, '--output-format', 'json'], { env: sam.home.env, cwd: a, timeoutMs: 60_000 });
    expect(first.code, first.stderr).toBe(0);
    const sessionId = (JSON.parse(first.stdout) as { session_id: string }).session_id;
    writeFileSync(join(a, 'cart.ts'), 'export const total = 2; // half done\n');
    writeFileSync(join(a, 'notes.md'), 'try the discount next\n');
    fake.setBehaviour({ usageLimitRejection: { claim: 'five_hour', resetsAt: Math.floor(Date.now() / 1000) + 3 * 3600 } });
    await runClaudePrint(fx.claudeBin, ['-p', '--resume', sessionId, 'next step', '--plugin-dir', PLUGIN_DIR], { env: sam.home.env, cwd: a, timeoutMs: 60_000 });
    await waitFor('the wall and its snapshot', async () => (await status(sam.world)).wallBook.find((w) => w.sessionId === sessionId && w.snapshotId), 30_000);
    const card = await runClaudePrint(fx.claudeBin, ['-p', '--resume', sessionId, '/sled exits', '--plugin-dir', PLUGIN_DIR], { env: sam.home.env, cwd: a, timeoutMs: 60_000 });
    expect(card.stdout).toMatch(/5 Hand off to Dana\s+Slack \+ \/sled pickup/);

    const handedOff = await runClaudePrint(fx.claudeBin, ['-p', '--resume', sessionId, '/sled 5 dana', '--plugin-dir', PLUGIN_DIR], { env: sam.home.env, cwd: a, timeoutMs: 60_000 });
    const m = /Handed off to Dana\. Dana picks it up in Claude Code with \/sled pickup ([2-9a-km-np-z]{12}) — the session resumes there\./.exec(handedOff.stdout);
    expect(m, handedOff.stdout).not.toBeNull();
    const id = m![1]!;
    await waitFor('the push', async () => {
      const r = JSON.parse((await sleds(sam.world, ['handoffs', '--json'])).stdout) as { handoffs: Array<{ id: string; state: string }> };
      return r.handoffs.find((h) => h.id === id && h.state === 'sent');
    }, 30_000);
    expect(git(a, 'status', '--porcelain')).toMatch(/ M cart\.ts/); // sam's checkout untouched
    // The work travels sealed: the remote holds the bundle's ref, and no branch of sam's work.
    expect(git(root, 'ls-remote', remote).split('\n').filter((l) => l.includes(id)).map((l) => l.split('\t')[1])).toEqual([`refs/sleds/handoffs/${id}`]);
    // Dana hears of it on Slack, with the command that picks it up.
    const dm = slack.messages.find((x) => x.channel === 'D0DANA');
    expect(dm?.text).toContain(`/sled pickup ${id}`);
    expect(slack.requests.map((r) => r.raw).join('')).not.toContain(SLACK_TOKEN);
    expect(readFileSync(sam.world.logFile, 'utf8')).not.toContain(SLACK_TOKEN);
    fake.setBehaviour({ usageLimitRejection: null });
    return { fake, slack, SLACK_TOKEN, sam, dana, a, b, id, sessionId };
  }

  it('sam hits the wall, /sled 5 dana; dana picks it up and her claude --resume carries sam\'s conversation and his uncommitted work', async () => {
    const { fake, slack, sam, dana, a, b, id, sessionId } = await handedOff();

    // Dana picks it up in her Claude Code.
    const requestsBefore = fake.messageRequests().length;
    const picked = await runClaudePrint(fx.claudeBin, ['-p', `/sled pickup ${id}`, '--plugin-dir', PLUGIN_DIR], { env: dana.home.env, cwd: b, timeoutMs: 60_000 });
    const where = /Picked up [2-9a-km-np-z]{12} from sam: the work is in (\S+) \(branch sleds\/handoff\//.exec(picked.stdout);
    expect(where, picked.stdout).not.toBeNull();
    expect(fake.messageRequests()).toHaveLength(requestsBefore); // answered by the hook
    const dir = where![1]!;
    expect(readFileSync(join(dir, 'cart.ts'), 'utf8')).toBe('export const total = 2; // half done\n');
    expect(readFileSync(join(dir, 'notes.md'), 'utf8')).toBe('try the discount next\n');

    const resumed = await runClaudePrint(fx.claudeBin, ['-p', '--resume', sessionId, 'carry on from here'], { env: dana.home.env, cwd: dir, timeoutMs: 60_000 });
    expect(resumed.code, resumed.stderr).toBe(0);
    const req = fake.messageRequests().at(-1)!;
    expect(header(req, 'x-claude-code-session-id')).toBe(sessionId);
    expect(conversationText(req)).toContain('remember the word PELICAN');
    expect(lastUserPrompt(req)).toContain('carry on from here');

    // The worktree was rebuilt from the sealed content: sam's HEAD and his change uncommitted on it.
    expect(git(dir, 'rev-parse', 'HEAD').trim()).toBe(git(a, 'rev-parse', 'HEAD').trim());
    expect(git(dir, 'status', '--porcelain')).toMatch(/ M cart\.ts/);
    // A second pickup by dana — the CLI or the slash command, one rule — installs nothing and says where the work is.
    const again = await sleds(dana.world, ['pickup', id, '--json'], undefined, {}, b);
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ again: true, dir, sessionId });
    const againSlash = await runClaudePrint(fx.claudeBin, ['-p', `/sled pickup ${id}`, '--plugin-dir', PLUGIN_DIR], { env: dana.home.env, cwd: b, timeoutMs: 60_000 });
    expect(againSlash.stdout).toContain(`You picked up ${id} from sam before: the work is in ${dir}`);
    const other = await runClaudePrint(fx.claudeBin, ['-p', `/sled pickup ${id}`, '--plugin-dir', PLUGIN_DIR], { env: sam.home.env, cwd: a, timeoutMs: 60_000 });
    expect(other.stdout).toMatch(/^sled: hand-off [2-9a-km-np-z]{12} was sent from this seat, to dana — it is picked up on their machine/m);
    const seen = await waitFor('the pickup on sam\'s side', async () => {
      const r = JSON.parse((await sleds(sam.world, ['handoffs', '--json'])).stdout) as { handoffs: Array<{ id: string; state: string; pickedUpBy: string | null }> };
      return r.handoffs.find((h) => h.id === id && h.state === 'picked_up');
    }, 30_000);
    expect(seen.pickedUpBy).toBe('dana');
    // Slack hears it in the hand-off post's own thread, from sam's side (dana needs no Slack token).
    const post = slack.messages.find((x) => x.channel === 'D0DANA' && x.text.includes(`/sled pickup ${id}`))!;
    const reply = slack.messages.find((x) => x.thread_ts === post.ts);
    expect(reply?.channel).toBe('D0DANA');
    expect(reply?.text).toMatch(/picked up by dana \d{1,2}:\d{2}/);
    expect((await sleds(sam.world, ['status'])).stdout).toMatch(new RegExp(`Hand-off ${id} to dana · picked up by dana \\d{1,2}:\\d{2}[ap]m`));
    expect(existsSync(join(dana.world.sledsHome, 'state', 'handoffs', `${id}.md`))).toBe(true);
  });

  it('the same kind of bundle picked up with Codex starts `codex exec` whose first prompt carries the pack', async () => {
    const { dana, b, id } = await handedOff();
    const codexBin = await ensureCodexBinary();
    const openai = await fx.fakeOpenAI({ reply: 'On it.' });
    // Dana's Codex: its own home, pointed at the fake Responses API.
    const codexHome = join(dana.home.home, '.codex');
    mkdirSync(codexHome, { recursive: true });
    writeFileSync(join(codexHome, 'config.toml'), fakeProviderConfigToml(openai.url, b));
    const env = { ...dana.home.env, CODEX_HOME: codexHome, [FAKE_KEY_ENV]: TEST_OPENAI_KEY, SLEDS_CODEX_BIN: codexBin };

    const picked = await sleds(dana.world, ['pickup', id, '--harness', 'codex', '--headless'], undefined, env, b);
    expect(picked.code, picked.stderr).toBe(0);
    expect(picked.stderr).toMatch(new RegExp(`picked up ${id} from sam into (\\S+) \\(branch sleds/handoff/${id}\\)`));
    const first = openai.requests.find((r) => inputMessages(r).some((m) => m.role === 'user'));
    expect(first, 'codex exec sent no request').toBeDefined();
    const prompt = inputMessages(first!).filter((m) => m.role === 'user').map((m) => m.text).join('\n');
    // The pack: the brief of sam's session — what he asked, what changed — as Codex's first prompt.
    expect(prompt).toContain('remember the word PELICAN');
    expect(prompt).toContain('cart.ts');
    expect(prompt).toMatch(/sam/i);
    expect(picked.stdout).toContain('On it.');
  });
});
