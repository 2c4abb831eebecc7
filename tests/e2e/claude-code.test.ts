/**
 * sleds end to end with the REAL Claude Code (pinned in harness/claude-binary.ts) against the fake Anthropic API:
 * the plugin's hooks reach musher, /sled is answered without a model call, the statusline shows the bars the
 * API's headers produced, and a usage-limit rejection is recorded as a wall.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runClaudePrint } from './harness/claude-env.js';
import type { startFakeAnthropic } from './harness/fake-anthropic.js';
import { useE2eFixture } from './harness/fixture.js';
import { AMBER } from '../../core/statusline-render.js';
import { REPO_ROOT, startMusher, status, waitFor } from '../support/sleds-env.js';
import Database from 'better-sqlite3';
import { claudeAccountKey } from '../support/bar-account.js';

const PLUGIN_DIR = join(REPO_ROOT, 'plugin');
const STATUSLINE = `node ${join(REPO_ROOT, 'dist', 'statusline.cjs')}`;

describe('sleds in the real Claude Code', { timeout: 90_000 }, () => {
  const fx = useE2eFixture({ claude: true });

  async function setUp(mode: 'apiKey' | 'subscriber', fakeOpts: Parameters<typeof startFakeAnthropic>[0], settings?: object) {
    const fake = await fx.fakeAnthropic(fakeOpts);
    const { home, world } = await fx.claudeWithSleds({ mode, fakeUrl: fake.url, settings });
    await startMusher(world);
    return { fake, home, world };
  }

  it('claude -p with the plugin: the hooks reach musher and the session is priced from its transcript', async () => {
    const { fake, home, world } = await setUp('apiKey', { reply: 'Done: the tests pass.', usage: { input_tokens: 2000, output_tokens: 300, cache_read_input_tokens: 10_000, cache_creation_input_tokens: 500 } });
    const r = await runClaudePrint(fx.claudeBin, ['-p', 'make the tests pass', '--plugin-dir', PLUGIN_DIR], { env: home.env, cwd: home.cwd, timeoutMs: 30_000 });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('Done: the tests pass.');
    expect(fake.messageRequests()).toHaveLength(1);
    const model = String(fake.messageRequests()[0]!.body.model);

    const s = await waitFor('the session, priced, and its hooks', async () => {
      const st = await status(world);
      const priced = st.sessions.find((x) => x.usageRecords > 0);
      return priced && st.hookEvents.Stop ? st : null;
    });
    expect(s.hookEvents.SessionStart).toBeGreaterThanOrEqual(1);
    expect(s.hookEvents.UserPromptSubmit).toBe(1);
    const session = s.sessions.find((x) => x.usageRecords > 0)!;
    expect(session).toMatchObject({ harness: 'claude-code', cwd: home.cwd, usageRecords: 1, unpricedRecords: 0, models: [model] });
    expect(session.costMicros).toBeGreaterThan(0);
    expect(s.today.byModel.map((m) => m.model)).toContain(model);
  });

  it('/sled status is answered by the hook with zero requests to the model API', async () => {
    const { fake, home } = await setUp('apiKey', { reply: 'should never be sent' });
    const r = await runClaudePrint(fx.claudeBin, ['-p', '/sled status', '--plugin-dir', PLUGIN_DIR], { env: home.env, cwd: home.cwd, timeoutMs: 30_000 });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('sleds · seat status');
    expect(r.stdout).toContain('Today: $0.00');
    const unknown = await runClaudePrint(fx.claudeBin, ['-p', '/sled frobnicate', '--plugin-dir', PLUGIN_DIR], { env: home.env, cwd: home.cwd, timeoutMs: 30_000 });
    expect(unknown.stdout).toContain("sled: unknown verb 'frobnicate'");
    expect(fake.messageRequests()).toHaveLength(0);
  });

  it('interactive, subscriber: the statusline shows the bars from the API headers, amber at 91%, and /sled status answers in place', async () => {
    const now = Math.floor(Date.now() / 1000);
    const { fake, home } = await setUp(
      'subscriber',
      {
        reply: 'Pong from the fake API.',
        rateLimits: { fiveHour: { utilization: 0.91, resetsAt: now + 3 * 3600 }, sevenDay: { utilization: 0.41, resetsAt: now + 4 * 86400 } },
      },
      { statusLine: { type: 'command', command: STATUSLINE, padding: 0 } },
    );
    const tmux = await fx.claudeInTmux(home, ['--plugin-dir', PLUGIN_DIR]);
    await tmux.sendText('ping the fake please');
    await tmux.sendKeys('Enter');
    await tmux.waitForText('Pong from the fake API.', 20_000);
    const screen = await tmux.waitForScreen((s) => /5h 91%.*wk 41%/.test(s) && !s.includes('musher away'), 20_000, 'our statusline with the bars');
    expect(screen).toMatch(/5h 91% ↻\S+ · wk 41% ↻/);
    const colored = await tmux.capture(true);
    const line = colored.split('\n').find((l) => l.includes('5h 91%'))!;
    expect(line).toContain(AMBER.slice(2, -1)); // 38;5;214
    expect(fake.messageRequests()).toHaveLength(1);

    await tmux.sendText('/sled status');
    await tmux.sendKeys('Enter');
    const card = await tmux.waitForScreen((s) => s.includes('seat status') && /5h\s+91%\s+resets/.test(s), 20_000, 'the /sled status card');
    expect(card).toMatch(/wk\s+41%\s+resets/);
    expect(fake.messageRequests()).toHaveLength(1); // answered without a model call
  });

  it('interactive, subscriber: as the headers climb, the statusline names the wall before the reset', async () => {
    const now = Math.floor(Date.now() / 1000);
    const fiveHourReset = now + 3 * 3600;
    const rateLimits = (u: number) => ({ fiveHour: { utilization: u, resetsAt: fiveHourReset }, sevenDay: { utilization: 0.3, resetsAt: now + 4 * 86400 } });
    const { fake, home, world } = await setUp('subscriber', { reply: 'Working on it.', rateLimits: rateLimits(0.7) }, { statusLine: { type: 'command', command: STATUSLINE, padding: 0 } });
    // The session's earlier readings (the statusline recorded them over the last half hour).
    const db = new Database(join(world.sledsHome, 'data', 'sleds.db'));
    const insert = db.prepare(`INSERT INTO bar_samples (provider, account, window, used_pct, resets_at, observed_at, source) VALUES ('anthropic', ?, 'five_hour', ?, ?, ?, 'statusline')`);
    const account = claudeAccountKey(home.claudeDir, home.home);
    for (const [minutesAgo, pct] of [[30, 58], [20, 62], [10, 66]] as const) insert.run(account, pct, fiveHourReset * 1000, Date.now() - minutesAgo * 60_000);
    db.close();

    const tmux = await fx.claudeInTmux(home, ['--plugin-dir', PLUGIN_DIR]);
    for (const [i, u] of [0.7, 0.74].entries()) {
      fake.setBehaviour({ rateLimits: rateLimits(u) });
      await tmux.sendText(`step ${i + 1}`);
      await tmux.sendKeys('Enter');
      await tmux.waitForScreen((s) => s.includes(`5h ${Math.round(u * 100)}%`), 20_000, `the statusline at ${u * 100}%`);
    }
    const screen = await tmux.waitForScreen((s) => /5h 74% ↻\S+ .*→ wall \d{1,2}:\d{2}[ap]m/.test(s), 20_000, 'the wall time in the statusline');
    const wallAt = /→ wall (\d{1,2}:\d{2}[ap]m)/.exec(screen)![1];
    expect(wallAt).toBeTruthy();
    expect(fake.messageRequests()).toHaveLength(2);
  });

  it('a usage-limit 429 (subscriber) is recorded as a wall', async () => {
    const resetsAt = Math.floor(Date.now() / 1000) + 1800;
    const { fake, home, world } = await setUp('subscriber', { usageLimitRejection: { claim: 'five_hour', resetsAt } });
    const r = await runClaudePrint(fx.claudeBin, ['-p', 'hello', '--plugin-dir', PLUGIN_DIR], { env: home.env, cwd: home.cwd, timeoutMs: 30_000 });
    expect(r.code).toBe(1);
    expect(r.stdout).toContain("You've hit your 5-hour limit");
    expect(fake.messageRequests()).toHaveLength(1);
    const s = await waitFor('the wall', async () => {
      const st = await status(world);
      return st.walls.some((w) => w.source === 'claude-transcript') ? st : null;
    });
    const fromTranscript = s.walls.find((w) => w.source === 'claude-transcript')!;
    expect(fromTranscript).toMatchObject({ window: 'five_hour', resetsAt: resetsAt * 1000 });
    // The StopFailure hook is spawned as `claude -p` exits and may be killed before it runs (facts §3): when it
    // does get through (spooled by plugin/scripts/spool-event.sh), it names the same window.
    for (const w of s.walls.filter((x) => x.source === 'hook:StopFailure')) expect(w.window).toBe('five_hour');
  });
});
