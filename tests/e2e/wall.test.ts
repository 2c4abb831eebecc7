/**
 * The wall end to end, with the REAL Claude Code against the fake Anthropic API in subscriber mode: the usage-limit
 * 429 opens a wall with a snapshot, the next prompt is answered with the card (no request reaches the API),
 * `/sled 1` restarts the same session in its tmux pane on musher's gateway with the platform key until the
 * allowance ends it, and `/sled 6` on another wall runs the session headless at its reset.
 */
import { execFile, execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, readdirSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { runClaudePrint } from './harness/claude-env.js';
import { conversationText, lastUserPrompt, type RecordedRequest } from './harness/fake-anthropic.js';
import { useE2eFixture } from './harness/fixture.js';
import { TMUX_BIN } from './harness/tmux.js';
import { REPO_ROOT, sleds, startMusher, status, waitFor } from '../support/sleds-env.js';

const PLUGIN_DIR = join(REPO_ROOT, 'plugin');
const STATUSLINE = `node ${join(REPO_ROOT, 'dist', 'statusline.cjs')}`;
const PLATFORM_KEY = 'sk-ant-api03-platform-key-for-the-e2e-0123456789';

const execFileP = promisify(execFile);

/**
 * The real tmux behind a shim that first appends its argv to `log`: the tmux client musher runs lives for a few
 * milliseconds, too short to catch with `ps`, so what it was given is read here (the same bytes /proc/<pid>/cmdline
 * showed every local user while it ran).
 */
function recordingTmux(): { bin: string; log: string } {
  const dir = mkdtempSync(join(tmpdir(), 'sl-tmuxrec-'));
  const bin = join(dir, 'tmux');
  const log = join(dir, 'argv.log');
  writeFileSync(log, '');
  writeFileSync(bin, `#!/bin/sh\nprintf '%s\\n' "$*" >> '${log}'\nexec '${TMUX_BIN}' "$@"\n`);
  chmodSync(bin, 0o755);
  return { bin, log };
}

const header = (r: RecordedRequest, name: string): string | undefined => {
  const v = r.headers[name];
  return Array.isArray(v) ? v[0] : v;
};

describe('the wall in the real Claude Code', { timeout: 180_000 }, () => {
  const fx = useE2eFixture({ claude: true });

  /** A git project with the team's policy, a Claude home on the fake API, and musher with the platform key. */
  async function setUp(policy: string, settings?: object, extraBinaries: { tmux?: string } = {}) {
    const fake = await fx.fakeAnthropic({ reply: (req) => `Answer to: ${lastUserPrompt(req).slice(0, 60)}` });
    const cwd = await fx.project();
    execFileSync('git', ['init', '-q'], { cwd });
    mkdirSync(join(cwd, '.sleds'));
    writeFileSync(join(cwd, '.sleds', 'policy.yml'), policy);
    writeFileSync(join(cwd, 'work.txt'), 'half done\n');
    const { home, world } = await fx.claudeWithSleds({
      mode: 'subscriber',
      fakeUrl: fake.url,
      cwd,
      settings,
      sledsEnv: { SLEDS_SEAT: 'dana' },
      sledsConfig: { upstreams: { anthropic: fake.url }, binaries: { claude: fx.claudeBin, ...extraBinaries } },
    });
    const keySet = await sleds(world, ['key', 'set', 'anthropic'], `${PLATFORM_KEY}\n`);
    expect(keySet.code, keySet.stderr).toBe(0);
    await startMusher(world);
    return { fake, home, world };
  }

  /**
   * A headless session (no policy rules) that remembers `word`, then a prompt that hits a 5-hour wall resetting in a
   * few seconds (the clock musher and the fake share).
   */
  async function hitWallSoon(word: string) {
    const { fake, home, world } = await setUp('rules: []\n');
    const first = await runClaudePrint(fx.claudeBin, ['-p', `remember the word ${word}`, '--plugin-dir', PLUGIN_DIR, '--output-format', 'json'], { env: home.env, cwd: home.cwd, timeoutMs: 60_000 });
    expect(first.code, first.stderr).toBe(0);
    const sessionId = (JSON.parse(first.stdout) as { session_id: string }).session_id;
    const resetsAt = Math.floor(Date.now() / 1000) + 20; // room for two claude runs on a loaded machine before it passes
    fake.setBehaviour({ usageLimitRejection: { claim: 'five_hour', resetsAt } });
    const hit = await runClaudePrint(fx.claudeBin, ['-p', '--resume', sessionId, 'next step', '--plugin-dir', PLUGIN_DIR], { env: home.env, cwd: home.cwd, timeoutMs: 60_000 });
    return { fake, home, world, sessionId, resetsAt, hit };
  }

  it('429 → wall + snapshot → the card with no request → /sled 1 resumes the same session on the key in its pane → the allowance ends it', async () => {
    const resetsAt = Math.floor(Date.now() / 1000) + 3 * 3600;
    const tmuxRec = recordingTmux();
    const { fake, home, world } = await setUp(
      ['allowance:', '  default: { per_day: $0.05 }', ''].join('\n'),
      { statusLine: { type: 'command', command: STATUSLINE, padding: 0 } },
      { tmux: tmuxRec.bin },
    );
    const tmux = await fx.claudeInTmux(home, ['--plugin-dir', PLUGIN_DIR], 30_000);
    await tmux.sendText('first task: rename the widget');
    await tmux.sendKeys('Enter');
    await tmux.waitForText('Answer to: first task: rename the widget', 30_000);

    fake.setBehaviour({ usageLimitRejection: { claim: 'five_hour', resetsAt } });
    await tmux.sendText('second task: now the gadget');
    await tmux.sendKeys('Enter');
    await tmux.waitForText("You've hit your 5-hour limit", 30_000);
    const wall = await waitFor('the wall and its snapshot', async () => (await status(world)).wallBook.find((w) => w.snapshotId), 30_000);
    const sessionId = wall.sessionId;
    const shot = JSON.parse((await sleds(world, ['snapshot', 'show', wall.snapshotId!, '--json'])).stdout) as Record<string, unknown>;
    expect(JSON.stringify(shot)).toContain('work.txt');

    // At the wall the next prompt is answered with the card; nothing reaches the API.
    const before = fake.messageRequests().length;
    await tmux.sendText('keep going please');
    await tmux.sendKeys('Enter');
    const card = await tmux.waitForScreen((s) => s.includes('Wall: usage limit reached') && s.includes(`wall ${wall.wallId}`), 30_000, 'the wall card');
    expect(card).toMatch(/1 Continue now\s+platform key · allowance left \$0\.05/);
    expect(fake.messageRequests()).toHaveLength(before);

    // /sled 1: the same session restarts in this pane on the gateway, with the platform key upstream.
    // Each answer on the key now costs about $0.08: the $0.05 allowance lets one through, then ends it.
    fake.setBehaviour({ usageLimitRejection: null, usage: { input_tokens: 40_000 } });
    // Claude Code (2.1.328) puts a blocked prompt back in the input box for editing: clear it first.
    await tmux.waitForScreen((s) => /^❯\s+keep going please\s*$/m.test(s), 10_000, 'the blocked prompt back in the input');
    await tmux.sendKeys('C-u');
    await tmux.waitForScreen((s) => /^❯\s*$/m.test(s), 10_000, 'an empty input');
    await tmux.sendText('/sled 1');
    await tmux.sendKeys('Enter');
    const onKey = await fake.waitForMessageRequests(before + 1, 60_000);
    const resumed = onKey[before]!;
    expect(header(resumed, 'x-api-key')).toBe(PLATFORM_KEY);
    expect(header(resumed, 'authorization')).toBeUndefined();
    expect(header(resumed, 'x-claude-code-session-id')).toBe(sessionId);
    expect(conversationText(resumed)).toContain('first task: rename the widget');
    // The pane restarted in place: the resumed session's first turn, answered through the gateway.
    await tmux.waitForScreen((s) => /❯ Your usage limit has reset[\s\S]*● Answer to: second task: now the gadget/.test(s), 30_000, 'the resumed turn in the same pane');
    const metered = await waitFor('the key spend in the rail', async () => {
      const s = await status(world);
      return s.platformKey.bySeatModel.find((r) => r.seat === 'dana' && r.records > 0) ? s : null;
    });
    expect(metered.platformKey.todayMicros).toBeGreaterThan(0);

    // The resumed claude runs in its pane and has spent through the gateway with its local token: that token is in
    // no process's argv — not the pane's (the exec-env wrapper and claude --resume=<id>), not the tmux client musher
    // ran — and the 0600 file it travelled in is gone.
    const { stdout: ps } = await execFileP('ps', ['-eo', 'args'], { maxBuffer: 16 * 1024 * 1024 });
    expect(ps).not.toContain('sleds_gw_');
    const tmuxCalls = readFileSync(tmuxRec.log, 'utf8');
    expect(tmuxCalls).toMatch(/respawn-pane -k -t %\d+ /);
    expect(tmuxCalls).not.toContain('sleds_gw_');
    expect(tmuxCalls).not.toContain('ANTHROPIC_AUTH_TOKEN');
    const pane = ps.split('\n').find((l) => l.includes(' exec-env ') && l.includes(`--resume=${sessionId}`));
    expect(pane, 'the pane runs claude --resume=<id> under sleds exec-env').toBeDefined();
    expect(readdirSync(join(world.sledsHome, 'run', 'env'))).toEqual([]);

    // The allowance ends it: the next request is refused by the gateway with the message the user sees.
    await tmux.sendText('and one more');
    await tmux.sendKeys('Enter');
    await tmux.waitForScreen((s) => /allowance for dana spent: \$0\.\d\d today/.test(s), 30_000, 'the allowance message');
    expect(fake.messageRequests().length).toBe(before + 1);

    // The key never shows up in what sleds writes or prints.
    const json = (await sleds(world, ['status', '--json'])).stdout + (await sleds(world, ['wall', 'show', wall.wallId, '--json'])).stdout;
    expect(json).not.toContain(PLATFORM_KEY);
    expect(readFileSync(world.logFile, 'utf8')).not.toContain(PLATFORM_KEY);
    const snapshotsDir = join(world.sledsHome, 'data', 'snapshots', 'blobs');
    for (const f of readdirSync(snapshotsDir)) expect(readFileSync(join(snapshotsDir, f), 'latin1')).not.toContain(PLATFORM_KEY);
  });

  it('/sled 6 on another wall: at the reset the session runs itself headless, and the result is kept', async () => {
    const { fake, home, world, sessionId, resetsAt, hit } = await hitWallSoon('PELICAN');
    expect(hit.stdout).toContain("You've hit your 5-hour limit");
    const wall = await waitFor('the wall', async () => (await status(world)).wallBook.find((w) => w.sessionId === sessionId), 30_000);

    const chosen = await runClaudePrint(fx.claudeBin, ['-p', '--resume', sessionId, '/sled 6', '--plugin-dir', PLUGIN_DIR], { env: home.env, cwd: home.cwd, timeoutMs: 60_000 });
    expect(chosen.stdout).toMatch(/Deferred: this session runs itself headless at/);
    const requestsAtChoice = fake.messageRequests().length;
    fake.setBehaviour({ usageLimitRejection: null });

    const done = await waitFor(
      'the deferred run at the reset',
      async () => (await status(world)).wallBook.find((w) => w.wallId === wall.wallId && w.state === 'closed'),
      60_000,
    ).catch((e: Error) => {
      throw new Error(`${e.message}\njobs: ${JSON.stringify(fake.messageRequests().length)}\nlog: ${readFileSync(world.logFile, 'utf8').slice(-3000)}`);
    });
    expect(done.outcome).toMatch(/^ran headless: Answer to: /);
    // The result is shown once, with the session's next prompt (which goes on to the model).
    const next = JSON.stringify({ session_id: sessionId, cwd: home.cwd, hook_event_name: 'UserPromptSubmit', prompt: 'what happened?' });
    const shown = await sleds(world, ['hook', 'UserPromptSubmit'], next);
    expect(JSON.parse(shown.stdout)).toEqual({ systemMessage: `sled: wall ${wall.wallId} — ${done.outcome}` });
    expect((await sleds(world, ['hook', 'UserPromptSubmit'], next.replace('what happened?', 'and now?'))).stdout).toBe('');
    const run = fake.messageRequests()[requestsAtChoice]!;
    expect(run.receivedAt).toBeGreaterThanOrEqual(resetsAt * 1000);
    expect(header(run, 'x-claude-code-session-id')).toBe(sessionId);
    expect(conversationText(run)).toContain('remember the word PELICAN');
    expect(lastUserPrompt(run)).toContain('Your usage limit has reset');
  });

  it('/sled 2 moved past the reset: Claude Code\'s own continue at the reset is blocked, and the session continues at the moved time', async () => {
    const { fake, home, world, sessionId, resetsAt } = await hitWallSoon('HERON');
    const wall = await waitFor('the wall', async () => (await status(world)).wallBook.find((w) => w.sessionId === sessionId), 30_000);

    // Far enough past the reset that Claude Code's own continue (a fresh claude -p, slow on a loaded machine) arrives
    // before the moved time, not after the held session has already resumed.
    const movedTo = new Date((resetsAt + 25) * 1000).toISOString();
    const held = await runClaudePrint(fx.claudeBin, ['-p', '--resume', sessionId, `/sled 2 ${movedTo}`, '--plugin-dir', PLUGIN_DIR], { env: home.env, cwd: home.cwd, timeoutMs: 60_000 });
    expect(held.stdout).toMatch(/Holding until .*; sleds resumes this session then\. Claude Code's own continue at the reset is held back\./);
    fake.setBehaviour({ usageLimitRejection: null });
    const requestsAtHold = fake.messageRequests().length;

    // At the reset, Claude Code's own continue arrives as a prompt: the hook blocks it, nothing reaches the API.
    await waitFor('the reset', () => Date.now() >= resetsAt * 1000 || null, 30_000);
    const own = await runClaudePrint(
      fx.claudeBin,
      ['-p', '--resume', sessionId, 'Your claude.ai usage limit has reset. Continue the task you were working on when the limit was reached; do not repeat work that is already complete.', '--plugin-dir', PLUGIN_DIR],
      { env: home.env, cwd: home.cwd, timeoutMs: 60_000 },
    );
    expect(own.stdout).toMatch(/not continuing here — this session's work went to 2 Hold until reset/);
    expect(fake.messageRequests()).toHaveLength(requestsAtHold);

    // At the moved time sleds resumes it (headless: it has no pane).
    const done = await waitFor('the held session to resume', async () => (await status(world)).wallBook.find((w) => w.wallId === wall.wallId && w.state === 'closed'), 60_000);
    expect(done.outcome).toMatch(/^ran headless: Answer to: /);
    const run = fake.messageRequests()[requestsAtHold]!;
    expect(run.receivedAt).toBeGreaterThanOrEqual(Date.parse(movedTo));
    expect(header(run, 'x-claude-code-session-id')).toBe(sessionId);
    expect(conversationText(run)).toContain('remember the word HERON');
  });
});
