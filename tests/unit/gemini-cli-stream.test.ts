import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HarnessEvent } from '../../harnesses/events.js';
import { parseGeminiHeadlessLine, quotaResetMs, readGeminiOutput } from '../../harnesses/gemini-cli/headless.js';
import { GeminiSessionReader, isGeminiSessionFileOf, shortIdFromFileName } from '../../harnesses/gemini-cli/session-file.js';
import { geminiCli } from '../../harnesses/gemini-cli/index.js';

/** Gemini CLI's stream-json and session files, as recorded from the real 0.61.0 (tests/fixtures/gemini-cli/). */

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'gemini-cli');
const TURN = readFileSync(join(FIXTURES, 'turn.jsonl'), 'utf8');
const SESSION_FILE = 'session-2026-12-02T05-17-1d4398e2.jsonl';
const SID = '1d4398e2-064a-4eec-96ff-89075cfd7869';
const valid = (events: HarnessEvent[]) => events.every((e) => HarnessEvent.safeParse(e).success);

describe('gemini stream-json lines', () => {
  it.each([
    ['a truncated record', TURN.split('\n')[2]!.slice(0, 60), ['error']],
    ['a truncated result', TURN.trim().split('\n').at(-1)!.slice(0, -3), ['error']],
    ['an empty line', '', ['error']],
    ['a JSON string', '"init"', ['error']],
    ['an init without a session id', '{"type":"init","model":"gemini-2.5-pro"}', ['turn_started']],
    ['a tool_use without a name', '{"type":"tool_use","tool_id":"x"}', ['ignored']],
    ['a result with garbage stats', '{"type":"result","status":"success","stats":"lots"}', ['turn_completed']],
    ['a result with negative tokens', '{"type":"result","status":"success","stats":{"input_tokens":-5,"output_tokens":3,"cached":0}}', ['usage', 'turn_completed']],
    ['a result with no status', '{"type":"result"}', ['turn_completed']],
    ['a warning', '{"type":"error","severity":"warning","message":"Loop detected, stopping execution"}', ['error']],
    ['a record of a newer version', '{"type":"thought","content":"hmm"}', ['ignored']],
  ] as const)('reads %s as the vocabulary, never a throw', (_name, line, kinds) => {
    const events = parseGeminiHeadlessLine(line);
    expect(valid(events)).toBe(true);
    expect(events.map((e) => e.kind)).toEqual(kinds);
  });

  it('a result without success is a failed turn, whatever it says', () => {
    expect(parseGeminiHeadlessLine('{"type":"result","status":"error","error":{"message":"boom"}}')).toEqual([{ kind: 'turn_completed', sessionId: null, ok: false, text: 'boom' }]);
    expect(parseGeminiHeadlessLine('{"type":"result"}')).toEqual([{ kind: 'turn_completed', sessionId: null, ok: false, text: null }]);
  });

  it('a huge reply line is read whole, and an error message is cut to one line of 500 characters', () => {
    const huge = JSON.stringify({ type: 'message', role: 'assistant', content: 'x'.repeat(2_000_000), delta: true });
    expect(parseGeminiHeadlessLine(huge)).toEqual([{ kind: 'ignored' }]);
    expect(readGeminiOutput(`${huge}\n{"type":"result","status":"success"}`)?.text).toHaveLength(2_000_000);
    const [e] = parseGeminiHeadlessLine(JSON.stringify({ type: 'error', severity: 'error', message: `a\n${'y'.repeat(5_000)}` }));
    expect(e).toMatchObject({ kind: 'error' });
    expect(e?.kind === 'error' && e.message.length).toBe(500);
    expect(parseGeminiHeadlessLine(`garbage ${'z'.repeat(100_000)}`)[0]).toMatchObject({ kind: 'error' });
  });

  it.each([
    ['Suggested retry after 3600s.', '2026-12-02T05:17:57.473Z', Date.parse('2026-12-02T05:17:57.473Z') + 3_600_000],
    ['Suggested retry after 1500ms.', '2026-12-02T05:17:57.000Z', Date.parse('2026-12-02T05:17:57.000Z') + 1_500],
    ['You have exhausted your daily quota on this model.', '2026-12-02T05:17:57.000Z', null],
    ['Suggested retry after 60s.', undefined, null],
    ['Suggested retry after 60s.', 'not a time', null],
  ] as const)('a quota refusal %j at %s resets at %s', (message, at, resets) => {
    expect(quotaResetMs(message, at)).toBe(resets);
  });

  it('the daily quota refusal (measured) is rate_limited without a reset, and an unrelated failure is not', () => {
    const daily = '{"type":"result","timestamp":"2026-12-02T04:43:29.758Z","status":"error","error":{"type":"unknown","message":"[API Error: You have exhausted your daily quota on this model.]\\nPlease wait and try again later."}}';
    expect(parseGeminiHeadlessLine(daily).map((e) => e.kind)).toEqual(['rate_limited', 'turn_completed']);
    const other = '{"type":"result","status":"error","error":{"type":"FatalToolExecutionError","message":"disk full"}}';
    expect(parseGeminiHeadlessLine(other).map((e) => e.kind)).toEqual(['turn_completed']);
  });

  it('sums a recorded run: the reply pieces joined, the session, success', () => {
    expect(readGeminiOutput(TURN)).toEqual({ text: 'Wrote hello.txt.', isError: false, sessionId: SID, costUsd: null, error: null });
    expect(readGeminiOutput('nothing structured here\n')).toBeNull();
    expect(readGeminiOutput(TURN.split('\n').slice(0, 3).join('\n'))).toMatchObject({ isError: null, sessionId: SID });
  });
});

describe('gemini session files', () => {
  it('names the session by 8 hex digits only: it matches the id that starts with them, and names no full id', () => {
    expect(shortIdFromFileName(`/h/.gemini/tmp/repo/chats/${SESSION_FILE}`)).toBe('1d4398e2');
    expect(isGeminiSessionFileOf(SESSION_FILE, SID)).toBe(true);
    expect(isGeminiSessionFileOf(SESSION_FILE, '1d4398e3-064a-4eec-96ff-89075cfd7869')).toBe(false);
    expect(isGeminiSessionFileOf('session-2026-12-02T05-17-1d4398e2.txt', SID)).toBe(false);
    expect(isGeminiSessionFileOf(SESSION_FILE, '1d4398e2')).toBe(false);
    expect(geminiCli.sessions.sessionIdFromPath(SESSION_FILE)).toBeNull();
  });

  it('counts a reply written twice (again when its tool call finished) once', () => {
    const reader = new GeminiSessionReader();
    const lines = readFileSync(join(FIXTURES, SESSION_FILE), 'utf8').split('\n').filter((l) => l.trim() !== '').map((l) => reader.read(l));
    expect(lines[0]).toEqual({ kind: 'session', sessionId: SID, cwd: null });
    const usage = lines.flatMap((l) => (l.kind === 'usage' ? [l.usage] : []));
    expect(usage.map((u) => [u.inputTokens, u.cacheReadTokens, u.outputTokens])).toEqual([
      [1000, 200, 40],
      [1000, 200, 40],
    ]);
    expect(new Set(usage.map((u) => u.dedupKey)).size).toBe(2);
    expect(lines.filter((l) => l.kind === 'error')).toEqual([]);
  });

  it('reads nothing as usage before the header names the session, and a broken line as an error', () => {
    const reader = new GeminiSessionReader();
    const reply = '{"id":"a","timestamp":"2026-12-02T05:17:50.700Z","type":"gemini","content":"","tokens":{"input":10,"output":2,"cached":0},"model":"m"}';
    expect(reader.read(reply)).toEqual({ kind: 'ignored' });
    expect(reader.read('{"sessionId":"')).toMatchObject({ kind: 'error' });
  });

  it('lives under GEMINI_CLI_HOME when it is set, else the user home', () => {
    expect(geminiCli.sessions.home({}, '/home/u')).toBe('/home/u/.gemini');
    expect(geminiCli.sessions.home({ GEMINI_CLI_HOME: '/srv/g/' }, '/home/u')).toBe('/srv/g/.gemini');
    expect(geminiCli.sessions.installedPath(`tmp/other/chats/${SESSION_FILE}`, '/home/b/Repo')).toBe(`tmp/repo/chats/${SESSION_FILE}`);
  });
});

describe('gemini argv', () => {
  it('runs headless with the prompt on stdin and an empty -p, resuming by a glued --resume', () => {
    const cmd = geminiCli.headlessArgv({ bin: 'gemini', prompt: '-rf please', resumeSessionId: SID, model: 'gemini-2.5-pro' });
    expect(cmd).toEqual({ argv: ['gemini', '-p', '', '--output-format', 'stream-json', '--skip-trust', '--approval-mode', 'yolo', `--resume=${SID}`, '--model', 'gemini-2.5-pro'], stdin: '-rf please' });
  });

  it('resumes headless with the prompt glued to --prompt, so a prompt like an option stays a prompt', () => {
    const argv = geminiCli.resumeArgv({ bin: 'gemini', sessionId: SID, headless: true, prompt: '--yolo', permissionMode: 'acceptEdits' });
    expect(argv).toEqual(['gemini', `--resume=${SID}`, '--skip-trust', '--output-format', 'stream-json', '--approval-mode', 'auto_edit', '--prompt=--yolo']);
  });
});
