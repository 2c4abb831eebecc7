import { describe, expect, it } from 'vitest';
import { budgetFor } from '../../hooks/budget.js';

const prompt = (text: string): string => JSON.stringify({ session_id: 's', hook_event_name: 'UserPromptSubmit', prompt: text });

describe("how long a hook waits for musher", () => {
  it.each([
    ['an ordinary prompt', 'UserPromptSubmit', prompt('fix the login test'), 2_000],
    ['/sled status', 'UserPromptSubmit', prompt('/sled status'), 2_000],
    ['/sled 5 dana (seals the snapshot)', 'UserPromptSubmit', prompt('/sled 5 dana'), 9_000],
    ['/sled pickup <id> (fetches and checks out)', 'UserPromptSubmit', prompt('/sled pickup jd7k2m9qa45p'), 9_000],
    ['/sled handoff dana (snapshots and seals)', 'UserPromptSubmit', prompt('/sled handoff dana'), 9_000],
    ['/sleds:sled hand-off', 'UserPromptSubmit', prompt('/sleds:sled hand-off'), 9_000],
    ['sled handoff, as typed in Codex', 'UserPromptSubmit', prompt('sled handoff'), 9_000],
    ['a prompt that only mentions handoff', 'UserPromptSubmit', prompt('write the handoff doc'), 2_000],
    ['a tool call', 'PostToolUse', '{"tool_name":"Bash"}', 1_000],
  ])('%s', (_what, event, raw, ms) => {
    expect(budgetFor(event, raw)).toBe(ms);
  });
});
