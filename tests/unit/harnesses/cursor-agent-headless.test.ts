import { describe, expect, it } from 'vitest';
import { parseCursorHeadlessLine, readCursorOutput } from '../../../harnesses/cursor-agent/headless.js';

const S = '6f1c2b9e-4d3a-4e8b-9c7d-2a1b0c9d8e7f';

describe('cursor-agent stream-json (documented format), line by line', () => {
  it.each([
    ['init', { type: 'system', subtype: 'init', session_id: S, model: 'GPT-5' }, [{ kind: 'turn_started', sessionId: S, model: 'GPT-5' }]],
    ['a shell call starting', { type: 'tool_call', subtype: 'started', call_id: 'c1', tool_call: { shellToolCall: { args: { command: 'ls' } } } }, [{ kind: 'tool_call', name: 'shell', callId: 'c1' }]],
    ['the same call completing', { type: 'tool_call', subtype: 'completed', call_id: 'c1', tool_call: { shellToolCall: { result: {} } } }, [{ kind: 'ignored' }]],
    ['a call under a key of another form', { type: 'tool_call', subtype: 'started', tool_call: { mcp__linear__get_issue: {} } }, [{ kind: 'tool_call', name: 'mcp__linear__get_issue', callId: null }]],
    ['a call with nothing under it', { type: 'tool_call', subtype: 'started', tool_call: {} }, [{ kind: 'ignored' }]],
    ['success', { type: 'result', subtype: 'success', is_error: false, result: 'done', session_id: S }, [{ kind: 'turn_completed', sessionId: S, ok: true, text: 'done' }]],
    ['an error result', { type: 'result', subtype: 'error', is_error: true, session_id: S }, [{ kind: 'turn_completed', sessionId: S, ok: false, text: null }]],
    ['assistant text', { type: 'assistant', message: { content: [{ type: 'text', text: 'hi' }] } }, [{ kind: 'ignored' }]],
  ] as const)('%s', (_what, record, events) => {
    expect(parseCursorHeadlessLine(JSON.stringify(record))).toEqual(events);
  });

  it('a truncated line is an error event, a huge one is read whole', () => {
    expect(parseCursorHeadlessLine('{"type":"system","subtype":"in').map((e) => e.kind)).toEqual(['error']);
    const huge = JSON.stringify({ type: 'tool_call', subtype: 'started', call_id: 'big', tool_call: { writeToolCall: { args: { fileText: 'x'.repeat(3_000_000) } } } });
    expect(parseCursorHeadlessLine(huge)).toEqual([{ kind: 'tool_call', name: 'write', callId: 'big' }]);
  });

  it('a run that stopped without a result says neither success nor failure; nothing readable is null', () => {
    expect(readCursorOutput(JSON.stringify({ type: 'system', subtype: 'init', session_id: S }))).toEqual({ text: null, isError: null, sessionId: S, costUsd: null, error: null });
    expect(readCursorOutput('Error: not logged in\n')).toBeNull();
  });
});
