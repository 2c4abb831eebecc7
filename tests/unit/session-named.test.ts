import { describe, expect, it } from 'vitest';
import { sessionNamedIn, type HarnessEvent } from '../../harnesses/events.js';

const started = (sessionId: string | null): HarnessEvent => ({ kind: 'turn_started', sessionId, model: null });
const completed = (sessionId: string | null): HarnessEvent => ({ kind: 'turn_completed', sessionId, ok: true, text: null });
const tool: HarnessEvent = { kind: 'tool_call', name: 'write_file', callId: null };

describe('the session a run named', () => {
  it.each<[string, HarnessEvent[], string | null]>([
    ['nothing read yet', [], null],
    ['a start that names none (a harness that names it later)', [started(null), tool], null],
    ['named at the start', [started('s-1'), tool], 's-1'],
    ['named only at the end of the turn', [started(null), tool, completed('s-2')], 's-2'],
    ['a start without a name after one with it keeps the name', [started('s-1'), started(null)], 's-1'],
    ['renamed (a resume that forked): the last name', [started('s-1'), completed('s-3')], 's-3'],
    ['an empty name is no name', [started('s-1'), completed('')], 's-1'],
  ])('%s', (_what, events, expected) => {
    expect(sessionNamedIn(events)).toBe(expected);
  });
});
