import { readFileSync, readdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HarnessEvent, type HarnessEventKind } from '../../harnesses/events.js';
import { readHeadlessStream, ResumePlanError, type HarnessAdapter } from '../../harnesses/port.js';
import { allHarnesses, harnessById, registerHarness } from '../../harnesses/registry.js';
import { plainHarness } from '../support/minimal-harness/index.js';

/**
 * Every harness adapter through the same table (issue 13, part 1): the two shipped ones from the registry, plus a
 * third, minimal one that lives only in tests (tests/support/minimal-harness/) — adding a harness is that one folder
 * plus the one registry line below.
 */
registerHarness(plainHarness);

const ROOT = join(import.meta.dirname, '..', '..');
const at = (...p: string[]) => join(ROOT, ...p);
const SID = '1098c2f4-6a5e-4a8e-9a57-1f3c9d7e2b10';
const SID_UUID = SID;
const HOSTILE_ID = '--settings={"hooks":{}}';
const PROMPT = `fix "the bug" in Bob's code; then -x $HOME \`ls\` SECRET-PROMPT-7f3a`;
const GATEWAY = { token: 'sleds-gw-token-9d2e', anthropicBaseUrl: 'http://127.0.0.1:47011', openaiBaseUrl: 'http://127.0.0.1:47011/v1', sessionProvider: 'fake' };

interface Fixtures {
  /**
   * A transcript (or rollout) of a real shape, from tests/fixtures; null for a harness that keeps no transcript file
   * (OpenCode's sessions are rows in its SQLite store; Cursor's agent keeps its chats in its own store).
   */
  transcript: string | null;
  /**
   * A session id of the harness's own form, when it is not a UUID (OpenCode's `ses_…`), or the one the transcript
   * holds when its file name carries only part of it (Gemini: 8 hex digits).
   */
  sessionId?: string;
  /**
   * What the turn stream maps to, when the harness reports each model request on its own (OpenCode: a step_start
   * and a step_finish with usage per request) rather than one summary; default started, tool call, usage, completed.
   */
  turnKinds?: HarnessEventKind[];
  /** What the limited stream maps to, when the harness refuses before any record of a start (OpenCode). */
  limitedKinds?: HarnessEventKind[];
  /** Whether gatewayLaunch can point the harness at musher's gateway (false: a harness on its vendor's backend only). */
  gateway?: boolean;
  /** What `--version` prints. */
  version: [stdout: string, version: string];
  /** What its login status command prints when logged out. */
  loggedOut: string;
  /** Headless streams: a turn with one tool call, and a run refused at a plan limit. */
  turn: string;
  limited: string;
  /**
   * rate_limited as the limited stream says it (the Codex stream carries no reset time); null when the stream cannot
   * say it at all (Cursor's agent: a failure is an exit code and stderr, the stream just stops).
   */
  limit: { resetsAtMs: number | null; window: string | null } | null;
  /** Why gatewayLaunch refuses, when the gateway cannot serve the harness's wire format at all. */
  gatewayRefused?: RegExp;
  /** The hook event a prompt's context answer names (Claude and Codex: UserPromptSubmit). */
  promptHookEvent?: string;
}

const FIXTURES: Record<string, Fixtures> = {
  'claude-code': {
    transcript: at('tests/fixtures/claude/projects/-home-u-my-proj/4e7d2c1b-8a9f-4b3c-9d2e-1f0a9b8c7d6e.jsonl'),
    version: ['2.1.328 (Claude Code)\n', '2.1.328'],
    loggedOut: '{"loggedIn":false,"authMethod":"none"}',
    // Recorded from the pinned claude 2.1.328 against the fake API (tests/fixtures/headless/capture.ts).
    turn: at('tests/fixtures/headless/claude-code.turn.jsonl'),
    limited: at('tests/fixtures/headless/claude-code.limited.jsonl'),
    limit: { resetsAtMs: 1_795_985_705_000, window: 'five_hour' },
  },
  codex: {
    transcript: at('tests/fixtures/codex/sessions/2026/11/29/rollout-2026-11-29T19-40-00-019ad0f1-5f7f-7c3e-9a1b-4c5d6e7f8091.jsonl'),
    version: ['codex-cli 0.169.0\n', '0.169.0'],
    loggedOut: 'Not logged in',
    // Recorded from the pinned codex 0.169.0 against the fake API (tests/fixtures/headless/capture.ts).
    turn: at('tests/fixtures/headless/codex.turn.jsonl'),
    limited: at('tests/fixtures/headless/codex.limited.jsonl'),
    limit: { resetsAtMs: null, window: null },
  },
  'gemini-cli': {
    // Recorded from the pinned gemini 0.61.0 against the fake API (tests/fixtures/gemini-cli/capture.ts).
    transcript: at('tests/fixtures/gemini-cli/session-2026-12-02T05-17-1d4398e2.jsonl'),
    version: ['0.61.0\n', '0.61.0'],
    loggedOut: 'Please set an Auth method in your /home/u/.gemini/settings.json or specify one of the following environment variables before running: GEMINI_API_KEY, GOOGLE_GENAI_USE_VERTEXAI, GOOGLE_GENAI_USE_GCA',
    turn: at('tests/fixtures/gemini-cli/turn.jsonl'),
    limited: at('tests/fixtures/gemini-cli/limited.jsonl'),
    // The refusal's "Suggested retry after 3600s." counted from the result record's timestamp.
    limit: { resetsAtMs: Date.parse('2026-12-02T05:17:57.473Z') + 3_600_000, window: null },
    sessionId: '1d4398e2-064a-4eec-96ff-89075cfd7869',
    gatewayRefused: /generateContent/,
    promptHookEvent: 'BeforeAgent',
  },
  opencode: {
    transcript: null,
    sessionId: 'ses_dcadb0f94ffeOsg6t1jlXobGZf',
    version: ['1.18.33\n', '1.18.33'],
    loggedOut: '\u001b[0m\n┌  Credentials \u001b[90m~/.local/share/opencode/auth.json\n│\n└  0 credentials\n',
    // Recorded from the pinned opencode-ai 1.18.33 against the fake API (tests/fixtures/opencode/capture.ts).
    turn: at('tests/fixtures/opencode/turn.jsonl'),
    turnKinds: ['turn_started', 'tool_call', 'usage', 'turn_started', 'usage', 'turn_completed'],
    limited: at('tests/fixtures/opencode/limited.jsonl'),
    limitedKinds: ['rate_limited', 'turn_completed'],
    limit: { resetsAtMs: 1_795_985_705_000, window: 'five_hour' },
  },
  'cursor-agent': {
    transcript: null,
    version: ['2025.09.18-7ae6800\n', '2025.09.18-7ae6800'],
    loggedOut: 'Not logged in',
    // Written in the DOCUMENTED stream-json format (tests/fixtures/cursor-agent/README.md): not recorded.
    turn: at('tests/fixtures/cursor-agent/turn.jsonl'),
    turnKinds: ['turn_started', 'tool_call', 'turn_completed'],
    limited: at('tests/fixtures/cursor-agent/limited.jsonl'),
    limitedKinds: ['turn_started'],
    limit: null,
    gateway: false,
  },
  plain: {
    transcript: at('tests/support/minimal-harness/logs/5f0c1a2b-3c4d-4e5f-8a9b-0c1d2e3f4a5b.jsonl'),
    version: ['plain 1.0.2\n', '1.0.2'],
    loggedOut: 'anonymous',
    turn: at('tests/support/minimal-harness/headless.turn.jsonl'),
    limited: at('tests/support/minimal-harness/headless.limited.jsonl'),
    limit: { resetsAtMs: 1_795_985_705_000, window: 'five_hour' },
  },
};

const adapters = allHarnesses();
const table = adapters.map((a) => [a.id, a] as const);

function kinds(events: HarnessEvent[]): HarnessEventKind[] {
  return events.map((e) => e.kind).filter((k) => k !== 'ignored');
}

function fixturesOf(a: HarnessAdapter): Fixtures {
  const f = FIXTURES[a.id];
  if (!f) throw new Error(`no conformance fixtures for harness '${a.id}': add them to FIXTURES`);
  return f;
}

describe('the harness registry', () => {
  it('holds the shipped harnesses and the registered test harness, each once', () => {
    expect(adapters.map((a) => a.id)).toEqual(['claude-code', 'codex', 'gemini-cli', 'opencode', 'cursor-agent', 'plain']);
    expect(() => registerHarness(plainHarness)).toThrow(/registered already/);
  });

  it('an unknown harness is an error that names the known ones, never Claude Code', () => {
    expect(harnessById('aider')).toEqual({ ok: false, error: "unknown harness 'aider' — sleds knows claude-code, codex, gemini-cli, opencode, cursor-agent, plain" });
    expect(harnessById(undefined).ok).toBe(false);
    expect(harnessById('plain')).toMatchObject({ ok: true, adapter: { displayName: 'Plain' } });
  });
});

describe.each(table)('harness %s', (_id, adapter) => {
  const f = fixturesOf(adapter);

  it('reads its version from --version', () => {
    expect(adapter.binary.readVersion(f.version[0])).toBe(f.version[1]);
    expect(adapter.binary.readVersion('command not found')).toBeNull();
  });

  it('reads a clear "logged out" from its login status, and nothing else as one', () => {
    expect(adapter.login.statusArgs.length).toBeGreaterThan(0);
    expect(adapter.login.loggedOut(f.loggedOut)).toBe(true);
    expect(adapter.login.loggedOut('error: unknown command')).toBe(false);
  });

  it('parses its own transcript: usage under its source, of the session the path names, and nothing it cannot read', () => {
    if (f.transcript === null) {
      // No transcript file: whatever line it is handed is not one of its own.
      const reader = adapter.transcriptReader('/nowhere/session.jsonl');
      expect(new Set(readFileSync(FIXTURES['claude-code']!.transcript!, 'utf8').split('\n').filter((l) => l.trim() !== '').map((l) => reader.read(l).kind))).toEqual(new Set(['ignored']));
      expect(new Set(readFileSync(f.turn, 'utf8').split('\n').map((l) => reader.read(l).kind))).toEqual(new Set(['ignored']));
      return;
    }
    const reader = adapter.transcriptReader(f.transcript);
    const lines = readFileSync(f.transcript, 'utf8').split('\n').filter((l) => l.trim() !== '').map((l) => reader.read(l));
    const usage = lines.flatMap((l) => (l.kind === 'usage' ? [l.usage] : []));
    expect(usage.length).toBeGreaterThan(0);
    expect(new Set(usage.map((u) => u.sessionId))).toEqual(new Set([f.sessionId ?? adapter.sessions.sessionIdFromPath(f.transcript)]));
    expect(usage.every((u) => u.source === adapter.transcriptSource && u.inputTokens + u.outputTokens > 0)).toBe(true);
    expect(lines.filter((l) => l.kind === 'error')).toEqual([]);
  });

  it('finds the session a transcript path names, under its home', () => {
    if (f.transcript === null) {
      const home = adapter.sessions.home({}, '/home/u');
      expect(home.startsWith('/home/u/')).toBe(true);
      expect(adapter.sessions.sessionIdFromPath(`${home}/${SID}.jsonl`)).toBeNull();
      expect(adapter.sessions.isTranscriptOf(`${f.sessionId ?? SID}.jsonl`, f.sessionId ?? SID)).toBe(false);
      return;
    }
    // A file name that carries only part of the id names no session by itself (the id is in the file).
    const fromPath = adapter.sessions.sessionIdFromPath(f.transcript);
    expect(fromPath).toBe(f.sessionId ? null : fromPath);
    const id = fromPath ?? f.sessionId ?? null;
    expect(id).not.toBeNull();
    expect(adapter.sessions.isTranscriptOf(basename(f.transcript), id!)).toBe(true);
    expect(adapter.sessions.isTranscriptOf(basename(f.transcript), SID)).toBe(false);
    const home = adapter.sessions.home({}, '/home/u');
    expect(home.startsWith('/home/u/')).toBe(true);
    expect(adapter.sessions.transcriptDir(home, '/home/u/proj').startsWith(`${home}/`)).toBe(true);
  });

  it('maps a headless turn to the shared events in order: started, the tool call, usage, completed with the session id', () => {
    const events = readHeadlessStream(adapter, readFileSync(f.turn, 'utf8'));
    for (const e of events) expect(HarnessEvent.parse(e)).toEqual(e);
    expect(kinds(events)).toEqual(f.turnKinds ?? ['turn_started', 'tool_call', 'usage', 'turn_completed']);
    const started = events.find((e) => e.kind === 'turn_started')!;
    const done = events.at(-1)!;
    expect(started.kind === 'turn_started' && started.sessionId).toBeTruthy();
    expect(done).toMatchObject({ kind: 'turn_completed', ok: true, sessionId: started.kind === 'turn_started' ? started.sessionId : null });
  });

  it('maps a run refused at a plan limit to rate_limited, then a failed turn', () => {
    const events = readHeadlessStream(adapter, readFileSync(f.limited, 'utf8'));
    expect(kinds(events)).toEqual(f.limitedKinds ?? ['turn_started', 'rate_limited', 'turn_completed']);
    if (f.limit === null) {
      // Nothing in the stream says it failed, let alone why: never read as a success.
      expect(events.some((e) => e.kind === 'turn_completed' || e.kind === 'rate_limited')).toBe(false);
      expect(adapter.readHeadlessResult(readFileSync(f.limited, 'utf8'))?.isError ?? null).toBeNull();
      return;
    }
    expect(events.find((e) => e.kind === 'rate_limited')).toEqual({ kind: 'rate_limited', ...f.limit });
    expect(events.at(-1)).toMatchObject({ kind: 'turn_completed', ok: false });
    expect(adapter.readHeadlessResult(readFileSync(f.limited, 'utf8'))).toMatchObject({ isError: true });
  });

  it.each([
    ['not json at all', 'error'],
    ['{"type":"brand-new-record","x":1}', 'ignored'],
    ['{"e":"brand-new-record"}', 'ignored'],
    ['[1,2,3]', 'error'],
    ['{"type":"result","usage":"garbage","is_error":"yes"}', null],
    ['{"type":"turn.completed","usage":{"input_tokens":-5}}', null],
  ] as const)('reads a stray line %s as one of the vocabulary, never a throw', (line, kind) => {
    const events = adapter.parseHeadlessLine(line);
    expect(events.length).toBeGreaterThan(0);
    for (const e of events) expect(HarnessEvent.safeParse(e).success).toBe(true);
    if (kind) expect(events.map((e) => e.kind)).toEqual([kind]);
  });

  it('runs headless with the prompt on stdin, never in argv', () => {
    const SID = f.sessionId ?? SID_UUID;
    const run = adapter.headlessArgv({ bin: '/opt/bin/h', prompt: PROMPT, model: 'm-1' });
    expect(run.argv[0]).toBe('/opt/bin/h');
    expect(run.stdin).toBe(PROMPT);
    expect(run.argv.some((a) => a.includes('SECRET-PROMPT'))).toBe(false);
    const resumed = adapter.headlessArgv({ bin: '/opt/bin/h', prompt: PROMPT, resumeSessionId: SID });
    expect(resumed.argv.some((a) => a.includes(SID))).toBe(true);
    expect(resumed.argv.some((a) => a.includes('SECRET-PROMPT'))).toBe(false);
    expect(() => adapter.headlessArgv({ bin: '/opt/bin/h', prompt: PROMPT, resumeSessionId: HOSTILE_ID })).toThrow();
  });

  it('resumes interactively with the id where no option can be read from it, and refuses an id that is not one', () => {
    const SID = f.sessionId ?? SID_UUID;
    const argv = adapter.resumeArgv({ bin: '/opt/bin/h', sessionId: SID, headless: false, prompt: null });
    expect(argv[0]).toBe('/opt/bin/h');
    const at = argv.findIndex((a) => a.includes(SID));
    expect(at).toBeGreaterThan(0);
    // Glued to its option (`--resume=<id>`) or after the `--` that ends the options.
    expect(argv[at] !== SID || argv.slice(0, at).includes('--')).toBe(true);
    expect(() => adapter.resumeArgv({ bin: '/opt/bin/h', sessionId: HOSTILE_ID, headless: false, prompt: null })).toThrow(ResumePlanError);
    expect(adapter.resumeWords(SID).join(' ')).toContain(SID);
  });

  it('points the harness at the gateway: its URL in the environment or options, the token in the environment only', () => {
    const launch = adapter.gatewayLaunch(GATEWAY);
    if (f.gatewayRefused) {
      expect(launch).toEqual({ ok: false, why: expect.stringMatching(f.gatewayRefused) });
      return;
    }
    expect(launch.ok).toBe(f.gateway ?? true);
    if (!launch.ok) expect(launch.why).toMatch(/\S/);
    if (!launch.ok) return;
    const said = [...Object.values(launch.env), ...launch.args].join('\n');
    expect(said).toContain('http://127.0.0.1:47011');
    expect(Object.values(launch.env)).toContain(GATEWAY.token);
    expect(launch.args.some((a) => a.includes(GATEWAY.token))).toBe(false);
    for (const name of Object.keys(launch.env)) expect(name).toMatch(/^[A-Z_][A-Z0-9_]*$/);
  });

  it('answers a hook "carry on" in its dialect, and blocks a prompt with the reason', () => {
    expect(adapter.hooks.carryOn).toEqual({ stdout: '', exitCode: 0 });
    const blocked = adapter.hooks.block('sled: handled 5');
    expect(blocked.exitCode).toBe(0);
    expect(JSON.parse(blocked.stdout)).toMatchObject({ decision: 'block', reason: 'sled: handled 5' });
    const context = JSON.parse(adapter.hooks.carryOnWithContext('the answer is 42', null).stdout);
    expect(context.hookSpecificOutput).toEqual({ hookEventName: f.promptHookEvent ?? 'UserPromptSubmit', additionalContext: 'the answer is 42' });
  });

  it('claims its transcript source as a wall signal of its own, and no other harness claims it', () => {
    expect(adapter.signalSources).toContain(adapter.transcriptSource);
    const others = adapters.filter((o) => o.id !== adapter.id).flatMap((o) => o.signalSources);
    expect(adapter.signalSources.filter((s) => others.includes(s))).toEqual([]);
  });
});

describe('the fixtures', () => {
  it('every registered harness has conformance fixtures, and every fixture file exists', () => {
    expect(Object.keys(FIXTURES).sort()).toEqual(adapters.map((a) => a.id).sort());
    for (const f of Object.values(FIXTURES)) {
      for (const p of [f.transcript, f.turn, f.limited].filter((x) => x !== null)) expect(readdirSync(join(p, '..'))).toContain(basename(p));
    }
  });
});
