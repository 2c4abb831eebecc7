import { describe, expect, it } from 'vitest';
import { blockWith, carryOnWithNote } from '../../musher/hook-answers.js';
import { carryOnWithContext } from '../../musher/questions/hook-answer.js';
import { handOffSession, type SessionHandoffDeps } from '../../musher/handoff/session-handoff.js';
import type { SessionRow } from '../../musher/store/sessions.js';

/**
 * Issue 13: a harness name sleds does not know (a hook run with `--harness aider`, a row written by a newer
 * sleds) is reported, never taken for Claude Code.
 */

const SID = '1098c2f4-6a5e-4a8e-9a57-1f3c9d7e2b10';

describe('a hook answer for a harness sleds does not know', () => {
  it('is the bare answer every harness accepts, not Claude Code dialect', () => {
    expect(JSON.parse(blockWith('sled: handled 5', 'aider').stdout)).toEqual({ decision: 'block', reason: 'sled: handled 5' });
    expect(carryOnWithNote('a note', 'aider')).toEqual({ stdout: '', exitCode: 0 });
    expect(JSON.parse(carryOnWithContext('ctx', 'a note', 'aider').stdout)).toEqual({ hookSpecificOutput: { hookEventName: 'UserPromptSubmit', additionalContext: 'ctx' } });
  });

  it.each([
    ['claude-code', { decision: 'block', reason: 'r', hookSpecificOutput: { hookEventName: 'UserPromptSubmit', suppressOriginalPrompt: true } }],
    ['codex', { decision: 'block', reason: 'r' }],
  ] as const)('%s keeps its own dialect', (harness, answer) => {
    expect(JSON.parse(blockWith('r', harness).stdout)).toEqual(answer);
  });
});

describe('a mid-work hand-off of a session stored under an unknown harness', () => {
  it('is refused in one line naming the harness, before anything is snapshotted or sent', async () => {
    const session: SessionRow = { sessionId: SID, harness: 'aider', cwd: '/home/sam/shop', transcriptPath: null, model: null, firstSeenAt: 0, lastSeenAt: 0, endedAt: null, endReason: null };
    const calls: string[] = [];
    const deps: SessionHandoffDeps = {
      handoff: { send: async () => (calls.push('send'), Promise.reject(new Error('not reached'))) },
      session: () => session,
      wallOf: () => null,
      takeAtWall: async () => ({ ok: false, line: 'not reached' }),
      snapshot: async () => (calls.push('snapshot'), { id: 'snap-1', note: null }),
      ownerFor: async () => null,
      log: { info: () => {}, warn: () => {}, error: () => {} },
    };
    expect(await handOffSession(deps, SID, 'dana')).toEqual({ ok: false, line: "sled: hand-off not sent: unknown harness 'aider' — sleds knows claude-code, codex, gemini-cli, opencode, cursor-agent" });
    expect(calls).toEqual([]);
  });
});
