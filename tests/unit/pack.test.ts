import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildPack, claudePackEvents, codexPackEvents, isUsersOwnPrompt, PACK_LIMITS, PackSchema, renderPack, type PackEvent } from '../../core/pack.js';

const FIX = join(import.meta.dirname, '..', 'fixtures');
const lines = (path: string): string[] => readFileSync(join(FIX, path), 'utf8').split('\n');

const CLAUDE_PACK = 'pack/claude/projects/-home-u-shop/7f3e9a21-4c8b-4d2e-9f10-2b3c4d5e6f70.jsonl';
const CODEX_PLAN = 'pack/codex/sessions/2026/11/30/rollout-2026-11-30T11-00-00-019ad5a0-1c2d-7e3f-8a4b-5c6d7e8f9a01.jsonl';
const REC = 'codex/recorded/sessions/2026/11/29';
const P = `${REC}/rollout-2026-11-29T22-19-26-01a22964-438c-70b2-8697-769347912c2f.jsonl`;
const C = `${REC}/rollout-2026-11-29T22-19-28-01a22964-4bb3-7613-872c-967096509ffe.jsonl`;
const G = `${REC}/rollout-2026-11-29T22-19-28-01a22964-4d09-7693-8e3c-d29fd7ca1ff9.jsonl`;
const LEGACY = 'codex/sessions/2026/11/28';

const texts = (xs: Array<{ text: string }>) => xs.map((x) => x.text);

describe('pack from a Claude Code transcript', () => {
  const pack = buildPack(claudePackEvents(lines(CLAUDE_PACK)));

  it('keeps the user’s own prompts only: first, and the latest three after it', () => {
    expect(pack.firstPrompt?.text).toBe('add a read-through cache to the price lookup');
    expect(pack.firstPrompt?.atMs).toBe(Date.parse('2026-11-30T10:00:01.500Z'));
    expect(texts(pack.latestPrompts)).toEqual(['keep them until the price file changes', 'also log cache misses at debug level', 'run the tests before you go on']);
    // Not prompts: tool results, /review and its expansion, /model's caveat and stdout, the hook's context, /sled,
    // the interruption, Claude Code's continue prompt at the reset, the half-written last line.
    expect(pack.promptCount).toBe(4);
  });

  it('takes the last assistant text, not a limit notice or a sub-agent’s', () => {
    expect(pack.lastAssistant?.text).toBe('Continuing: 2 of 14 cache tests fail on the expiry path.');
  });

  it('takes the latest TodoWrite list', () => {
    expect(pack.todos).toEqual([
      { text: 'Add the cache table', status: 'completed' },
      { text: 'Read through the cache in price()', status: 'completed' },
      { text: 'Log cache misses at debug level', status: 'in_progress' },
      { text: 'Test the cache', status: 'pending' },
    ]);
  });

  it('records decisions: the AskUserQuestion answer and the reply to a turn that ended in a question', () => {
    expect(pack.decisions.map((d) => [d.via, d.question, d.answer])).toEqual([
      ['ask', 'Which store should back the cache?', 'SQLite'],
      ['reply', 'Should the cache expire entries after an hour, or keep them until the price file changes?', 'keep them until the price file changes'],
    ]);
  });

  it('is a valid pack', () => {
    expect(PackSchema.safeParse(pack).success).toBe(true);
  });

  it('the real captured transcript: the prompt, the reply, and the limit record ignored', () => {
    const real = buildPack(claudePackEvents(lines('claude/projects/-path-to-proj/1098c3a4-5b2e-4f7a-9d61-0c3e8a7b2f45.jsonl')));
    expect(real.firstPrompt?.text).toBe('list the files and tell me what this project is');
    expect(texts(real.latestPrompts)).toEqual(['hello when rejected']);
    expect(real.lastAssistant?.text).not.toMatch(/hit your 5-hour limit/);
    expect(real.todos).toBeNull();
  });

  it('a half-written last line is ignored; the same line completed is a prompt', () => {
    const half = '{"type":"user","message":{"role":"user","content":"finish the migra';
    const whole = '{"type":"user","message":{"role":"user","content":"finish the migration"},"timestamp":"2026-11-30T12:00:00.000Z"}';
    const base = lines(CLAUDE_PACK).slice(0, -1);
    expect(buildPack(claudePackEvents([...base, half])).promptCount).toBe(4);
    expect(buildPack(claudePackEvents([...base, whole])).latestPrompts.at(-1)?.text).toBe('finish the migration');
  });

  it('AskUserQuestion answers are read from the result text when toolUseResult has none', () => {
    const events = claudePackEvents([
      JSON.stringify({ type: 'assistant', message: { model: 'claude-opus-5-5', content: [{ type: 'tool_use', id: 't1', name: 'AskUserQuestion', input: { questions: [] } }] } }),
      JSON.stringify({ type: 'user', message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: [{ type: 'text', text: 'User has answered your questions: "Ship today?"="Yes, behind a flag", "Who reviews?"="Dana". You can now continue with the user\'s answers in mind.' }] }] } }),
    ]);
    expect(buildPack(events).decisions.map((d) => `${d.question}=${d.answer}`)).toEqual(['Ship today?=Yes, behind a flag', 'Who reviews?=Dana']);
  });
});

describe('pack from Codex rollouts', () => {
  it('a 0.169 thread: prompts without the harness’s and hooks’ context, update_plan todos, the question answered', () => {
    const pack = buildPack(codexPackEvents([lines(CODEX_PLAN)]));
    expect(pack.firstPrompt?.text).toBe('split the parser into a lexer and a parser');
    expect(texts(pack.latestPrompts)).toEqual(['move them to tests/parser.test.ts']);
    expect(pack.todos).toEqual([
      { text: 'Move tokenising into lexer.ts', status: 'completed' },
      { text: 'Make parser.ts read tokens', status: 'completed' },
      { text: 'Run the parser tests', status: 'in_progress' },
    ]);
    expect(pack.decisions).toEqual([
      { question: 'Should the parser tests move to tests/parser.test.ts, or stay beside the code?', answer: 'move them to tests/parser.test.ts', atMs: expect.any(Number), via: 'reply' },
    ]);
    expect(pack.lastAssistant?.text).toBe('Tests moved; running them.');
  });

  it('a paginated fork of a fork: the ancestors’ history up to each fork point, then its own', () => {
    const pack = buildPack(codexPackEvents([lines(P), lines(C), lines(G)]));
    expect(pack.firstPrompt?.text).toBe('hello one');
    // "third turn" was typed in the parent after the fork: not this thread's history.
    expect(texts(pack.latestPrompts)).toEqual(['second turn', 'forked prompt', 'fork of fork']);
    expect(pack.lastAssistant?.text).toBe('fake reply #3 to: fork of fork');
  });

  it('the parent alone has its own later turn', () => {
    const pack = buildPack(codexPackEvents([lines(P)]));
    expect(texts(pack.latestPrompts)).toEqual(['second turn', 'third turn']);
  });

  it('an older Codex (user_message events, legacy fork copies): read from its own file, no duplicates', () => {
    const legacyFork = lines(`${LEGACY}/rollout-2026-11-28T09-30-00-019acbb9-2e3f-7041-9b52-c3d4e5f6a702.jsonl`);
    const parent = lines(`${LEGACY}/rollout-2026-11-28T09-00-00-019acb9c-1d2e-7f30-8a41-b2c3d4e5f601.jsonl`);
    const pack = buildPack(codexPackEvents([parent, legacyFork]));
    expect(pack.firstPrompt?.text).toBe('why is CI red?');
    expect(texts(pack.latestPrompts)).toEqual(['remove it', 'try another way']);
    expect(pack.promptCount).toBe(3);
  });

  it('the live rollout with a half-written last line', () => {
    const pack = buildPack(codexPackEvents([lines('codex/sessions/2026/11/29/rollout-2026-11-29T21-00-00-019ad128-3e1f-7b62-a4c5-0d9e8f7a6b5c.jsonl')]));
    expect(pack.firstPrompt?.text).toBe('summarise the diff');
  });
});

describe('skip rules', () => {
  const table: Array<[string, boolean]> = [
    ['fix the flaky test', true],
    ['/sled 1', false],
    ['/sled:sled status', false],
    ['/sleds:sled status', false],
    ['sled status', false],
    ['sled the dogs to the cabin', true],
    ['<command-name>/review</command-name>', false],
    ['<command-message>review is running…</command-message>\n<command-name>/review</command-name>', false],
    ['<local-command-stdout>Set model</local-command-stdout>', false],
    ['<user-prompt-submit-hook>ctx</user-prompt-submit-hook>', false],
    ['<system-reminder>x</system-reminder>', false],
    ['[Request interrupted by user for tool use]', false],
    ['Your claude.ai usage limit has reset. Continue the task you were working on when the limit was reached; do not repeat work that is already complete.', false],
    ['<environment_context>\n<cwd>/x</cwd></environment_context>', false],
    ['# AGENTS.md instructions for /home/u/proj', false],
    ['   ', false],
  ];
  it.each(table)('%j → a prompt: %s', (text, own) => {
    expect(isUsersOwnPrompt(text)).toBe(own);
  });
});

describe('caps and the fold', () => {
  it('caps prompts, the assistant message, todos and decisions, marking what was cut', () => {
    const long = 'x'.repeat(PACK_LIMITS.prompt + 50);
    const events: PackEvent[] = [
      { kind: 'prompt', text: long, atMs: 1 },
      { kind: 'assistant', text: `${'y'.repeat(PACK_LIMITS.assistant)} and more?`, atMs: 2 },
      { kind: 'prompt', text: 'z'.repeat(PACK_LIMITS.answer + 10), atMs: 3 },
      ...Array.from({ length: PACK_LIMITS.decisions + 5 }, (_, i): PackEvent => ({ kind: 'answers', pairs: [{ question: `q${i}`, answer: `a${i}` }], atMs: 10 + i })),
    ];
    const pack = buildPack(events);
    expect(pack.firstPrompt?.text.length).toBe(PACK_LIMITS.prompt);
    expect(pack.firstPrompt?.truncated).toBe(true);
    expect(pack.firstPrompt?.text.endsWith('…')).toBe(true);
    expect(pack.lastAssistant?.truncated).toBe(true);
    expect(pack.decisions).toHaveLength(PACK_LIMITS.decisions);
    expect(pack.decisions.at(-1)?.question).toBe(`q${PACK_LIMITS.decisions + 4}`);
    const reply = buildPack(events.slice(0, 3)).decisions[0]!;
    expect(reply.via).toBe('reply');
    expect(reply.answer.length).toBe(PACK_LIMITS.answer);
    expect(reply.question.endsWith('…')).toBe(true);
  });

  it('a tool call after the question means the turn did not end on it', () => {
    const pack = buildPack([
      { kind: 'prompt', text: 'go', atMs: 1 },
      { kind: 'assistant', text: 'Shall I run the tests?', atMs: 2 },
      { kind: 'tool' },
      { kind: 'assistant', text: 'All green.', atMs: 3 },
      { kind: 'prompt', text: 'ship it', atMs: 4 },
    ]);
    expect(pack.decisions).toEqual([]);
  });

  it('an empty transcript gives an empty pack', () => {
    expect(buildPack(claudePackEvents([]))).toEqual({ firstPrompt: null, latestPrompts: [], promptCount: 0, lastAssistant: null, todos: null, decisions: [] });
  });
});

describe('renderPack', () => {
  it('renders the brief: asked, done, diff, decisions, left', () => {
    const pack = buildPack(claudePackEvents(lines(CLAUDE_PACK)));
    const md = renderPack(pack, {
      title: 'Brief: session 7f3e9a21',
      diff: { branch: 'cache', head: 'a'.repeat(40), files: [{ path: 'src/prices.ts', added: 12, deleted: 3 }, { path: 'logo.png', added: null, deleted: null }], untracked: [{ path: 'src/cache.ts', bytes: 812 }], cutNote: 'Left out: big.bin (25.0 MB, over the 20.0 MB cap).' },
    });
    expect(md).toContain('# Brief: session 7f3e9a21');
    expect(md).toContain('## What was asked\n\n> add a read-through cache to the price lookup');
    expect(md).toContain('> run the tests before you go on');
    expect(md).toContain('- Add the cache table');
    expect(md).toContain('> Continuing: 2 of 14 cache tests fail on the expiry path.');
    expect(md).toContain('## The diff (against branch `cache` at `aaaaaaaaaaaa`)');
    expect(md).toContain('- `src/prices.ts` +12 −3');
    expect(md).toContain('- `logo.png` binary');
    expect(md).toContain('- `src/cache.ts` new, not yet tracked (812 bytes)');
    expect(md).toContain('_Left out: big.bin (25.0 MB, over the 20.0 MB cap)._');
    expect(md).toContain('- Which store should back the cache? → **SQLite**');
    expect(md).toContain('## What is left\n\n- [~] Log cache misses at debug level\n- [ ] Test the cache');
    expect(md).not.toContain('Add the cache table\n- [');
  });

  it('says so when there is nothing', () => {
    const md = renderPack(buildPack([]));
    expect(md).toContain('_No prompt of the user’s own in the transcript._');
    expect(md).toContain('_None recorded._');
    expect(md).toContain('_The session kept no todo list');
  });
});
