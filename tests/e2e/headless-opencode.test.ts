/**
 * The REAL pinned OpenCode binary (npm opencode-ai) driven headless through its adapter (issue 14 part 6), against the
 * fake Anthropic API on 127.0.0.1 (pointed at it the way the adapter points it at musher's gateway): in a temp git
 * repository, the agent's write tool call makes a file; the stream maps to started, the tool call, usage, completed
 * with a session id; a second run resumes that session by the id, with the first turn in its conversation.
 */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { makeRealTempDir, runToEnd } from './harness/child.js';
import { conversationText, startFakeAnthropic, type FakeAnthropic, type RecordedRequest } from './harness/fake-anthropic.js';
import { ensureOpencodeBinary, makeOpencodeHome, type OpencodeHome } from './harness/opencode-binary.js';
import type { HarnessEvent } from '../../harnesses/events.js';
import { readHeadlessStream, type HarnessAdapter } from '../../harnesses/port.js';
import { harnessById } from '../../harnesses/registry.js';

const MODEL = 'anthropic/claude-sonnet-4-5';

function carriesToolResult(req: RecordedRequest): boolean {
  const body = JSON.parse(req.rawBody) as { messages?: Array<{ content?: unknown }> };
  const last = body.messages?.at(-1)?.content;
  return Array.isArray(last) && last.some((b) => (b as { type?: string }).type === 'tool_result');
}

const meaningful = (events: HarnessEvent[]) => events.map((e) => e.kind).filter((k) => k !== 'ignored');

describe('opencode headless through its adapter', { timeout: 180_000 }, () => {
  let api: FakeAnthropic | null = null;
  let home: OpencodeHome | null = null;
  afterEach(async () => {
    await api?.close();
    await home?.cleanup();
    api = home = null;
  });

  it('writes a file by a tool call in a git repo, reports it in the shared events, and resumes the session by its id', async () => {
    const found = harnessById('opencode');
    if (!found.ok) throw new Error(found.error);
    const adapter: HarnessAdapter = found.adapter;
    const bin = await ensureOpencodeBinary();
    const repo = await makeRealTempDir('sleds-opencode-repo-');
    await promisify(execFile)('git', ['init', '-q', repo]);
    const target = join(repo, 'NOTES.md');
    api = await startFakeAnthropic({
      reply: (req) => (carriesToolResult(req) ? 'Done: NOTES.md written.' : [{ type: 'tool_use', name: 'write', input: { filePath: target, content: 'route notes from opencode\n' } }]),
    });
    home = await makeOpencodeHome();
    const launch = adapter.gatewayLaunch({ token: 'sk-sleds-local-e2e', anthropicBaseUrl: api.url, openaiBaseUrl: `${api.url}/v1` });
    if (!launch.ok) throw new Error(launch.why);
    const env = home.env(launch.env);

    const run = async (prompt: string, resumeSessionId: string | null) => {
      const cmd = adapter.headlessArgv({ bin, prompt, model: MODEL, resumeSessionId, harnessArgs: launch.args });
      expect(cmd.argv.some((a) => a.includes(prompt))).toBe(false);
      const r = await runToEnd(cmd.argv[0]!, cmd.argv.slice(1), { env, cwd: repo, input: cmd.stdin, timeoutMs: 120_000 });
      expect(r.code, r.stderr.slice(-800)).toBe(0);
      return readHeadlessStream(adapter, r.stdout);
    };

    const first = await run('write the route notes ALPHA-3f1', null);
    expect(await readFile(target, 'utf8')).toBe('route notes from opencode\n');
    expect(meaningful(first)).toEqual(['turn_started', 'tool_call', 'usage', 'turn_started', 'usage', 'turn_completed']);
    expect(first.find((e) => e.kind === 'tool_call')).toMatchObject({ name: 'write' });
    const done = first.at(-1)!;
    expect(done).toMatchObject({ kind: 'turn_completed', ok: true });
    const sessionId = done.kind === 'turn_completed' ? done.sessionId : null;
    expect(sessionId).toMatch(/^ses_/);
    // The token reached the model API only as the key the config names (never in argv, never in the config text).
    expect(api.messageRequests().every((q) => q.headers['x-api-key'] === 'sk-sleds-local-e2e')).toBe(true);

    const before = api.messageRequests().length;
    const second = await run('now say what you wrote BETA-8e2', sessionId);
    expect(second.filter((e) => e.kind === 'turn_completed').at(-1)).toMatchObject({ sessionId, ok: true });
    const resumed = api.messageRequests().slice(before).map(conversationText);
    expect(resumed.some((c) => c.includes('ALPHA-3f1') && c.includes('BETA-8e2'))).toBe(true);
  });
});
