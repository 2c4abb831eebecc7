import { describe, expect, it } from 'vitest';
import { eachCase } from '../support/each-case.js';
import { sessionOf } from '../../mcp-server/session.js';
import { runTool, TOOL_INPUTS, type ToolName } from '../../mcp-server/tools.js';
import type { MusherApi } from '../../mcp-server/musher-api.js';

/** A musher that must never be asked: arguments that fail their schema are refused before any call. */
const unreachable: MusherApi = {
  call: () => {
    throw new Error('musher was called for arguments that should have been refused');
  },
};

describe('MCP tool inputs', () => {
  eachCase<[ToolName, Record<string, unknown>, boolean]>([
    ['intake', { title: 'Fix the login test' }, true],
    ['intake', { title: 'Fix it', worth: 'HIGH', type: 'bugfix', prompt: 'long text', unknownField: 1 }, true],
    ['intake', { title: '   ' }, false],
    ['intake', { title: 'Fix it', type: 'two words' }, false],
    ['estimate', {}, true],
    ['estimate', { taskId: 'hx3v' }, true],
    ['estimate', { taskId: 'hx' }, false],
    ['estimate', { text: 'Port the exporter', type: 'feature', model: 'claude-opus-5-5' }, true],
    ['dispatch', { row: 2 }, true],
    ['dispatch', { row: -1 }, false],
    ['dispatch', { row: 0 }, false],
    ['dispatch', { row: 1.5 }, false],
    ['dispatch', { verb: 'Queue' }, true],
    ['status', {}, true],
    ['handoff', { limit: 3 }, true],
    ['handoff', { limit: 0 }, false],
    ['handoff', { to: 'dana' }, true],
    ['handoff', { to: '@dana' }, true],
    ['handoff', { to: 'dana smith' }, false],
    ['handoff', { now: true }, true],
    ['pickup', { id: 'jd7k2m9qa45p' }, true],
    ['pickup', { id: 'not an id!' }, false],
    ['pickup', {}, false],
    ['park', { question: 'Keep v1?', options: ['Keep it: band $4–11', 'Drop it: band $2–6'] }, true],
    ['park', { question: 'Keep v1?', options: ['Keep it: band $4–11'] }, false],
    ['park', { question: 'Keep v1?', options: ['a choice', 'b choice', 'c choice'] }, false],
    ['park', { question: 'Keep v1?', options: 'A or B' }, false],
    ['answer', { questionId: 'jd7k2m9qa45p', choice: 'a' }, true],
    ['answer', { questionId: 'jd7k2m9qa45p', choice: '2' }, true],
    ['answer', { questionId: 'jd7k2m9qa45p', choice: 'C' }, false],
    ['answer', { choice: 'A' }, false],
  ])('%s %j valid: %s', (tool, args, valid) => {
    expect(TOOL_INPUTS[tool].safeParse(args).success).toBe(valid);
  });

  it('refuses bad arguments with what to fix, as an error result, before asking musher', async () => {
    const ctx = { api: unreachable, sessionId: 's1', cwd: '/tmp' };
    expect(await runTool('park', { question: 'Keep v1?', options: ['a choice', 'b choice', 'c choice'] }, ctx)).toEqual({
      isError: true,
      text: 'sleds park: options: options holds exactly two sentences: [A, B]',
    });
    expect(await runTool('answer', { questionId: 'jd7k2m9qa45p', choice: 'maybe' }, ctx)).toEqual({ isError: true, text: 'sleds answer: choice: choose A or B' });
    expect(await runTool('intake', {}, ctx)).toMatchObject({ isError: true, text: expect.stringMatching(/^sleds intake: title: /) });
  });
});

describe('the calling session', () => {
  it.each([
    ['Codex turn metadata', { 'x-codex-turn-metadata': { session_id: 'th-1' }, sessionId: 'other' }, {}, 'th-1'],
    ['Codex sessionId', { sessionId: 'th-2', threadId: 'th-3' }, {}, 'th-2'],
    ['Codex threadId', { threadId: 'th-3' }, {}, 'th-3'],
    ["Claude Code's environment", { 'claudecode/toolUseId': 'toolu_1' }, { CLAUDE_CODE_SESSION_ID: 'cc-1' }, 'cc-1'],
    ['the request before the environment', { sessionId: 'th-4' }, { CLAUDE_CODE_SESSION_ID: 'cc-1' }, 'th-4'],
    ['nothing', undefined, {}, null],
    ['blank values', { sessionId: '  ' }, { CLAUDE_CODE_SESSION_ID: '' }, null],
  ])('%s', (_what, meta, env, want) => {
    expect(sessionOf(meta as Record<string, unknown> | undefined, env)).toBe(want);
  });
});
