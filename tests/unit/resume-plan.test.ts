import { describe, expect, it } from 'vitest';
import {
  CONTINUE_PROMPT,
  planResume,
  ResumeJob,
  tmuxArg,
  type ResumePlan,
  type ResumeRequest,
} from '../../harnesses/resume-plan.js';
import { readClaudeOutput } from '../../harnesses/claude-code/headless.js';
import { codexGatewayArgs } from '../../harnesses/codex/gateway.js';
import { readCodexOutput } from '../../harnesses/codex/headless.js';
import { storedHarness } from '../../harnesses/registry.js';

const BINS = { claudeBin: '/opt/claude/bin/claude', codexBin: '/opt/codex/bin/codex', tmuxBin: '/usr/bin/tmux' };
const SID = '1098c2f4-6a5e-4a8e-9a57-1f3c9d7e2b10';
const TRICKY = `fix "the bug" in Bob's code; then -x $HOME \`ls\` #{pane_id};`;
const LAUNCHER = { command: ['/usr/bin/node', '/opt/sleds/dist/cli/main.js', 'exec-env'], envFile: '/run/user/1000/sleds/env/e-1a2b.json' };

function req(over: Partial<ResumeRequest>): ResumeRequest {
  return { harness: 'claude-code', sessionId: SID, cwd: '/home/u/my proj', prompt: null, mode: 'headless', ...BINS, ...over };
}

describe('planResume', () => {
  it.each<[string, Partial<ResumeRequest>, { file: string; args: string[]; env?: Record<string, string>; envFile?: ResumePlan['envFile'] }]>([
    [
      'claude headless, default prompt',
      {},
      { file: BINS.claudeBin, args: ['-p', `--resume=${SID}`, '--output-format', 'json', '--', CONTINUE_PROMPT] },
    ],
    [
      'claude headless with model, permission mode and the gateway',
      { model: 'claude-sonnet-5', prompt: 'go on', permissionMode: 'acceptEdits', env: { ANTHROPIC_BASE_URL: 'http://127.0.0.1:4100', ANTHROPIC_API_KEY: 'sleds-local-abc' } },
      {
        file: BINS.claudeBin,
        args: ['-p', `--resume=${SID}`, '--output-format', 'json', '--model', 'claude-sonnet-5', '--permission-mode', 'acceptEdits', '--', 'go on'],
        env: { ANTHROPIC_BASE_URL: 'http://127.0.0.1:4100', ANTHROPIC_API_KEY: 'sleds-local-abc' },
      },
    ],
    [
      'claude in its pane: no prompt unless given',
      { mode: 'tmux', tmuxPane: '%3' },
      { file: BINS.tmuxBin, args: ['respawn-pane', '-k', '-t', '%3', '-c', '/home/u/my proj', '--', BINS.claudeBin, `--resume=${SID}`], env: {} },
    ],
    [
      'claude in its pane on another server, with model, env and a prompt',
      { mode: 'tmux', tmuxPane: '%12', tmuxSocket: '/tmp/tmux-1000/work', model: 'sonnet', prompt: 'continue', env: { B_VAR: 'two words', A_VAR: 'x' }, paneLauncher: LAUNCHER },
      {
        file: BINS.tmuxBin,
        args: [
          '-S', '/tmp/tmux-1000/work', 'respawn-pane', '-k', '-t', '%12', '-c', '/home/u/my proj',
          '--', ...LAUNCHER.command, LAUNCHER.envFile,
          '--', BINS.claudeBin, `--resume=${SID}`, '--model', 'sonnet', '--', 'continue',
        ],
        env: {},
        envFile: { path: LAUNCHER.envFile, env: { B_VAR: 'two words', A_VAR: 'x' } },
      },
    ],
    [
      'claude in the foreground (sleds go)',
      { mode: 'foreground', env: { ANTHROPIC_BASE_URL: 'http://127.0.0.1:4100' } },
      { file: BINS.claudeBin, args: [`--resume=${SID}`], env: { ANTHROPIC_BASE_URL: 'http://127.0.0.1:4100' } },
    ],
    [
      'codex headless',
      { harness: 'codex', prompt: 'continue' },
      { file: BINS.codexBin, args: ['exec', 'resume', '--skip-git-repo-check', '--json', '--', SID, 'continue'] },
    ],
    [
      'codex headless with model, default prompt',
      { harness: 'codex', model: 'gpt-5.1-codex-mini' },
      { file: BINS.codexBin, args: ['exec', 'resume', '--skip-git-repo-check', '--json', '--model', 'gpt-5.1-codex-mini', '--', SID, CONTINUE_PROMPT] },
    ],
    [
      'codex in its pane',
      { harness: 'codex', mode: 'tmux', tmuxPane: '%0' },
      { file: BINS.tmuxBin, args: ['respawn-pane', '-k', '-t', '%0', '-c', '/home/u/my proj', '--', BINS.codexBin, 'resume', '--', SID], env: {} },
    ],
  ])('%s', (_name, over, expected) => {
    const plan = planResume(req(over));
    expect(plan.file).toBe(expected.file);
    expect(plan.args).toEqual(expected.args);
    expect(plan.env).toEqual(expected.env ?? {});
    expect(plan.envFile).toEqual(expected.envFile ?? null);
    expect(plan.cwd).toBe('/home/u/my proj');
    expect(plan.mode).toBe(over.mode ?? 'headless');
  });

  it('keeps a prompt with spaces, quotes, $, backticks and a leading dash as one argument, after --', () => {
    const tricky = `-x ${TRICKY}`;
    const claude = planResume(req({ prompt: tricky }));
    expect(claude.args.slice(-2)).toEqual(['--', tricky]);
    const codex = planResume(req({ harness: 'codex', prompt: tricky }));
    expect(codex.args.slice(-3)).toEqual(['--', SID, tricky]);
  });

  it("escapes only what tmux's own parser would eat: a trailing ; and # in the folder; the variables go to the file as they are", () => {
    const plan = planResume(req({ mode: 'tmux', tmuxPane: '%1', cwd: '/w/a#b;', prompt: TRICKY, env: { K: 'v;', Q: `"q" 'x' \\;` }, paneLauncher: LAUNCHER }));
    expect(plan.args).toEqual([
      'respawn-pane', '-k', '-t', '%1', '-c', '/w/a##b\\;',
      '--', ...LAUNCHER.command, LAUNCHER.envFile,
      '--', BINS.claudeBin, `--resume=${SID}`, '--', `${TRICKY.slice(0, -1)}\\;`,
    ]);
    expect(plan.envFile).toEqual({ path: LAUNCHER.envFile, env: { K: 'v;', Q: `"q" 'x' \\;` } });
  });

  it('a variable for the pane never stands in an argv: tmux gets no -e, only the file the wrapper reads', () => {
    const token = 'sleds_gw_0123456789abcdefghijklmnopqrstuvwxyzABCDEFG';
    const plan = planResume(req({ mode: 'tmux', tmuxPane: '%1', env: { ANTHROPIC_BASE_URL: 'http://127.0.0.1:4100', ANTHROPIC_AUTH_TOKEN: token }, paneLauncher: LAUNCHER }));
    expect(plan.args).not.toContain('-e');
    expect(plan.args.join('\n')).not.toContain(token);
    expect(plan.envFile?.env.ANTHROPIC_AUTH_TOKEN).toBe(token);
    // Without the wrapper there is no safe way to hand them over: refused, not sent with -e.
    expect(() => planResume(req({ mode: 'tmux', tmuxPane: '%1', env: { ANTHROPIC_AUTH_TOKEN: token } }))).toThrow(/exec-env wrapper/);
  });

  it.each([
    ['x', 'x'],
    ['a;b', 'a;b'],
    ['x;', 'x\\;'],
    ['x\\;', 'x\\\\;'],
    [';', '\\;'],
  ])('tmuxArg(%j) = %j', (arg, sent) => {
    expect(tmuxArg(arg)).toBe(sent);
  });

  it.each<[string, Partial<ResumeRequest>, RegExp]>([
    ['tmux without a pane', { mode: 'tmux' }, /needs a pane id like %3/],
    ['tmux with a session:window target', { mode: 'tmux', tmuxPane: 'main:0.0' }, /needs a pane id/],
    ['a relative folder', { cwd: 'proj' }, /absolute path/],
    ['a bad variable name', { env: { 'A-B': '1' } }, /'A-B' is not an environment variable name/],
    ['no session id', { sessionId: ' ' }, /is not a session id \(a UUID\)/],
    ['an id that is an option', { sessionId: '--settings={"hooks":{}}' }, /^resume: "--settings=\{\\"hooks\\":\{\}\}" is not a session id \(a UUID\) — not passing it to claude$/],
    ['a codex id that is an option', { harness: 'codex', sessionId: '--dangerously-bypass-approvals-and-sandbox' }, /is not a session id .* not passing it to codex$/],
    ['a title instead of an id', { sessionId: 'my session' }, /is not a session id/],
  ])('refuses %s with one line', (_name, over, pattern) => {
    expect(() => planResume(req(over))).toThrow(pattern);
  });
});

describe('Codex on the gateway', () => {
  it("points the thread's own provider at the gateway, with the token from the environment", () => {
    expect(codexGatewayArgs('fake', 'http://127.0.0.1:4100/v1')).toEqual([
      '-c',
      'model_providers.fake.base_url="http://127.0.0.1:4100/v1"',
      '-c',
      'model_providers.fake.env_key="SLEDS_GATEWAY_TOKEN"',
    ]);
    expect(codexGatewayArgs('my provider"; x', 'http://127.0.0.1:4100/v1')).toBeNull();
  });

  it('the overrides go before the `--` that ends the options, for the TUI and for exec', () => {
    const harnessArgs = codexGatewayArgs('fake', 'http://127.0.0.1:4100/v1')!;
    const fg = planResume(req({ harness: 'codex', mode: 'foreground', prompt: 'go on', harnessArgs }));
    expect(fg.args).toEqual(['resume', ...harnessArgs, '--', SID, 'go on']);
    const exec = planResume(req({ harness: 'codex', mode: 'headless', prompt: 'go on', harnessArgs }));
    expect(exec.args).toEqual(['exec', 'resume', '--skip-git-repo-check', '--json', ...harnessArgs, '--', SID, 'go on']);
  });
});

describe('ResumeJob (the stored payload)', () => {
  it('defaults where and prompt, and drops unknown fields (an env with a token never reaches the table)', () => {
    const job = ResumeJob.parse({ harness: 'codex', sessionId: SID, cwd: '/w', env: { ANTHROPIC_API_KEY: 'sk-secret' } });
    expect(job).toEqual({ harness: 'codex', sessionId: SID, cwd: '/w', prompt: null, where: 'pane-else-headless' });
  });
});

describe('reading a headless run', () => {
  it('claude -p --output-format json: the result, is_error, session and cost', () => {
    const out = `{"type":"result","subtype":"success","is_error":false,"result":"Done: tests pass.","session_id":"${SID}","total_cost_usd":0.0135,"num_turns":1}\n`;
    expect(readClaudeOutput(out)).toEqual({ text: 'Done: tests pass.', isError: false, sessionId: SID, costUsd: 0.0135, error: null });
  });

  it('claude at the wall again: is_error with the reason', () => {
    const out = `{"type":"result","is_error":true,"result":"You've hit your 5-hour limit · resets 8:58pm (UTC)","terminal_reason":"api_error","api_error_status":429,"session_id":"${SID}"}`;
    expect(readClaudeOutput(out)).toMatchObject({ isError: true, error: "You've hit your 5-hour limit · resets 8:58pm (UTC) (api_error, HTTP 429)" });
  });

  it('claude that printed no JSON', () => {
    expect(readClaudeOutput("You've hit your 5-hour limit · resets 8:58pm (UTC)\n")).toBeNull();
    expect(readClaudeOutput('')).toBeNull();
  });

  it('codex exec --json: the last agent message of a completed turn', () => {
    const out = [
      `{"type":"thread.started","thread_id":"${SID}"}`,
      '{"type":"item.completed","item":{"id":"item_0","type":"error","message":"Model metadata for `x` not found."}}',
      '{"type":"turn.started"}',
      '{"type":"item.completed","item":{"id":"item_1","type":"agent_message","text":"first"}}',
      '{"type":"item.completed","item":{"id":"item_2","type":"agent_message","text":"All done."}}',
      '{"type":"turn.completed","usage":{"input_tokens":1}}',
    ].join('\n');
    expect(readCodexOutput(out)).toEqual({ text: 'All done.', isError: false, sessionId: SID, costUsd: null, error: null });
  });

  it('codex: a failed turn, and an error it recovered from', () => {
    const failed = '{"type":"turn.started"}\n{"type":"turn.failed","error":{"message":"usage limit reached"}}\n';
    expect(readCodexOutput(failed)).toMatchObject({ isError: true, error: 'usage limit reached' });
    const recovered = '{"type":"error","message":"Reconnecting... 1/5"}\n{"type":"turn.completed","usage":{}}\n';
    expect(readCodexOutput(recovered)).toMatchObject({ isError: false, error: null });
    const died = '{"type":"turn.started"}\n{"type":"error","message":"stream disconnected"}\n';
    expect(readCodexOutput(died)).toMatchObject({ isError: true, error: 'stream disconnected' });
    expect(readCodexOutput('not json')).toBeNull();
  });
});

describe("a stored session's harness", () => {
  it.each([
    ['codex', 'codex'],
    ['claude-code', 'claude-code'],
  ] as const)('%s is %s', (stored, harness) => {
    expect(storedHarness(stored)).toMatchObject({ ok: true, id: harness });
  });

  // Issue 13: an unknown harness is an error to report, never "Claude Code".
  it.each([
    [null, "no harness named — sleds knows claude-code, codex, gemini-cli, opencode, cursor-agent"],
    ['something-new', "unknown harness 'something-new' — sleds knows claude-code, codex, gemini-cli, opencode, cursor-agent"],
    // Known (it runs headless nodes) but sleds stores no sessions of it: no hooks of sleds run inside it yet.
    ['gemini-cli', "sleds keeps no sessions for harness 'gemini-cli'"],
  ] as const)('%s is reported', (stored, error) => {
    expect(storedHarness(stored)).toEqual({ ok: false, error });
  });
});
