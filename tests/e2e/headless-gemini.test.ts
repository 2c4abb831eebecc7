/**
 * The real pinned Gemini CLI headless through its adapter's argv against the fake Gemini API (issue 14, part 6), in
 * a temp git repository: the agent's own write_file call creates a file, the stream maps to the shared events with a
 * session id, a second run resumes that session (the fake sees the first turn's history), and a quota refusal maps
 * to rate_limited with its reset.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runToEnd } from './harness/child.js';
import { makeGeminiHome, startFakeGemini, userTexts, type FakeGemini, type GeminiHome } from './harness/fake-gemini.js';
import { ensureGeminiBinary } from './harness/gemini-binary.js';
import { readHeadlessStream } from '../../harnesses/port.js';
import { harnessById } from '../../harnesses/registry.js';
import type { HarnessEvent } from '../../harnesses/events.js';

const found = harnessById('gemini-cli');
if (!found.ok) throw new Error(found.error);
const adapter = found.adapter;

const meaningful = (events: HarnessEvent[]) => events.filter((e) => e.kind !== 'ignored');

describe('gemini-cli headless through its adapter', { timeout: 180_000 }, () => {
  let api: FakeGemini | null = null;
  let home: GeminiHome | null = null;
  afterEach(async () => {
    await api?.close();
    await home?.cleanup();
    api = null;
    home = null;
  });

  async function run(prompt: string, resumeSessionId: string | null) {
    const cmd = adapter.headlessArgv({ bin: await ensureGeminiBinary(), prompt, resumeSessionId, model: 'gemini-2.5-pro' });
    expect(cmd.argv.some((a) => a.includes(prompt))).toBe(false);
    const r = await runToEnd(cmd.argv[0]!, cmd.argv.slice(1), { env: home!.env, cwd: home!.cwd, input: cmd.stdin, timeoutMs: 90_000 });
    return { ...r, events: readHeadlessStream(adapter, r.stdout) };
  }

  it("writes a file through the agent's own tool, then resumes the same session with its history", async () => {
    api = await startFakeGemini({ defaultText: 'Wrote notes.txt.' });
    home = await makeGeminiHome(api.url);
    api.queueTurn({ kind: 'call', name: 'write_file', args: { file_path: 'notes.txt', content: 'made by the agent GAMMA-41\n' } });

    const first = await run('write notes.txt ALPHA-7c1', null);
    expect(first.code, first.stderr.slice(-800)).toBe(0);
    expect(await readFile(path.join(home.cwd, 'notes.txt'), 'utf8')).toBe('made by the agent GAMMA-41\n');
    expect(meaningful(first.events).map((e) => e.kind)).toEqual(['turn_started', 'tool_call', 'usage', 'turn_completed']);
    const started = first.events.find((e) => e.kind === 'turn_started');
    const sessionId = started?.kind === 'turn_started' ? started.sessionId : null;
    expect(sessionId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(first.events.find((e) => e.kind === 'tool_call')).toMatchObject({ name: 'write_file' });
    // The fake's usage: 1200 prompt tokens of which 200 cached, 40 out, on each of the two requests of the turn.
    expect(first.events.find((e) => e.kind === 'usage')).toEqual({ kind: 'usage', inputTokens: 2000, outputTokens: 80, cacheReadTokens: 400, cacheWriteTokens: 0 });
    expect(first.events.at(-1)).toEqual({ kind: 'turn_completed', sessionId, ok: true, text: null });
    expect(adapter.readHeadlessResult(first.stdout)).toMatchObject({ text: 'Wrote notes.txt.', isError: false, sessionId });

    const turnsBefore = api.turnRequests().length;
    const second = await run('second prompt BETA-9d2', sessionId);
    expect(second.code, second.stderr.slice(-800)).toBe(0);
    expect(second.events.at(-1)).toMatchObject({ kind: 'turn_completed', ok: true, sessionId });
    const resumed = api.turnRequests()[turnsBefore]!;
    const said = userTexts(resumed);
    expect(said.some((t) => t.includes('ALPHA-7c1'))).toBe(true);
    expect(said.at(-1)).toContain('BETA-9d2');
    // The first turn's tool call is in the resumed history too.
    expect(JSON.stringify(resumed.body.contents)).toContain('GAMMA-41');
  });

  it('maps a 429 RESOURCE_EXHAUSTED to rate_limited with the reset it suggests, then a failed turn', async () => {
    api = await startFakeGemini();
    home = await makeGeminiHome(api.url);
    api.queueTurn({ kind: 'quota', quotaId: 'GenerateRequestsPerHourPerProjectPerModel', retryDelaySeconds: 3600 });
    const r = await run('hello when refused', null);
    expect(r.code).not.toBe(0);
    expect(meaningful(r.events).map((e) => e.kind)).toEqual(['turn_started', 'rate_limited', 'turn_completed']);
    const result = JSON.parse(r.stdout.trim().split('\n').at(-1)!);
    expect(r.events.find((e) => e.kind === 'rate_limited')).toEqual({ kind: 'rate_limited', resetsAtMs: Date.parse(result.timestamp) + 3_600_000, window: null });
    expect(adapter.readHeadlessResult(r.stdout)).toMatchObject({ isError: true, error: expect.stringContaining('quota') });
  });
});
