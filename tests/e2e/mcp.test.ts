/**
 * The sleds MCP server in the REAL Claude Code (plugin loaded with --plugin-dir) against the fake Anthropic API:
 * the fake answers with a tool_use of the plugin's estimate tool and checks that the band (here: "no band yet", no
 * receipts exist) comes back as the tool result in the next request; and `park` followed by a typed
 * `/sled answer` resumes the task with the answer in the model's context and recorded in musher.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runClaudePrint } from './harness/claude-env.js';
import { conversationText, type FakeReply, type RecordedRequest } from './harness/fake-anthropic.js';
import { useE2eFixture } from './harness/fixture.js';
import { requestMusher } from '../../hooks/musher-client.js';
import { REPO_ROOT, sleds, startMusher } from '../support/sleds-env.js';
import type { Task } from '../../core/task/task.js';
import type { Question } from '../../core/question/question.js';

const PLUGIN_DIR = join(REPO_ROOT, 'plugin');
/** Measured: plugin `sled`, server `sleds` in its .mcp.json → mcp__plugin_<plugin>_<server>__<tool>. */
const tool = (name: string) => `mcp__plugin_sleds_sleds__${name}`;

/** The tool_result blocks of a request's last user message: what the tools answered. */
function toolResults(req: RecordedRequest): Array<{ id: string; text: string; isError: boolean }> {
  const messages = (req.body?.messages ?? []) as Array<{ role: string; content: unknown }>;
  const last = [...messages].reverse().find((m) => m.role === 'user');
  if (!last || !Array.isArray(last.content)) return [];
  return (last.content as Array<Record<string, unknown>>)
    .filter((b) => b.type === 'tool_result')
    .map((b) => ({
      id: String(b.tool_use_id),
      isError: b.is_error === true,
      text: typeof b.content === 'string' ? b.content : (b.content as Array<{ text?: string }>).map((c) => c.text ?? '').join('\n'),
    }));
}

describe('the sleds MCP server in the real Claude Code', { timeout: 120_000 }, () => {
  const fx = useE2eFixture({ claude: true });

  async function setUp(reply: (req: RecordedRequest) => FakeReply) {
    const fake = await fx.fakeAnthropic({ reply });
    const { home, world } = await fx.claudeWithSleds({ mode: 'apiKey', fakeUrl: fake.url });
    await startMusher(world);
    return { fake, home, world };
  }

  const claude = (home: { env: Record<string, string>; cwd: string }, args: string[]) =>
    runClaudePrint(fx.claudeBin, [...args, '--plugin-dir', PLUGIN_DIR, '--output-format', 'json', '--allowedTools', `${tool('estimate')},${tool('park')}`], { env: home.env, cwd: home.cwd, timeoutMs: 90_000 });

  it("the model calls the estimate tool and gets the session's task's band back in its next request", async () => {
    const { fake, home } = await setUp((req) =>
      toolResults(req).length === 0 ? [{ type: 'tool_use', id: 'toolu_estimate_1', name: tool('estimate'), input: {} }] : 'The band says: no band yet.',
    );
    const r = await claude(home, ['-p', 'Fix the flaky login test: it times out one run in five']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).result).toBe('The band says: no band yet.');
    const requests = fake.messageRequests();
    expect(requests).toHaveLength(2);
    const [result] = toolResults(requests[1]!);
    expect(result).toMatchObject({ id: 'toolu_estimate_1', isError: false });
    expect(result!.text).toMatch(/^Estimate for task [a-z2-9]{12} "Fix the flaky login test: it times out one run in five" \(open; worth not set; type not set\): no band yet/);
  });

  it('park holds the task; /sled answer typed at the prompt resumes it with the answer in context and recorded', async () => {
    const options = ['Keep the v1 endpoints as aliases: the band stays $4–11', 'Drop the v1 endpoints: the band shrinks to $2–6'];
    const { fake, home, world } = await setUp((req) => {
      const text = conversationText(req);
      if (text.includes('the user answered parked question')) return 'Carrying on without the v1 endpoints.';
      if (toolResults(req).length > 0) return 'Parked: waiting for your answer.';
      return [{ type: 'tool_use', id: 'toolu_park_1', name: tool('park'), input: { question: 'Keep the v1 endpoints as aliases?', options } }];
    });
    const first = await claude(home, ['-p', 'Rename the billing API to payments']);
    expect(first.code, first.stdout + first.stderr).toBe(0);
    const sessionId = JSON.parse(first.stdout).session_id as string;
    const [parked] = toolResults(fake.messageRequests()[1]!);
    expect(parked?.isError, parked?.text).toBe(false);
    const m = /^Parked: task ([a-z2-9]{12}) \(Rename the billing API to payments\) waits for an answer to question ([a-z2-9]{12}): Keep the v1 endpoints as aliases\?/.exec(parked!.text);
    expect(m, parked!.text).not.toBeNull();
    const [, taskId, questionId] = m!;
    const task = async () => (JSON.parse((await sleds(world, ['task', taskId!, '--json'])).stdout) as { task: Task }).task;
    expect((await task()).state).toBe('parked');

    const second = await claude(home, ['-p', '--resume', sessionId, `/sled answer ${questionId} B`]);
    expect(second.code, second.stdout + second.stderr).toBe(0);
    expect(JSON.parse(second.stdout).result).toBe('Carrying on without the v1 endpoints.');
    const resumed = fake.messageRequests()[2]!;
    expect(conversationText(resumed)).toContain(`the user answered parked question ${questionId} ("Keep the v1 endpoints as aliases?") with B: ${options[1]}`);
    expect((await task()).state).toBe('open');
    const q = await requestMusher(world.socket, 'GET', `/v1/questions/${questionId}`, null, {}, 5_000);
    expect((JSON.parse(q.body) as { question: Question }).question).toMatchObject({ state: 'answered', choice: 'B', answeredBy: 'verb', sessionId });
    expect(fake.messageRequests()).toHaveLength(3);
  });
});
