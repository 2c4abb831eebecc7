import { describe, expect, it } from 'vitest';
import { keptHookFields, type KeptHookFields } from '../../core/hook-fields.js';

const PATCH = '*** Begin Patch\n*** Update File: src/e.ts\n@@\n-x\n+SECRET\n*** Add File: src/f.ts\n+z\n*** End Patch';

describe('what musher keeps of a hook event', () => {
  it.each<[string, string, unknown, KeptHookFields]>([
    ['a Write: the tool and its file; not the content nor the response', 'PostToolUse',
      { session_id: 's', tool_name: 'Write', tool_input: { file_path: '/r/a.ts', content: 'SECRET' }, tool_response: { content: 'SECRET' } }, { tool: 'Write', files: ['/r/a.ts'] }],
    ['an Edit', 'PostToolUse', { tool_name: 'Edit', tool_input: { file_path: '/r/b.ts', old_string: 'x', new_string: 'SECRET' } }, { tool: 'Edit', files: ['/r/b.ts'] }],
    ['a NotebookEdit', 'PostToolUse', { tool_name: 'NotebookEdit', tool_input: { notebook_path: '/r/n.ipynb', new_source: 'SECRET' } }, { tool: 'NotebookEdit', files: ['/r/n.ipynb'] }],
    ["Codex's apply_patch: the files named, not the patch", 'PostToolUse', { tool_name: 'apply_patch', tool_input: { command: PATCH }, tool_response: 'Success' }, { tool: 'apply_patch', files: ['src/e.ts', 'src/f.ts'] }],
    ['a Bash: the tool only (no command, no output)', 'PostToolUse', { tool_name: 'Bash', tool_input: { command: 'cat SECRET' }, tool_response: { stdout: 'SECRET' } }, { tool: 'Bash' }],
    ['a Read changes no file', 'PostToolUse', { tool_name: 'Read', tool_input: { file_path: '/r/c.ts' }, tool_response: { file: { content: 'SECRET' } } }, { tool: 'Read' }],
    ['a PreToolUse: the tool, never files', 'PreToolUse', { tool_name: 'Write', tool_input: { file_path: '/r/a.ts', content: 'SECRET' } }, { tool: 'Write' }],
    ['a prompt: nothing', 'UserPromptSubmit', { session_id: 's', prompt: 'SECRET' }, {}],
    ['a StopFailure: nothing', 'StopFailure', { session_id: 's', error: 'rate_limit', last_assistant_message: 'SECRET' }, {}],
    ['an Edit without a path', 'PostToolUse', { tool_name: 'Edit', tool_input: { file_path: '' } }, { tool: 'Edit' }],
    ['not an object', 'PostToolUse', 'SECRET', {}],
    ['null', 'PostToolUse', null, {}],
  ])('%s', (_name, event, payload, kept) => {
    expect(keptHookFields(event, payload)).toEqual(kept);
    expect(JSON.stringify(keptHookFields(event, payload))).not.toContain('SECRET');
  });
});
