/**
 * The sleds MCP server in the REAL Codex CLI: `sleds install` wires it into config.toml, the fake Responses API
 * answers with a call of the `status` tool (Codex's namespaced form), and the tool's answer — naming the task the
 * calling session works on, found from the call's `_meta` — comes back to the model as the function's output.
 */
import { describe, expect, it } from 'vitest';
import { runCodexExec } from './harness/codex-env.js';
import type { RecordedRequest } from './harness/fake-openai.js';
import { useE2eFixture } from './harness/fixture.js';
import { sleds } from '../support/sleds-env.js';

/** The function_call_output items of a Responses request, as text. */
function toolOutputs(req: RecordedRequest): string[] {
  const input = (req.body as { input?: unknown[] } | null)?.input ?? [];
  return input
    .filter((i): i is { type: string; output: unknown } => typeof i === 'object' && i !== null && (i as { type?: unknown }).type === 'function_call_output')
    // Codex sends the MCP result as input_text parts ("Wall time: …\nOutput:", then the tool's text).
    .map((i) => (typeof i.output === 'string' ? i.output : (i.output as Array<{ text?: string }>).map((p) => p.text ?? '').join('\n')));
}

describe('the sleds MCP server in the real Codex CLI', { timeout: 120_000 }, () => {
  const fx = useE2eFixture({ codex: true });

  it("the model calls the status tool; its answer names the calling session's task and reaches the model", async () => {
    const fake = await fx.fakeOpenAI({
      reply: (req) =>
        toolOutputs(req).length > 0 ? 'Here is where things stand.' : [{ type: 'function_call', namespace: 'mcp__sleds', name: 'status', arguments: '{}', call_id: 'call_status_1' }],
    });
    const { home, env, world } = await fx.codexWithSleds({ fakeUrl: fake.url, sledsEnv: { SLEDS_SEAT: 'dana' } });
    const installed = await sleds(world, ['install']);
    expect(installed.code, installed.stdout + installed.stderr).toBe(0);

    const run = await runCodexExec(fx.codexBin, ['exec', '--skip-git-repo-check', 'Where do my seat and this task stand?'], { env, cwd: home.cwd, timeoutMs: 90_000 });
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const answered = fake.requests.find((r) => toolOutputs(r).length > 0);
    expect(answered, `no function_call_output reached the fake; codex said: ${run.stderr.slice(-600)}`).toBeDefined();
    const output = toolOutputs(answered!).join('\n');
    // The seat's card, and the task this Codex session started with its prompt: the server knew which session called.
    expect(output).toMatch(/This session works on task [a-z2-9]{12} "Where do my seat and this task stand\?"/);
    expect(run.stdout).toContain('Here is where things stand.');
  });
});
