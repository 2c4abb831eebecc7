/**
 * Every shipped harness adapter driving its REAL pinned binary headless against the fake model API (issue 13, part 1):
 * the argv the adapter builds runs, with the prompt on stdin only; the structured stream maps to the shared events;
 * and a resume by the session id those events name continues the same session with the next prompt.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { runToEnd } from './harness/child.js';
import { ensureClaudeBinary, lastUserPrompt, makeClaudeHome, makeProjectDir, startFakeAnthropic } from './harness/index.js';
import { ensureCodexBinary } from './harness/codex-binary.js';
import { makeCodexHome, makeCodexProjectDir } from './harness/codex-env.js';
import { lastUserInput, startFakeOpenAI } from './harness/fake-openai.js';
import { readHeadlessStream, type HarnessAdapter } from '../../harnesses/port.js';
import { builtInHarness } from '../../harnesses/registry.js';
import type { HarnessEvent } from '../../harnesses/events.js';

interface World {
  bin: string;
  env: Record<string, string>;
  cwd: string;
  /** The last prompt the fake model API received. */
  lastPrompt(): string;
  close(): Promise<void>;
}

const WORLDS: Record<string, () => Promise<World>> = {
  'claude-code': async () => {
    const bin = await ensureClaudeBinary();
    const api = await startFakeAnthropic({});
    const home = await makeClaudeHome({ mode: 'apiKey', fakeUrl: api.url, cwd: await makeProjectDir() });
    return { bin, env: home.env, cwd: home.cwd, lastPrompt: () => lastUserPrompt(api.messageRequests().at(-1)!), close: async () => (await api.close(), await home.cleanup()) };
  },
  codex: async () => {
    const bin = await ensureCodexBinary();
    const api = await startFakeOpenAI({});
    const home = await makeCodexHome({ fakeUrl: api.url, cwd: await makeCodexProjectDir() });
    const posts = () => api.requests.filter((r) => r.method === 'POST');
    return { bin, env: home.env, cwd: home.cwd, lastPrompt: () => lastUserInput(posts().at(-1)!), close: async () => (await api.close(), await home.cleanup()) };
  },
};

function sessionOf(events: HarnessEvent[]): string | null {
  const done = events.filter((e) => e.kind === 'turn_completed').at(-1);
  return done?.kind === 'turn_completed' ? done.sessionId : null;
}

describe.each(['claude-code', 'codex'] as const)('%s headless through its adapter', { timeout: 120_000 }, (id) => {
  let world: World | null = null;
  afterEach(async () => {
    await world?.close();
    world = null;
  });

  it('runs a turn from stdin, then resumes the same session by the id its events name', async () => {
    const adapter: HarnessAdapter = builtInHarness(id);
    world = await WORLDS[id]!();
    const run = async (prompt: string, resumeSessionId: string | null) => {
      const cmd = adapter.headlessArgv({ bin: world!.bin, prompt, resumeSessionId });
      expect(cmd.argv.some((a) => a.includes(prompt))).toBe(false);
      // A `.js` launcher runs under this node, as the harness helpers do.
      const [file, argv] = cmd.argv[0]!.endsWith('.js') ? [process.execPath, cmd.argv] : [cmd.argv[0]!, cmd.argv.slice(1)];
      const r = await runToEnd(file, argv, { env: world!.env, cwd: world!.cwd, input: cmd.stdin, timeoutMs: 60_000 });
      expect(r.code, r.stderr.slice(-500)).toBe(0);
      return readHeadlessStream(adapter, r.stdout);
    };

    const first = await run('first prompt ALPHA-7c1', null);
    expect(first.filter((e) => e.kind !== 'ignored').map((e) => e.kind)).toEqual(['turn_started', 'usage', 'turn_completed']);
    expect(first.at(-1)).toMatchObject({ kind: 'turn_completed', ok: true });
    const sessionId = sessionOf(first);
    expect(sessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(world.lastPrompt()).toBe('first prompt ALPHA-7c1');

    const second = await run('second prompt BETA-9d2', sessionId);
    expect(sessionOf(second)).toBe(sessionId);
    expect(world.lastPrompt()).toBe('second prompt BETA-9d2');
  });
});
