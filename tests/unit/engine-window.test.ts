import { describe, expect, it } from 'vitest';
import { terminalArgv } from '../../musher/engine/runner-terminal.js';
import { renderEvent } from '../../musher/engine/run-window.js';

describe("a node's window", () => {
  it.each<[string, string[], string[]]>([
    ['{run} replaced by the wrapper', ['gnome-terminal', '--', '{run}'], ['gnome-terminal', '--', 'node', 'cli.js', 'engine', 'run-window', '/r/1']],
    ['arguments after {run} kept after it', ['kitty', '{run}', '--hold'], ['kitty', 'node', 'cli.js', 'engine', 'run-window', '/r/1', '--hold']],
    ['no {run}: the wrapper goes at the end', ['xterm', '-e'], ['xterm', '-e', 'node', 'cli.js', 'engine', 'run-window', '/r/1']],
  ])('the terminal command: %s', (_name, template, want) => {
    expect(terminalArgv(template, ['node', 'cli.js', 'engine', 'run-window', '/r/1'])).toEqual(want);
  });

  it('shows one plain line per event, with nothing of the stream that a terminal would act on', () => {
    expect(renderEvent({ kind: 'tool_call', name: 'Bash\u001b]0;owned\u0007', callId: null })).toBe('tool Bash ]0;owned');
    expect(renderEvent({ kind: 'usage', inputTokens: 6182, outputTokens: 41, cacheReadTokens: 4000, cacheWriteTokens: 200 })).toBe('usage 6,182 in · 41 out · 4,000 cache read · 200 cache write');
    expect(renderEvent({ kind: 'turn_completed', sessionId: null, ok: false, text: 'API error\nretry later' })).toBe('failed: API error retry later');
    expect(renderEvent({ kind: 'question', text: 'Which table?' })).toBe('asks: Which table?');
    expect(renderEvent({ kind: 'ignored' })).toBeNull();
  });
});
