/**
 * Self-test of the Codex e2e harness: drives the REAL Codex CLI (pinned in harness/codex-binary.ts) against the
 * fake OpenAI Responses API on 127.0.0.1, and proves the hook + trust recipe of shared/facts/codex-cli.md §1 with a
 * tiny hook script of its own, before sleds is plugged in. The first run installs Codex into .cache/ (about 7 s,
 * ~400 MB), hence the generous hook timeout; each `codex exec` takes about half a second after that.
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';

import { describe, expect, it } from 'vitest';

import { shellQuote } from './harness/claude-env.js';
import { CODEX_VERSION } from './harness/codex-binary.js';
import {
  FAKE_KEY_ENV,
  TEST_MODEL,
  TEST_OPENAI_KEY,
  codexHookTrustHash,
  codexHooksList,
  makeCodexProjectDir,
  readRollout,
  runCodexExec,
  tokenCounts,
  type CodexHome,
  type CodexHookGroup,
  type MakeCodexHomeOptions,
} from './harness/codex-env.js';
import { parseSse } from './harness/sse.js';
import { codexRateLimitHeaders, lastUserInput, turnMetadata, type CodexRateLimits } from './harness/fake-openai.js';
import { useE2eFixture } from './harness/fixture.js';

const EXEC = ['exec', '--skip-git-repo-check'];

describe('codex e2e harness self-test', { timeout: 60_000 }, () => {
  const fx = useE2eFixture({ codex: true, strictCleanup: true });
  const project = () => fx.project(makeCodexProjectDir);
  const home = (opts: MakeCodexHomeOptions) => fx.codexHome(opts);

  const now = () => Math.floor(Date.now() / 1000);

  it('fake API streams the Responses SSE framing with usage and the x-codex-* headers, and answers the other routes', async () => {
    const t = now();
    const rateLimits: CodexRateLimits = {
      primary: { usedPercent: 42.5, windowMinutes: 300, resetAt: t + 3600 },
      secondary: { usedPercent: 7, windowMinutes: 10080, resetAt: t + 86400 },
      credits: { hasCredits: true, unlimited: false, balance: '12.34' },
      limitName: 'codex',
    };
    const fake = await fx.fakeOpenAI({
      reply: 'A reply long enough to be split into several text deltas.',
      usage: { input_tokens: 10, cached_tokens: 4, output_tokens: 5, reasoning_tokens: 2 },
      rateLimits,
    });

    const res = await fetch(`${fake.url}/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ model: 'gpt-test', stream: true, input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hi' }] }] }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(res.headers.get('x-request-id')).toMatch(/^req_/);
    expect(res.headers.get('x-codex-primary-used-percent')).toBe('42.5');
    expect(res.headers.get('x-codex-primary-window-minutes')).toBe('300');
    expect(res.headers.get('x-codex-primary-reset-at')).toBe(String(t + 3600));
    expect(res.headers.get('x-codex-secondary-used-percent')).toBe('7');
    expect(res.headers.get('x-codex-credits-has-credits')).toBe('true');
    expect(res.headers.get('x-codex-credits-unlimited')).toBe('false');
    expect(res.headers.get('x-codex-credits-balance')).toBe('12.34');
    expect(res.headers.get('x-codex-limit-name')).toBe('codex');
    const events = parseSse(await res.text());
    expect(events.map((e) => e.data.sequence_number)).toEqual(events.map((_, i) => i));
    const names = events.map((e) => e.event);
    expect(names.slice(0, 4)).toEqual(['response.created', 'response.in_progress', 'response.output_item.added', 'response.content_part.added']);
    expect(names.slice(-4)).toEqual(['response.output_text.done', 'response.content_part.done', 'response.output_item.done', 'response.completed']);
    const text = events
      .filter((e) => e.event === 'response.output_text.delta')
      .map((e) => e.data.delta)
      .join('');
    expect(text).toBe('A reply long enough to be split into several text deltas.');
    const done = events.at(-1)!.data.response;
    expect(done).toMatchObject({ object: 'response', status: 'completed', model: 'gpt-test' });
    expect(done.id).toBe(fake.requests[0]!.responseId);
    expect(done.output).toEqual([events.find((e) => e.event === 'response.output_item.done')!.data.item]);
    expect(done.usage).toEqual({
      input_tokens: 10,
      input_tokens_details: { cached_tokens: 4 },
      output_tokens: 5,
      output_tokens_details: { reasoning_tokens: 2 },
      total_tokens: 15,
    });
    expect(events[0]!.data.response.usage).toBeNull();

    // A function call, queued for one request only.
    fake.queueBehaviour({ reply: [{ type: 'function_call', name: 'exec_command', arguments: { cmd: 'echo hi' }, call_id: 'call_1' }] });
    const fc = parseSse(await (await fetch(`${fake.url}/responses`, { method: 'POST', body: JSON.stringify({ model: 'm', input: 'x' }) })).text());
    expect(fc.map((e) => e.event)).toContain('response.function_call_arguments.done');
    expect(fc.at(-1)!.data.response.output).toEqual([
      { id: expect.stringMatching(/^fc_/), type: 'function_call', call_id: 'call_1', name: 'exec_command', status: 'completed', arguments: '{"cmd":"echo hi"}' },
    ]);
    const back = parseSse(await (await fetch(`${fake.url}/responses`, { method: 'POST', body: JSON.stringify({ model: 'm', input: 'again' }) })).text());
    expect(back.at(-1)!.data.response.output[0].type).toBe('message');

    // The usage-limit 429 and its headers.
    fake.setBehaviour({ usageLimitRejection: { resetsAt: t + 1800 } });
    const limited = await fetch(`${fake.url}/responses`, { method: 'POST', body: JSON.stringify({ model: 'm', input: 'x' }) });
    expect(limited.status).toBe(429);
    expect(limited.headers.get('x-codex-primary-used-percent')).toBe('100');
    expect(limited.headers.get('x-codex-active-limit')).toBe('codex');
    expect(await limited.json()).toEqual({
      error: { type: 'usage_limit_reached', message: 'The usage limit has been reached', plan_type: 'plus', resets_at: t + 1800 },
    });

    expect((await fetch(`${fake.url}/models`)).status).toBe(200);
    const missing = await fetch(`${fake.origin}/v1/chat/completions`, { method: 'POST', body: '{}' });
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ error: { type: 'invalid_request_error' } });
    expect(fake.requests.map((r) => `${r.method} ${r.path} ${r.status}`)).toEqual([
      'POST /v1/responses 200',
      'POST /v1/responses 200',
      'POST /v1/responses 200',
      'POST /v1/responses 429',
      'GET /v1/models 200',
      'POST /v1/chat/completions 404',
    ]);
    expect(codexRateLimitHeaders({ family: 'codex-bengalfox', primary: { usedPercent: 1, windowMinutes: 60, resetAt: 5 } })).toEqual({
      'x-codex-bengalfox-primary-used-percent': '1',
      'x-codex-bengalfox-primary-window-minutes': '60',
      'x-codex-bengalfox-primary-reset-at': '5',
    });
  });

  it('makeCodexHome writes the fake-provider config and a clean environment', async () => {
    const cwd = await project();
    const inherited = { CODEX_HOME: '/leaked', OPENAI_API_KEY: 'leaked', OPENAI_BASE_URL: 'http://leaked', SLEDS_HOME: '/leaked' };
    const saved = Object.fromEntries(Object.keys(inherited).map((k) => [k, process.env[k]]));
    Object.assign(process.env, inherited);
    let h: CodexHome;
    try {
      h = await home({ fakeUrl: 'http://127.0.0.1:9/v1', cwd });
    } finally {
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
    expect(Object.keys(h.env).sort()).toEqual(['CODEX_HOME', FAKE_KEY_ENV, 'HOME', 'LANG', 'PATH', 'TERM', 'TMPDIR'].sort());
    expect(h.env.CODEX_HOME).toBe(h.codexHome);
    expect(h.env.HOME).toBe(h.home);
    const config = await readFile(h.configPath, 'utf8');
    expect(config).toContain('model_provider = "fake"');
    expect(config).toContain('base_url = "http://127.0.0.1:9/v1"');
    expect(config).toContain(`env_key = "${FAKE_KEY_ENV}"`);
    expect(config).toContain('wire_api = "responses"');
    expect(config).toContain(`[projects.${JSON.stringify(h.cwd)}]`);
    expect(config).toMatch(/\[features\]\nplugins = false\n/);
  });

  it('codex exec "hello": the fake reply on stdout, one POST /v1/responses, and the header rate limits in the rollout', async () => {
    const t = now();
    const reply = 'Hello from the fake Responses API, run 4242.';
    const fake = await fx.fakeOpenAI({
      reply,
      usage: { input_tokens: 1001, cached_tokens: 200, output_tokens: 50, reasoning_tokens: 10 },
      rateLimits: {
        primary: { usedPercent: 42.5, windowMinutes: 300, resetAt: t + 3600 },
        secondary: { usedPercent: 7, windowMinutes: 10080, resetAt: t + 3 * 86400 },
        credits: { hasCredits: true, unlimited: false, balance: '12.34' },
        limitName: 'codex',
      },
    });
    const cwd = await project();
    const h = await home({ fakeUrl: fake.url, cwd });

    const r = await runCodexExec(fx.codexBin, [...EXEC, 'hello'], { env: h.env, cwd: h.cwd, timeoutMs: 30_000 });

    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(`${reply}\n`);
    expect(fake.requests.map((q) => `${q.method} ${q.path} ${q.status}`)).toEqual(['POST /v1/responses 200']);
    const req = fake.requests[0]!;
    expect(req.headers.authorization).toBe(`Bearer ${TEST_OPENAI_KEY}`);
    expect(req.headers.accept).toBe('text/event-stream');
    expect(req.headers.originator).toBe('codex_exec');
    expect(req.headers['user-agent']).toContain(`codex_exec/${CODEX_VERSION}`);
    expect(req.body).toMatchObject({ model: TEST_MODEL, stream: true, store: false });
    expect(lastUserInput(req)).toBe('hello');
    const meta = turnMetadata(req)!;
    expect(meta).toMatchObject({ request_kind: 'turn', turn_trigger: 'exec', history_initialization: 'new', model: TEST_MODEL });
    expect(req.headers['session-id']).toBe(meta.session_id);

    const rollouts = await h.rollouts();
    expect(rollouts).toHaveLength(1);
    expect(path.relative(h.sessionsDir, rollouts[0]!)).toMatch(new RegExp(`^\\d{4}/\\d{2}/\\d{2}/rollout-[\\dT-]+-${meta.session_id}\\.jsonl$`));
    const lines = await readRollout(rollouts[0]!);
    expect(lines[0]).toMatchObject({ type: 'session_meta', payload: { id: meta.session_id, cli_version: CODEX_VERSION, originator: 'codex_exec', model_provider: 'fake' } });
    const counts = tokenCounts(lines);
    expect(counts).toHaveLength(1);
    const usage = { input_tokens: 1001, cached_input_tokens: 200, cache_write_input_tokens: 0, output_tokens: 50, reasoning_output_tokens: 10, total_tokens: 1051 };
    expect(counts[0].info).toMatchObject({ last_token_usage: usage, total_token_usage: usage });
    expect(counts[0].rate_limits).toEqual({
      limit_id: 'codex',
      limit_name: 'codex',
      primary: { used_percent: 42.5, window_minutes: 300, resets_at: t + 3600 },
      secondary: { used_percent: 7, window_minutes: 10080, resets_at: t + 3 * 86400 },
      credits: { has_credits: true, unlimited: false, balance: '12.34' },
      individual_limit: null,
      spend_control_reached: null,
      plan_type: null,
      rate_limit_reached_type: null,
    });
    const record = lines.find((l) => l.type === 'token_usage_record')!.payload;
    expect(record).toMatchObject({ session_id: meta.session_id, turn_id: meta.turn_id, response_id: req.responseId, usage });
  });

  it('codex exec on a usage-limit 429: exit 1 with the usage-limit message, 100% and usage_limit_exceeded in the rollout', async () => {
    const resetsAt = now() + 1800;
    const fake = await fx.fakeOpenAI({ usageLimitRejection: { resetsAt } });
    const cwd = await project();
    const h = await home({ fakeUrl: fake.url, cwd, extraEnv: { TZ: 'UTC' } });

    const r = await runCodexExec(fx.codexBin, [...EXEC, 'hello'], { env: h.env, cwd: h.cwd, timeoutMs: 30_000 });

    expect(r.code).toBe(1);
    expect(r.stderr).toContain('You’ve hit your usage limit.');
    // request_max_retries = 0, and a usage limit is not retried anyway.
    expect(fake.requests.map((q) => `${q.method} ${q.path} ${q.status}`)).toEqual(['POST /v1/responses 429']);
    const lines = await readRollout((await h.rollouts())[0]!);
    const counts = tokenCounts(lines);
    expect(counts).toHaveLength(1);
    expect(counts[0].info).toBeNull();
    expect(counts[0].rate_limits.primary).toEqual({ used_percent: 100, window_minutes: 300, resets_at: resetsAt });
    const complete = lines.find((l) => l.payload?.type === 'task_complete')!.payload;
    expect(complete.error.codex_error_info).toBe('usage_limit_exceeded');
    expect(lines.some((l) => l.type === 'response_item' && l.payload?.role === 'assistant')).toBe(false);
  });

  describe('hooks in $CODEX_HOME/hooks.json', () => {
    const EVENTS = ['SessionStart', 'UserPromptSubmit', 'PostToolUse', 'Stop', 'SessionEnd'];

    /**
     * A tiny hook: appends {event, stdin} to `log` and, for a UserPromptSubmit whose prompt starts with "sled"
     * (or "/sled"), blocks it, in Codex's dialect or (with --claude-dialect) with the extra field sleds' musher
     * sends Claude Code.
     */
    async function hookScript(dir: string): Promise<{ script: string; log: string; read(): Promise<any[]> }> {
      const script = path.join(dir, 'test-hook.mjs');
      const log = path.join(dir, 'hook-log.jsonl');
      await writeFile(
        script,
        `import { appendFileSync, readFileSync } from 'node:fs';
const [event, log, mode] = process.argv.slice(2);
const raw = readFileSync(0, 'utf8');
appendFileSync(log, JSON.stringify({ event, stdin: JSON.parse(raw) }) + '\\n');
const d = JSON.parse(raw);
if (event === 'UserPromptSubmit' && /^\\s*\\/?sled(\\s|$)/.test(d.prompt)) {
  const answer = { decision: 'block', reason: 'sled: answered by the test hook' };
  if (mode === '--claude-dialect') answer.hookSpecificOutput = { hookEventName: 'UserPromptSubmit', suppressOriginalPrompt: true };
  process.stdout.write(JSON.stringify(answer));
}
`,
      );
      return {
        script,
        log,
        async read() {
          try {
            return (await readFile(log, 'utf8'))
              .trim()
              .split('\n')
              .filter(Boolean)
              .map((l) => JSON.parse(l));
          } catch {
            return [];
          }
        },
      };
    }

    function hooksFor(script: string, log: string, mode = ''): { hooks: Record<string, CodexHookGroup[]> } {
      const cmd = (e: string) => `${shellQuote(process.execPath)} ${shellQuote(script)} ${e} ${shellQuote(log)}${mode ? ` ${mode}` : ''}`;
      return { hooks: Object.fromEntries(EVENTS.map((e) => [e, [{ hooks: [{ type: 'command' as const, command: cmd(e), timeout: e === 'SessionEnd' ? 3 : 10 }] }]])) };
    }

    it('untrusted hooks are skipped without a word: "sled status" reaches the model', async () => {
      const fake = await fx.fakeOpenAI();
      const cwd = await project();
      const hook = await hookScript(cwd);
      const h = await home({ fakeUrl: fake.url, cwd, hooks: hooksFor(hook.script, hook.log), trustHooks: false });

      const listed = await codexHooksList(fx.codexBin, { env: h.env, cwd: h.cwd });
      expect(listed.hooks.map((x) => x.trustStatus)).toEqual(EVENTS.map(() => 'untrusted'));

      const r = await runCodexExec(fx.codexBin, [...EXEC, 'sled status'], { env: h.env, cwd: h.cwd, timeoutMs: 30_000 });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).not.toContain('hook:');
      expect(fake.responseRequests()).toHaveLength(1);
      expect(await hook.read()).toEqual([]);
    });

    it('trusted by the hash recipe: Codex lists them trusted, and a UserPromptSubmit hook blocks "sled status" with NO request to the fake', async () => {
      const fake = await fx.fakeOpenAI();
      const cwd = await project();
      const hook = await hookScript(cwd);
      const hooks = hooksFor(hook.script, hook.log);
      const h = await home({ fakeUrl: fake.url, cwd, hooks });

      // Codex's own view: every key and hash as the recipe says, all trusted.
      const listed = await codexHooksList(fx.codexBin, { env: h.env, cwd: h.cwd });
      expect(listed.errors).toEqual([]);
      expect(listed.warnings).toEqual([]);
      const snake: Record<string, string> = { SessionStart: 'session_start', UserPromptSubmit: 'user_prompt_submit', PostToolUse: 'post_tool_use', Stop: 'stop', SessionEnd: 'session_end' };
      expect(Object.fromEntries(listed.hooks.map((x) => [x.key, [x.trustStatus, x.currentHash, x.timeoutSec]]))).toEqual(
        Object.fromEntries(
          EVENTS.map((e) => [`${h.hooksPath}:${snake[e]}:0:0`, ['trusted', codexHookTrustHash(e, {}, hooks.hooks[e]![0]!.hooks[0]!), e === 'SessionEnd' ? 3 : 10]]),
        ),
      );

      const r = await runCodexExec(fx.codexBin, [...EXEC, 'sled status'], { env: h.env, cwd: h.cwd, timeoutMs: 30_000 });

      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toBe('');
      expect(r.stderr).toContain('hook: UserPromptSubmit Blocked');
      // exec never prints the block reason.
      expect(r.stderr).not.toContain('answered by the test hook');
      expect(fake.requests).toEqual([]);
      const seen = await hook.read();
      expect(seen.map((s) => s.event)).toEqual(['SessionStart', 'UserPromptSubmit', 'SessionEnd']);
      const [start, prompt, end] = seen.map((s) => s.stdin);
      const rollouts = await h.rollouts();
      expect(rollouts).toHaveLength(1);
      expect(start).toMatchObject({ hook_event_name: 'SessionStart', source: 'startup', cwd: h.cwd, transcript_path: rollouts[0], model: TEST_MODEL });
      expect(prompt).toMatchObject({
        hook_event_name: 'UserPromptSubmit',
        prompt: 'sled status',
        session_id: start.session_id,
        transcript_path: rollouts[0],
        permission_mode: 'bypassPermissions',
      });
      expect(prompt.turn_id).toMatch(/^[0-9a-f-]{36}$/);
      expect(end).toMatchObject({ hook_event_name: 'SessionEnd', session_id: start.session_id, reason: 'other' });
      // A blocked prompt leaves no user message, no token_count in the rollout.
      const lines = await readRollout(rollouts[0]!);
      expect(tokenCounts(lines)).toEqual([]);
      expect(JSON.stringify(lines)).not.toContain('sled status');
    });

    it('a normal prompt with a tool call passes the hooks: PostToolUse and Stop see it; "/sled 5" reaches the hook too', async () => {
      const fake = await fx.fakeOpenAI();
      fake.queueBehaviour({ reply: [{ type: 'function_call', name: 'exec_command', arguments: { cmd: 'echo sled-shell-ok' } }] });
      const cwd = await project();
      const hook = await hookScript(cwd);
      const h = await home({ fakeUrl: fake.url, cwd, hooks: hooksFor(hook.script, hook.log) });

      const r = await runCodexExec(fx.codexBin, [...EXEC, 'run it'], { env: h.env, cwd: h.cwd, timeoutMs: 30_000 });

      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toBe('fake reply #1 to: run it\n');
      expect(fake.responseRequests()).toHaveLength(2);
      const output = fake.requests[1]!.body.input.find((i: any) => i.type === 'function_call_output');
      expect(output.output).toContain('sled-shell-ok');
      const seen = await hook.read();
      expect(seen.map((s) => s.event)).toEqual(['SessionStart', 'UserPromptSubmit', 'PostToolUse', 'Stop', 'SessionEnd']);
      const post = seen[2]!.stdin;
      expect(post).toMatchObject({ tool_name: 'Bash', tool_input: { command: 'echo sled-shell-ok' } });
      expect(post.tool_response).toContain('sled-shell-ok');
      expect(seen[3]!.stdin).toMatchObject({ stop_hook_active: false, last_assistant_message: 'fake reply #1 to: run it', turn_id: seen[1]!.stdin.turn_id });

      // In exec, a leading slash reaches the hook (only the TUI answers unknown /commands itself).
      const slash = await runCodexExec(fx.codexBin, [...EXEC, '/sled 5'], { env: h.env, cwd: h.cwd, timeoutMs: 30_000 });
      expect(slash.stderr).toContain('hook: UserPromptSubmit Blocked');
      expect(fake.responseRequests()).toHaveLength(2);
    });

    it("Codex rejects a hook answer with fields it does not know (Claude Code's suppressOriginalPrompt) and lets the prompt through", async () => {
      const fake = await fx.fakeOpenAI();
      const cwd = await project();
      const hook = await hookScript(cwd);
      const h = await home({ fakeUrl: fake.url, cwd, hooks: hooksFor(hook.script, hook.log, '--claude-dialect') });

      const r = await runCodexExec(fx.codexBin, [...EXEC, 'sled status'], { env: h.env, cwd: h.cwd, timeoutMs: 30_000 });

      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toContain('hook: UserPromptSubmit Failed');
      expect(fake.responseRequests()).toHaveLength(1);
      expect(lastUserInput(fake.requests[0]!)).toBe('sled status');
    });
  });
});
