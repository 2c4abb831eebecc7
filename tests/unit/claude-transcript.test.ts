import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseClaudeTranscriptLine, sessionIdFromTranscriptPath, type ParsedTranscriptLine } from '../../harnesses/claude-code/transcript.js';
import type { UsageRecord, WallRecord } from '../../core/usage.js';
import { ZERO_TOKEN_COUNTS } from '../support/usage-tokens.js';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'claude');
const S1 = '1098c3a4-5b2e-4f7a-9d61-0c3e8a7b2f45';
const S2 = '4e7d2c1b-8a9f-4b3c-9d2e-1f0a9b8c7d6e';
const SESSION_FILE = join(FIXTURES, 'projects', '-path-to-proj', `${S1}.jsonl`);
const VARIANTS_FILE = join(FIXTURES, 'projects', '-home-u-my-proj', `${S2}.jsonl`);
const SUBAGENT_FILE = join(FIXTURES, 'projects', '-home-u-my-proj', S2, 'subagents', 'agent-a7f3c2e1.jsonl');
const MALFORMED_FILE = join(FIXTURES, 'malformed.jsonl');

/** Lines of a fixture, 1-based, exactly as a tailer would hand them over (no trailing newline). */
function lines(file: string): string[] {
  const all = readFileSync(file, 'utf8').split('\n');
  if (all[all.length - 1] === '') all.pop();
  return all;
}

function parseLine(file: string, lineNo: number): ParsedTranscriptLine {
  const line = lines(file)[lineNo - 1];
  if (line === undefined) throw new Error(`${file} has no line ${lineNo}`);
  return parseClaudeTranscriptLine(line, { filePath: file });
}

const ts = (iso: string) => Date.parse(iso);

function claudeUsage(over: Partial<UsageRecord> & Pick<UsageRecord, 'dedupKey' | 'model' | 'timestampMs'>): ParsedTranscriptLine {
  return {
    kind: 'usage',
    usage: {
      source: 'claude-transcript',
      sessionId: S1,
      cwd: '/path/to/proj',
      ...ZERO_TOKEN_COUNTS,
      serviceTier: 'standard',
      inferenceGeo: null,
      ...over,
    },
  };
}

function wall(w: Omit<WallRecord, 'source'>): ParsedTranscriptLine {
  return { kind: 'wall', wall: { source: 'claude-transcript', ...w } };
}

const IGNORED: ParsedTranscriptLine = { kind: 'ignored' };

const MSG_A = {
  dedupKey: 'msg_01HkQm7Tq2dXb8Yw3vN5pR6s:req_011CVcA1b2C3d4E5f6G7h8J9',
  model: 'claude-opus-5-5',
  inputTokens: 3,
  cacheWrite1hTokens: 1200,
  cacheReadTokens: 14500,
  outputTokens: 87,
  inferenceGeo: 'global',
};

describe('parseClaudeTranscriptLine: a session (shared/facts/claude-code.md §3, §4)', () => {
  const cases: Array<[lineNo: number, what: string, expected: ParsedTranscriptLine]> = [
    [1, 'queue-operation', IGNORED],
    [
      2,
      'user prompt',
      { kind: 'session', sessionId: S1, cwd: '/path/to/proj', timestampMs: ts('2026-11-29T19:50:20.522Z'), version: '2.1.328', gitBranch: 'HEAD' },
    ],
    [3, 'attachment', IGNORED],
    [4, 'assistant text block', claudeUsage({ ...MSG_A, timestampMs: ts('2026-11-29T19:50:23.101Z') })],
    [5, 'assistant tool_use block of the same message', claudeUsage({ ...MSG_A, timestampMs: ts('2026-11-29T19:50:23.415Z') })],
    [
      6,
      'user tool_result',
      { kind: 'session', sessionId: S1, cwd: '/path/to/proj', timestampMs: ts('2026-11-29T19:50:23.730Z'), version: '2.1.328', gitBranch: 'HEAD' },
    ],
    [
      7,
      'assistant whose TTL split (0/0) is short of the write total: the rest counts as 5m',
      claudeUsage({
        dedupKey: 'msg_01JrSt8Uv9Wx0Yz1Ab2Cd3Ef:req_011CVcB2c3D4e5F6g7H8j9K0',
        model: 'claude-opus-5-5',
        timestampMs: ts('2026-11-29T19:50:25.002Z'),
        inputTokens: 2677,
        cacheWrite5mTokens: 100,
        cacheReadTokens: 2000,
        outputTokens: 12,
        inferenceGeo: 'global',
      }),
    ],
    [8, 'system turn_duration', IGNORED],
    [9, 'cost-state', IGNORED],
    [10, 'last-prompt', IGNORED],
    [11, 'file-history-snapshot', IGNORED],
    [
      12,
      'second prompt, on a branch',
      { kind: 'session', sessionId: S1, cwd: '/path/to/proj', timestampMs: ts('2026-11-29T19:55:01.215Z'), version: '2.1.328', gitBranch: 'main' },
    ],
    [
      13,
      'the usage-limit synthetic record',
      wall({
        dedupKey: 'a0f6e7d8-9102-43b4-9fc0-4b5c6d7e8f90',
        sessionId: S1,
        timestampMs: ts('2026-11-29T19:55:01.640Z'),
        window: 'five_hour',
        resetsAtMs: 1_795_985_705_000,
        message: "You've hit your 5-hour limit · resets 8:55pm (UTC)",
      }),
    ],
    [14, 'system informational notice', IGNORED],
  ];

  it.each(cases)('line %i: %s', (lineNo, _what, expected) => {
    expect(parseLine(SESSION_FILE, lineNo)).toEqual(expected);
  });

  it('line 15: a truncated last line is an error, not a throw', () => {
    const r = parseLine(SESSION_FILE, 15);
    expect(r.kind).toBe('error');
    expect(r.kind === 'error' && r.message).toMatch(new RegExp(`^claude transcript .*${S1}\\.jsonl: line is not valid JSON`));
  });

  it('covers every line of the fixture', () => {
    expect(lines(SESSION_FILE)).toHaveLength(cases.length + 1);
  });

  it('the text and tool_use records of one message share one dedupKey; the next message has its own', () => {
    const keys = lines(SESSION_FILE)
      .map((l) => parseClaudeTranscriptLine(l, { filePath: SESSION_FILE }))
      .flatMap((r) => (r.kind === 'usage' ? [r.usage.dedupKey] : []));
    expect(keys).toHaveLength(3);
    expect(new Set(keys).size).toBe(2);
  });
});

describe('parseClaudeTranscriptLine: variants', () => {
  const cases: Array<[lineNo: number, what: string, expected: ParsedTranscriptLine]> = [
    [
      1,
      'dated model id, no TTL split (all writes 5m), web searches',
      claudeUsage({
        dedupKey: 'msg_01AbCdEfGhIjKlMnOpQrStUv:req_011CPaA1b2C3d4E5f6G7h8J9',
        sessionId: S2,
        cwd: '/home/u/my.proj',
        model: 'claude-sonnet-4-5-20250929',
        timestampMs: ts('2025-10-02T08:15:00.000Z'),
        inputTokens: 1500,
        cacheWrite5mTokens: 3000,
        outputTokens: 400,
        webSearchRequests: 2,
      }),
    ],
    [
      2,
      'US inference, 1h + 5m split, thinking-only content',
      claudeUsage({
        dedupKey: 'msg_01BcDeFgHiJkLmNoPqRsTuVw:req_011CQbB2c3D4e5F6g7H8j9K0',
        sessionId: S2,
        cwd: '/home/u/my.proj',
        model: 'claude-opus-4-6',
        timestampMs: ts('2026-03-10T12:00:00.000Z'),
        inputTokens: 10,
        cacheWrite5mTokens: 200,
        cacheWrite1hTokens: 500,
        cacheReadTokens: 50000,
        outputTokens: 250,
        inferenceGeo: 'us',
      }),
    ],
    [
      3,
      'sidechain record on the batch tier',
      claudeUsage({
        dedupKey: 'msg_01CdEfGhIjKlMnOpQrStUvWx:req_011CRcC3d4E5f6G7h8J9k0L1',
        sessionId: S2,
        cwd: '/home/u/my.proj',
        model: 'claude-haiku-4-5-20251001',
        timestampMs: ts('2026-03-10T12:00:05.000Z'),
        inputTokens: 800,
        outputTokens: 60,
        serviceTier: 'batch',
      }),
    ],
    [
      4,
      'old record: no sessionId (file name), no requestId, null cache fields, no tier',
      claudeUsage({
        dedupKey: 'msg_01DeFgHiJkLmNoPqRsTuVwXy:none',
        sessionId: S2,
        cwd: '/home/u/my.proj',
        model: 'claude-sonnet-4-20250514',
        timestampMs: ts('2025-06-01T09:00:00.000Z'),
        inputTokens: 4,
        outputTokens: 9,
        serviceTier: null,
      }),
    ],
    [5, '"No response requested." synthetic record', IGNORED],
    [
      6,
      'the old "Claude AI usage limit reached|<epoch>" text',
      wall({
        dedupKey: '83940516-c6d7-4e9f-aab1-c2d3e4f5a6b7',
        sessionId: S2,
        timestampMs: ts('2025-07-11T01:12:40.000Z'),
        window: null,
        resetsAtMs: 1_752_210_000_000,
        message: 'Claude AI usage limit reached',
      }),
    ],
    [7, 'system api_error (API-key 429, retried): not a plan wall', IGNORED],
    [8, 'summary', IGNORED],
    [9, 'permission-mode', IGNORED],
    [10, 'tools-used', IGNORED],
    [
      11,
      'weekly wall with quotaLimits only',
      wall({
        dedupKey: 'b6273849-f9a0-41c2-9de4-f5a6b7c8d9e0',
        sessionId: S2,
        timestampMs: ts('2026-11-28T10:00:00.000Z'),
        window: 'seven_day',
        resetsAtMs: 1_796_182_920_000,
        message: "You've hit your weekly limit · resets Dec 2, 3:42am (UTC)",
      }),
    ],
  ];

  it.each(cases)('line %i: %s', (lineNo, _what, expected) => {
    expect(parseLine(VARIANTS_FILE, lineNo)).toEqual(expected);
  });

  it('covers every line of the fixture', () => {
    expect(lines(VARIANTS_FILE)).toHaveLength(cases.length);
  });

  it('a subagent transcript without sessionId belongs to the parent session', () => {
    const r = parseLine(SUBAGENT_FILE, 1);
    expect(r.kind === 'usage' && [r.usage.sessionId, r.usage.model, r.usage.inputTokens]).toEqual([S2, 'claude-haiku-4-5', 120]);
  });
});

describe('parseClaudeTranscriptLine: malformed input never throws', () => {
  const cases: Array<[lineNo: number, what: string, message: RegExp]> = [
    [1, 'garbage', /line is not valid JSON/],
    [2, 'a JSON array', /line is JSON but not a record object \(array\)/],
    [3, 'JSON null', /not a record object \(null\)/],
    [4, 'an object without type', /record has no "type" field/],
    [5, 'message is a string', /assistant record: message: /],
    [6, 'usage without message.id', /assistant record \(claude-opus-5-5\) has usage but no message\.id/],
    [7, 'negative token count', /assistant record: message\.usage\.input_tokens: /],
    [8, 'assistant without timestamp', /assistant record msg_01GhIjKlMnOpQrStUvWxYzAb has no valid timestamp/],
    [9, 'no sessionId and a file name that is no uuid', /has no sessionId and the file name is not a session uuid/],
    [10, 'real model without usage', /assistant record \(claude-opus-5-5\) has no message\.usage/],
    [11, 'user without timestamp', /user record has no valid timestamp/],
    [12, 'user with a bad timestamp', /user record has no valid timestamp/],
    [13, 'user without cwd', /user record has no cwd/],
    [14, 'limit record with neither uuid nor requestId', /usage-limit record has neither uuid nor requestId/],
    [15, 'truncated line', /line is not valid JSON/],
  ];

  it.each(cases)('line %i: %s', (lineNo, _what, message) => {
    const r = parseLine(MALFORMED_FILE, lineNo);
    expect(r.kind).toBe('error');
    if (r.kind !== 'error') return;
    expect(r.message).toMatch(message);
    expect(r.message.startsWith(`claude transcript ${MALFORMED_FILE}: `)).toBe(true);
    expect(r.message).not.toContain('\n');
  });

  it('covers every line of the fixture', () => {
    expect(lines(MALFORMED_FILE)).toHaveLength(cases.length);
  });

  const blanks: Array<[string, string]> = [
    ['empty', ''],
    ['spaces', '   '],
    ['CR', '\r'],
  ];
  it.each(blanks)('a blank line (%s) is ignored', (_what, line) => {
    expect(parseClaudeTranscriptLine(line, { filePath: 'x.jsonl' })).toEqual(IGNORED);
  });

  it('a CRLF line parses like its LF twin', () => {
    const line = lines(SESSION_FILE)[1] ?? '';
    expect(parseClaudeTranscriptLine(`${line}\r`, { filePath: SESSION_FILE })).toEqual(
      parseClaudeTranscriptLine(line, { filePath: SESSION_FILE }),
    );
  });
});

describe('sessionIdFromTranscriptPath', () => {
  const cases: Array<[string, string | null]> = [
    [`/home/u/.claude/projects/-path-to-proj/${S1}.jsonl`, S1],
    [`${S1}.jsonl`, S1],
    [`/home/u/.claude/projects/-home-u-my-proj/${S2}/subagents/agent-a7f3c2e1.jsonl`, S2],
    [`C:\\Users\\u\\.claude\\projects\\C--proj\\${S1}.jsonl`, S1],
    ['/home/u/.claude/projects/-path-to-proj/notes.jsonl', null],
    [`/home/u/.claude/projects/-path-to-proj/${S1}-copy.jsonl`, null],
    [`/home/u/.claude/projects/-path-to-proj/${S1}.jsonl.bak`, null],
    [`/home/u/.claude/projects/${S1}/memory/notes.jsonl`, null],
    ['', null],
  ];
  it.each(cases)('%s → %s', (path, expected) => {
    expect(sessionIdFromTranscriptPath(path)).toBe(expected);
  });
});

describe('parseClaudeTranscriptLine: a record read without its content blocks', () => {
  /** Every Claude Code line the tests hold: the fixtures here and the ones the end-to-end tests replay. */
  const corpus = (): string[] => {
    const files = [SESSION_FILE, VARIANTS_FILE, SUBAGENT_FILE, MALFORMED_FILE];
    return files.flatMap((f) => lines(f));
  };
  const both = (line: string) => ({
    lean: parseClaudeTranscriptLine(line, { filePath: SESSION_FILE }),
    whole: parseClaudeTranscriptLine(line, { filePath: SESSION_FILE, wholeLine: true }),
  });
  /** A reply as Claude Code writes it (shared/facts/claude-code.md §4: the session's fields after the message). */
  const reply = (content: string, extra = '', model = 'claude-opus-4-1-20250805') =>
    `{"parentUuid":null,"isSidechain":false,"message":{"id":"msg_01","type":"message","role":"assistant","model":"${model}","content":${content},"stop_reason":null,"usage":{"input_tokens":3,"cache_creation_input_tokens":10,"cache_read_input_tokens":20,"output_tokens":7,"service_tier":"standard"}},"requestId":"req_01","type":"assistant","uuid":"u1","timestamp":"2026-11-19T03:14:10.370Z"${extra},"cwd":"/p","sessionId":"${S1}","version":"2.1.3"}`;

  it('reads every fixture line as the whole line reads it, and each of their prefixes too', () => {
    let compared = 0;
    for (const line of corpus()) {
      for (const cut of [line.length, ...Array.from({ length: 40 }, (_, i) => Math.floor((line.length * i) / 40))]) {
        const { lean, whole } = both(line.slice(0, cut));
        expect(lean).toEqual(whole);
        compared++;
      }
    }
    expect(compared).toBeGreaterThan(1000);
  });

  it.each([
    ['text and tool_use blocks', '[{"type":"text","text":"a \\"quoted\\" \\\\ path"},{"type":"tool_use","id":"t","name":"Bash","input":{"command":"ls","content":[1,{"usage":2}]}}]'],
    ['a thinking block with escapes of every kind', '[{"type":"thinking","thinking":"\\u00e9\\n\\t\\/\\b\\f\\r end \\\\","signature":"abc"}]'],
    ['a string content', '"just text"'],
    ['an empty array', '[]'],
    ['a text ending in a backslash', '[{"type":"text","text":"ends \\\\\\\\"}]'],
    ['numbers and literals in a tool input', '[{"type":"tool_use","input":{"n":-1.5e3,"t":true,"f":false,"z":null}}]'],
  ])('a reply with %s gives the same usage read either way', (_what, content) => {
    const { lean, whole } = both(reply(content));
    expect(whole.kind).toBe('usage');
    expect(lean).toEqual(whole);
  });

  it.each([
    ['a raw control character in a string', '[{"type":"text","text":"a\u0001b"}]'],
    ['an unknown escape', '[{"type":"text","text":"a\\qb"}]'],
    ['an unclosed string', '[{"type":"text","text":"ab}]'],
    ['mismatched brackets', '[{"type":"text","text":"ab"]}'],
    ['a bare word', '[{"type":"text","text":oops}]'],
  ])('a reply whose content has %s is reported as the whole line reports it', (_what, content) => {
    const { lean, whole } = both(reply(content));
    expect(whole.kind).toBe('error');
    expect(lean).toEqual(whole);
  });

  it('reads the content where it is needed: a limit record, Claude Code\'s own records, a second message or content key', () => {
    const limit = reply('[{"type":"text","text":"Claude AI usage limit reached"}]', ',"apiError":"usage_limit_reached","isApiErrorMessage":true,"apiErrorParams":{"rate_limit_info":{"rateLimitType":"five_hour","resetsAt":1764000000}}');
    const legacy = reply('[{"type":"text","text":"Claude AI usage limit reached|1764000000"}]', ',"isApiErrorMessage":true', '<synthetic>');
    const twice = reply('[]').replace('"requestId"', '"message":{"id":"msg_02","model":"claude-sonnet-4-5","content":[],"usage":{"output_tokens":99}},"requestId"');
    const doubled = reply('[{"type":"text","text":"x"}],"content":[{"type":"text","text":"y"}]');
    const escapedKey = reply('[]').replace('"parentUuid":null', '"x\\"content":[1],"parentUuid":null');
    for (const line of [limit, legacy, twice, doubled, escapedKey]) {
      const { lean, whole } = both(line);
      expect(lean).toEqual(whole);
    }
    expect(both(limit).lean).toMatchObject({ kind: 'wall', wall: { window: 'five_hour', message: 'Claude AI usage limit reached' } });
    expect(both(legacy).lean).toMatchObject({ kind: 'wall', wall: { resetsAtMs: 1764000000000 } });
    expect(both(twice).lean).toMatchObject({ kind: 'usage', usage: { dedupKey: 'msg_02:req_01', outputTokens: 99 } });
  });

  it('a content that is not JSON but balances is read past: its usage counts (the one way the two reads differ)', () => {
    const { lean, whole } = both(reply('[{"type":"text" "text":"no colon"}]'));
    expect(whole.kind).toBe('error');
    expect(lean).toMatchObject({ kind: 'usage', usage: { dedupKey: 'msg_01:req_01', outputTokens: 7 } });
  });
});
