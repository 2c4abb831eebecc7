import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HarnessEvent } from '../../../harnesses/events.js';
import { limitReset, parseOpencodeHeadlessLine, readOpencodeOutput } from '../../../harnesses/opencode/headless.js';
import { opencode } from '../../../harnesses/opencode/index.js';
import { readHeadlessStream } from '../../../harnesses/port.js';

const FIX = join(import.meta.dirname, '..', '..', 'fixtures', 'opencode');
const turn = readFileSync(join(FIX, 'turn.jsonl'), 'utf8');
const limited = readFileSync(join(FIX, 'limited.jsonl'), 'utf8');
const SES = 'ses_dcadb0f94ffeOsg6t1jlXobGZf';

const rec = (o: object) => JSON.stringify({ timestamp: 1, sessionID: SES, ...o });
const finish = (reason: string, tokens: object = { input: 10, output: 4, reasoning: 3, cache: { read: 2, write: 1 } }) => rec({ type: 'step_finish', part: { type: 'step-finish', reason, tokens, cost: 0.5 } });

describe('opencode run --format json, line by line', () => {
  it.each([
    ['a step start', rec({ type: 'step_start', part: {} }), [{ kind: 'turn_started', sessionId: SES, model: null }]],
    ['a tool call', rec({ type: 'tool_use', part: { tool: 'bash', callID: 'c1', state: { status: 'completed' } } }), [{ kind: 'tool_call', name: 'bash', callId: 'c1' }]],
    ['its question tool', rec({ type: 'tool_use', part: { tool: 'question', state: { input: { questions: [{ question: 'Which one?' }] } } } }), [{ kind: 'question', text: 'Which one?' }]],
    ['a step that goes on to the tools', finish('tool-calls'), [{ kind: 'usage', inputTokens: 10, outputTokens: 7, cacheReadTokens: 2, cacheWriteTokens: 1 }]],
    ['the step that ends the turn', finish('stop'), [{ kind: 'usage', inputTokens: 10, outputTokens: 7, cacheReadTokens: 2, cacheWriteTokens: 1 }, { kind: 'turn_completed', sessionId: SES, ok: true, text: null }]],
    ['a step cut by a filter', finish('content-filter', {}), [{ kind: 'usage', inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 }, { kind: 'turn_completed', sessionId: SES, ok: false, text: null }]],
    ['an API error', rec({ type: 'error', error: { name: 'APIError', data: { message: 'overloaded', statusCode: 529 } } }), [{ kind: 'error', message: 'overloaded' }, { kind: 'turn_completed', sessionId: SES, ok: false, text: null }]],
    ['an OpenAI-style 429', rec({ type: 'error', error: { data: { statusCode: 429, responseHeaders: { 'retry-after': '30', date: 'Wed, 02 Dec 2026 05:11:54 GMT' } } } }), [{ kind: 'rate_limited', resetsAtMs: Date.UTC(2026, 11, 2, 5, 12, 24), window: null }, { kind: 'turn_completed', sessionId: SES, ok: false, text: null }]],
    ['text', rec({ type: 'text', part: { text: 'hi' } }), [{ kind: 'ignored' }]],
    ['a record type it does not know', rec({ type: 'brand_new' }), [{ kind: 'ignored' }]],
    ['a tool call without a tool', rec({ type: 'tool_use', part: {} }), [{ kind: 'ignored' }]],
  ] as const)('%s', (_what, line, events) => {
    expect(parseOpencodeHeadlessLine(line)).toEqual(events);
  });

  it.each([
    ['truncated', turn.split('\n')[1]!.slice(0, 200)],
    ['not JSON', 'Error: something on stdout'],
    ['an array', '[{"type":"step_start"}]'],
  ])('a %s line is one error event, never a throw', (_what, line) => {
    const events = parseOpencodeHeadlessLine(line);
    expect(events.map((e) => e.kind)).toEqual(['error']);
    expect(HarnessEvent.parse(events[0]).kind).toBe('error');
    if (events[0]!.kind === 'error') expect(events[0]!.message.length).toBeLessThanOrEqual(500);
  });

  it('a huge line is read whole (a tool call whose output is megabytes)', () => {
    const line = rec({ type: 'tool_use', part: { tool: 'read', callID: 'big', state: { output: 'x'.repeat(4_000_000) } } });
    expect(parseOpencodeHeadlessLine(line)).toEqual([{ kind: 'tool_call', name: 'read', callId: 'big' }]);
  });

  it('a 429 without any reset header says no reset', () => {
    expect(limitReset({})).toEqual({ resetsAtMs: null, window: null });
  });
});

describe('the recorded streams, summed up', () => {
  it('a turn: the reply text, the session, the cost of both steps, no error', () => {
    expect(readOpencodeOutput(turn)).toEqual({ text: 'Wrote hello.txt.', isError: false, sessionId: expect.stringMatching(/^ses_/), costUsd: expect.closeTo(0.010833 + 0.010413, 9), error: null });
    const events = readHeadlessStream(opencode, turn);
    expect(events.filter((e) => e.kind === 'usage')).toHaveLength(2);
  });

  it('a run refused at the limit: an error naming the 429', () => {
    expect(readOpencodeOutput(limited)).toMatchObject({ isError: true, error: expect.stringContaining('HTTP 429'), costUsd: null });
  });

  it('nothing readable is null', () => {
    expect(readOpencodeOutput('\n\nwarning: not json\n')).toBeNull();
  });
});

describe('the argv', () => {
  it('resumes a session by its ses_ id glued to --session, and refuses anything else', () => {
    expect(opencode.headlessArgv({ bin: 'oc', prompt: 'p', resumeSessionId: SES, model: 'anthropic/m' }).argv).toEqual(['oc', 'run', '--format', 'json', `--session=${SES}`, '--model', 'anthropic/m']);
    expect(() => opencode.headlessArgv({ bin: 'oc', prompt: 'p', resumeSessionId: '1098c2f4-6a5e-4a8e-9a57-1f3c9d7e2b10' })).toThrow(/not an OpenCode session id/);
    expect(opencode.resumeArgv({ bin: 'oc', sessionId: SES, headless: true, prompt: '-x go' })).toEqual(['oc', 'run', `--session=${SES}`, '--format', 'json', '--', '-x go']);
  });
});
