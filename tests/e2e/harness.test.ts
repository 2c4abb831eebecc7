/**
 * Self-test of the e2e harness: drives the REAL Claude Code binary (pinned in
 * harness/claude-binary.ts) against the fake Anthropic API on 127.0.0.1.
 * The first run installs the binary into .cache/ (about 10 s), hence the
 * generous hook timeout; each test is fast after that.
 */
import { readFile } from 'node:fs/promises';

import { describe, expect, it } from 'vitest';

import { CLAUDE_CODE_VERSION } from './harness/claude-binary.js';
import { TEST_API_KEY, TEST_OAUTH_TOKEN, makeClaudeHome, runClaudePrint, writeStatuslineRecorder } from './harness/claude-env.js';
import { parseSse } from './harness/sse.js';
import { lastUserPrompt, messageTexts, type RecordedRequest } from './harness/fake-anthropic.js';
import { useE2eFixture } from './harness/fixture.js';
import { waitFor } from './harness/wait.js';

describe('e2e harness self-test', { timeout: 60_000 }, () => {
  const fx = useE2eFixture({ claude: true, strictCleanup: true });

  it('fake API streams the real SSE framing and answers the other routes', async () => {
    const fake = await fx.fakeAnthropic({
      reply: 'A reply long enough to be split into several text deltas.',
      usage: { input_tokens: 10, cache_creation_input_tokens: 7, cache_read_input_tokens: 3, output_tokens: 5 },
    });

    const res = await fetch(`${fake.url}/v1/messages?beta=true`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: 'claude-test-1', max_tokens: 50, stream: true, messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(res.headers.get('request-id')).toMatch(/^req_/);
    const events = parseSse(await res.text());
    const names = events.map((e) => e.event).filter((n) => n !== 'ping');
    expect(names[0]).toBe('message_start');
    expect(names.slice(-3)).toEqual(['content_block_stop', 'message_delta', 'message_stop']);
    const start = events[0]!.data.message;
    expect(start.model).toBe('claude-test-1');
    expect(start.usage).toMatchObject({
      input_tokens: 10,
      cache_creation_input_tokens: 7,
      cache_read_input_tokens: 3,
      cache_creation: { ephemeral_5m_input_tokens: 7, ephemeral_1h_input_tokens: 0 },
      output_tokens: 1,
    });
    const text = events
      .filter((e) => e.event === 'content_block_delta')
      .map((e) => e.data.delta.text)
      .join('');
    expect(text).toBe('A reply long enough to be split into several text deltas.');
    const delta = events.find((e) => e.event === 'message_delta')!.data;
    expect(delta.delta.stop_reason).toBe('end_turn');
    expect(delta.usage).toEqual({ input_tokens: 10, cache_creation_input_tokens: 7, cache_read_input_tokens: 3, output_tokens: 5 });

    const plain = await fetch(`${fake.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'claude-test-2', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(plain.status).toBe(200);
    const msg = (await plain.json()) as any;
    expect(msg).toMatchObject({ type: 'message', role: 'assistant', model: 'claude-test-2', stop_reason: 'end_turn' });
    expect(msg.content).toEqual([{ type: 'text', text: 'A reply long enough to be split into several text deltas.' }]);

    expect((await fetch(`${fake.url}/api/hello`, { method: 'HEAD' })).status).toBe(200);
    const missing = await fetch(`${fake.url}/v1/models`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ type: 'error', error: { type: 'not_found_error' } });
    expect(fake.requests.map((r) => `${r.method} ${r.path} ${r.status}`)).toEqual([
      'POST /v1/messages?beta=true 200',
      'POST /v1/messages 200',
      'HEAD /api/hello 200',
      'GET /v1/models 404',
    ]);
  });

  it('makeClaudeHome writes the config files and a clean environment', async () => {
    const cwd = await fx.project();
    const inherited = { ANTHROPIC_MODEL: 'leaked', CLAUDE_CONFIG_DIR: '/leaked', CLAUDECODE: '1' };
    const saved = Object.fromEntries(Object.keys(inherited).map((k) => [k, process.env[k]]));
    Object.assign(process.env, inherited);
    let home: Awaited<ReturnType<typeof makeClaudeHome>>;
    try {
      home = await makeClaudeHome({ mode: 'apiKey', fakeUrl: 'http://127.0.0.1:9', cwd, settings: { theme: 'light' } });
    } finally {
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
    fx.later(() => home.cleanup());
    expect(Object.keys(home.env).sort()).toEqual(
      [
        'ANTHROPIC_API_KEY',
        'ANTHROPIC_BASE_URL',
        'CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC',
        'CLAUDE_CODE_MAX_RETRIES',
        'HOME',
        'IS_SANDBOX',
        'LANG',
        'PATH',
        'TERM',
        'TMPDIR',
      ].sort(),
    );
    expect(home.env.HOME).toBe(home.home);
    const claudeJson = JSON.parse(await readFile(home.claudeJsonPath, 'utf8'));
    expect(claudeJson.hasCompletedOnboarding).toBe(true);
    expect(claudeJson.projects[home.cwd].hasTrustDialogAccepted).toBe(true);
    expect(claudeJson.customApiKeyResponses.approved).toEqual([TEST_API_KEY.slice(-20)]);
    expect(JSON.parse(await readFile(home.settingsPath, 'utf8'))).toEqual({ theme: 'light' });
  });

  it('claude -p (API key) prints the fake reply after exactly one POST /v1/messages', async () => {
    const reply = 'Hello from the fake API, test run 4242.';
    const fake = await fx.fakeAnthropic({ reply });
    const cwd = await fx.project();
    const home = await fx.claudeHome({ mode: 'apiKey', fakeUrl: fake.url, cwd });

    const r = await runClaudePrint(fx.claudeBin, ['-p', 'hello'], { env: home.env, cwd: home.cwd, timeoutMs: 30_000 });

    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(`${reply}\n`);
    expect(fake.requests.map((q) => `${q.method} ${q.path}`)).toEqual(['POST /v1/messages?beta=true']);
    const req: RecordedRequest = fake.requests[0]!;
    expect(req.headers['x-api-key']).toBe(TEST_API_KEY);
    expect(req.headers.authorization).toBeUndefined();
    expect(req.headers['anthropic-version']).toBe('2023-06-01');
    expect(req.headers['user-agent']).toContain(`claude-cli/${CLAUDE_CODE_VERSION}`);
    expect(req.body.stream).toBe(true);
    expect(typeof req.body.model).toBe('string');
    expect(lastUserPrompt(req)).toBe('hello');
    // Claude Code appends a role:"system" message (environment) after the user turn.
    expect(messageTexts(req).map((m) => m.role)).toEqual(['user', 'system']);
  });

  it('interactive subscriber session under tmux: reply on screen, statusline gets rate_limits', async () => {
    const now = Math.floor(Date.now() / 1000);
    const fiveHourReset = now + 3 * 3600;
    const reply = 'Pong from the fake API for the statusline test.';
    const fake = await fx.fakeAnthropic({
      reply,
      rateLimits: {
        fiveHour: { utilization: 0.91, resetsAt: fiveHourReset },
        sevenDay: { utilization: 0.17, resetsAt: now + 4 * 86400 },
      },
    });
    const cwd = await fx.project();
    const recorder = await writeStatuslineRecorder(cwd, 'SLEDS-E2E-STATUS');
    const home = await fx.claudeHome({
      mode: 'subscriber',
      fakeUrl: fake.url,
      cwd,
      settings: { statusLine: { type: 'command', command: recorder.command, padding: 0 } },
    });

    // Ready: the empty input prompt is drawn (no onboarding/trust/theme dialog in between).
    const tmux = await fx.claudeInTmux(home);
    await tmux.sendText('ping the fake please');
    await tmux.sendKeys('Enter');
    await tmux.waitForText(reply, 20_000);

    const data = await waitFor(
      async () => {
        const d = await recorder.read();
        return d?.rate_limits?.five_hour?.used_percentage === 91 ? d : undefined;
      },
      { timeoutMs: 15_000, description: 'statusline stdin with five_hour.used_percentage 91', onTimeout: async () => JSON.stringify(await recorder.read()) },
    );
    expect(data.rate_limits).toEqual({
      five_hour: { used_percentage: 91, resets_at: fiveHourReset },
      seven_day: { used_percentage: 17, resets_at: now + 4 * 86400 },
    });
    expect(data.cwd).toBe(home.cwd);
    await tmux.waitForText('SLEDS-E2E-STATUS 5h=91 7d=17', 15_000);

    const reqs = fake.messageRequests();
    expect(reqs).toHaveLength(1);
    expect(reqs[0]!.headers.authorization).toBe(`Bearer ${TEST_OAUTH_TOKEN}`);
    expect(String(reqs[0]!.headers['anthropic-beta'])).toContain('oauth-2025-04-20');
    expect(lastUserPrompt(reqs[0]!)).toBe('ping the fake please');
  });

  it('claude -p (subscriber) on a usage-limit 429 prints the 5-hour limit message and exits 1', async () => {
    const fake = await fx.fakeAnthropic({
      usageLimitRejection: { claim: 'five_hour', resetsAt: Math.floor(Date.now() / 1000) + 1800 },
    });
    const cwd = await fx.project();
    const home = await fx.claudeHome({ mode: 'subscriber', fakeUrl: fake.url, cwd });

    const r = await runClaudePrint(fx.claudeBin, ['-p', 'hello'], { env: home.env, cwd: home.cwd, timeoutMs: 30_000 });

    expect(r.code).toBe(1);
    expect(r.stdout).toContain("You've hit your 5-hour limit");
    // A usage-limit rejection is not retried.
    expect(fake.requests.map((q) => `${q.method} ${q.path} ${q.status}`)).toEqual(['POST /v1/messages?beta=true 429']);
  });
});
