/**
 * `sleds mcp` over stdio, driven by the MCP SDK's own client, against a real musher on a temp socket: the tools
 * list, intake, status, park and the answer coming back into the session (typed /sled answer, or the answer tool).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterEach, describe, expect, it } from 'vitest';
import { CLI, disposeWorld, makeWorld, sleds, startMusher, type SledsWorld } from '../support/sleds-env.js';
import type { Task } from '../../core/task/task.js';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeSledsConfig } from '../support/sleds-config.js';

const worlds: SledsWorld[] = [];
const clients: Client[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close().catch(() => undefined)));
  await Promise.all(worlds.splice(0).map((w) => disposeWorld(w)));
});

async function connect(w: SledsWorld, env: Record<string, string> = {}): Promise<Client> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [...CLI, 'mcp'], env: { ...(w.env as Record<string, string>), ...env }, cwd: w.home, stderr: 'pipe' });
  const client = new Client({ name: 'sleds-test', version: '0.0.0' });
  await client.connect(transport);
  clients.push(client);
  return client;
}

async function call(c: Client, name: string, args: Record<string, unknown>): Promise<{ text: string; isError: boolean }> {
  const r = (await c.callTool({ name, arguments: args })) as { content: Array<{ type: string; text?: string }>; isError?: boolean };
  return { text: r.content.map((b) => b.text ?? '').join('\n'), isError: r.isError === true };
}

interface HookOut {
  decision?: string;
  reason?: string;
  systemMessage?: string;
  hookSpecificOutput?: { additionalContext?: string };
}

async function prompt(w: SledsWorld, sessionId: string, text: string, harness = 'claude-code'): Promise<HookOut> {
  const r = await sleds(w, ['hook', 'UserPromptSubmit', '--harness', harness], JSON.stringify({ session_id: sessionId, prompt: text, cwd: w.home, hook_event_name: 'UserPromptSubmit' }));
  expect(r.code, r.stderr).toBe(0);
  return r.stdout.trim() === '' ? {} : (JSON.parse(r.stdout) as HookOut);
}

async function task(w: SledsWorld, id: string): Promise<Task> {
  const r = await sleds(w, ['task', id, '--json']);
  expect(r.code, r.stderr).toBe(0);
  return (JSON.parse(r.stdout) as { task: Task }).task;
}

describe('sleds mcp', { timeout: 60_000 }, () => {
  it('lists its ten tools with input schemas and starts musher when it is away', async () => {
    const w = makeWorld();
    worlds.push(w);
    const c = await connect(w);
    const { tools } = await c.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['answer', 'ask', 'dispatch', 'estimate', 'handoff', 'intake', 'park', 'pickup', 'plan', 'status']);
    // The ladder's verb: 2–4 options, the agent's recommended one first, and whether the choice can be undone.
    const askTool = tools.find((t) => t.name === 'ask')!;
    expect(Object.keys(askTool.inputSchema.properties ?? {}).sort()).toEqual(['options', 'question', 'reversible', 'risk']);
    expect(askTool.inputSchema.required).toEqual(['question', 'options', 'reversible']);
    expect(askTool.description).toContain('recommended option FIRST');
    // Outside a route node's session there is no node to ask for: it says to park instead.
    expect(await call(c, 'ask', { question: 'File or link?', options: ['A file', 'A link'], reversible: true })).toEqual({
      isError: true,
      text: 'sleds ask: this session is not a route node sleds engine started (no SLEDS_ROUTE / SLEDS_NODE) — in your own session, park the question with the park tool',
    });
    const park = tools.find((t) => t.name === 'park')!;
    expect(Object.keys(park.inputSchema.properties ?? {}).sort()).toEqual(['options', 'question', 'taskId']);
    expect(park.inputSchema.required).toEqual(['question', 'options']);
    // No musher was started by the test: the first call starts one, as the hooks do.
    const s = await call(c, 'status', {});
    expect(s.isError, s.text).toBe(false);
    expect(s.text).toContain('sleds · seat status');
    const h = await call(c, 'handoff', {});
    expect(h.text).toContain('No hand-offs sent or received on this seat yet');
  });

  it("intake starts the calling session's task; status names it; tools without a task say what to pass", async () => {
    const w = makeWorld();
    worlds.push(w);
    // Claude Code is installed here (the picker offers only harnesses this machine has).
    writeFileSync(join(w.root, 'claude'), '#!/bin/sh\nexit 0\n', { mode: 0o755 });
    writeSledsConfig(w, { binaries: { claude: join(w.root, 'claude') } });
    const c = await connect(w, { CLAUDE_CODE_SESSION_ID: 'sess-mcp-1' });
    const none = await call(c, 'park', { question: 'Which way?', options: ['Keep the old API: band stays $4–11', 'Break it: band grows to $9–20'] });
    expect(none).toEqual({ isError: true, text: 'sleds: this session has no task yet — call intake with a title first, or pass taskId' });

    const made = await call(c, 'intake', { title: 'Fix the flaky login test', worth: 'high', type: 'bugfix' });
    expect(made.isError, made.text).toBe(false);
    const id = /task ([a-z2-9]{12})/.exec(made.text)?.[1];
    expect(made.text).toContain('"Fix the flaky login test" (open; worth high; type bugfix); this session works on it now.');
    const t = await task(w, id!);
    expect(t).toMatchObject({ title: 'Fix the flaky login test', worth: 'high', type: 'bugfix', source: 'mcp', state: 'open' });

    const s = await call(c, 'status', {});
    expect(s.text).toContain(`This session works on task ${id} "Fix the flaky login test"`);

    // No receipts yet: no band, and the estimate says so instead of making one up.
    expect(made.text).toMatch(/Estimate: no band yet/);
    const band = await call(c, 'estimate', {});
    expect(band.isError, band.text).toBe(false);
    expect(band.text).toMatch(new RegExp(`^Estimate for task ${id} "Fix the flaky login test" \\(open; worth high; type bugfix\\): no band yet`));
    const loose = await call(c, 'estimate', { text: 'Port the CSV exporter to streams', type: 'feature' });
    expect(loose.text).toMatch(/^Estimate: no band yet/);

    // The dispatcher: one row per seat, numbered; a row taken says how the task starts there.
    const picker = await call(c, 'dispatch', {});
    expect(picker.isError, picker.text).toBe(false);
    expect(picker.text).toMatch(new RegExp(`^Picker for task ${id} "Fix the flaky login test" \\(open; worth high; type bugfix\\): `));
    expect(picker.text).toMatch(/Rows — 1: you · claude-code · [a-z0-9-]+ — .* → Dispatch;/);
    const taken = await call(c, 'dispatch', { row: 1 });
    expect(taken.isError, taken.text).toBe(false);
    expect(taken.text).toContain(`task ${id}`);
    const held = await call(c, 'intake', { title: 'Tidy the README' });
    const heldId = /task ([a-z2-9]{12})/.exec(held.text)![1];
    expect(held.text).toContain('It has no worth yet, so the dispatcher holds it');
    const refusedRow = await call(c, 'dispatch', { taskId: heldId, row: 1 });
    expect(refusedRow.isError).toBe(true);
    expect(refusedRow.text).toContain('not worth doing until someone states a worth');

    const bad = await call(c, 'intake', { title: 'x', worth: 'priceless' });
    expect(bad).toEqual({ isError: true, text: "sleds: 'priceless' is not a worth level here — use high|normal|low|none" });
    const noTask = await call(c, 'status', { taskId: 'zzzzzzzzzzzz' });
    expect(noTask).toEqual({ isError: true, text: 'sleds: no task zzzzzzzzzzzz — sleds tasks lists them' });
  });

  it('park holds the task behind a two-option question; /sled answer in the session lets the prompt through with the answer', async () => {
    const w = makeWorld();
    worlds.push(w);
    await startMusher(w);
    const c = await connect(w, { CLAUDE_CODE_SESSION_ID: 'sess-park' });
    // The session's first prompt starts its task (the hook), then the agent parks it over MCP.
    expect(await prompt(w, 'sess-park', 'Rename the billing API')).toEqual({});
    const three = await call(c, 'park', { question: 'Keep v1?', options: ['Keep it: $4–11', 'Drop it: $2–6', 'Both'] });
    expect(three.isError).toBe(true);
    expect(three.text).toMatch(/options.*(2|two)/is);
    const parked = await call(c, 'park', { question: 'Keep the v1 endpoints as aliases?', options: ['Keep them: the band stays $4–11', 'Drop them: the band shrinks to $2–6'] });
    expect(parked.isError, parked.text).toBe(false);
    const [, taskId = '', qid = ''] = /^Parked: task ([a-z2-9]{12}) \(Rename the billing API\) waits for an answer to question ([a-z2-9]{12}): Keep the v1 endpoints as aliases\?/.exec(parked.text) ?? [];
    expect(qid, parked.text).toMatch(/^[a-z2-9]{12}$/);
    expect(parked.text).toContain(`/sled answer ${qid} A`);
    expect((await task(w, taskId!)).state).toBe('parked');
    const again = await call(c, 'park', { question: 'And the docs?', options: ['Update them now', 'Update them later'] });
    expect(again).toEqual({ isError: true, text: `sleds: task ${taskId} already waits on question ${qid} — it must be answered first (/sled answer ${qid} A|B)` });
    const shown = await call(c, 'status', {});
    expect(shown.text).toContain(`It waits on question ${qid}: Keep the v1 endpoints as aliases?`);

    const wrong = await prompt(w, 'sess-park', `/sled answer ${qid} C`);
    expect(wrong).toMatchObject({ decision: 'block', reason: `sled: 'C' is not an answer — /sled answer ${qid} A or /sled answer ${qid} B` });
    const bare = await prompt(w, 'sess-park', '/sled answer');
    expect(bare.reason).toContain('which question, and which answer?');

    const answered = await prompt(w, 'sess-park', `/sled answer ${qid.slice(0, 6)} b`);
    expect(answered.decision).toBeUndefined();
    expect(answered.systemMessage).toBe(`sled: question ${qid} answered B (Drop them: the band shrinks to $2–6); task ${taskId} is open again. The session carries on with it.`);
    expect(answered.hookSpecificOutput?.additionalContext).toContain(`the user answered parked question ${qid} ("Keep the v1 endpoints as aliases?") with B: Drop them: the band shrinks to $2–6`);
    expect((await task(w, taskId!)).state).toBe('open');
    // Delivered with the answer: the next prompt carries nothing more.
    expect(await prompt(w, 'sess-park', 'ok go on')).toEqual({});
    const twice = await prompt(w, 'sess-park', `/sled answer ${qid} A`);
    expect(twice.reason).toBe(`sled: question ${qid} was answered B already — park a new one to ask again`);
  });

  it('the answer tool answers from elsewhere: the asking session gets it with its next prompt, once (Codex dialect too)', async () => {
    const w = makeWorld();
    worlds.push(w);
    await startMusher(w);
    const asker = await connect(w, { CLAUDE_CODE_SESSION_ID: 'codex-thread-1' });
    await prompt(w, 'codex-thread-1', 'Pick a cache for the sessions table', 'codex');
    const parked = await call(asker, 'park', { question: 'Which cache?', options: ['An LRU in memory: band $1–3', 'Redis: band $5–12'] });
    const qid = /question ([a-z2-9]{12}):/.exec(parked.text)?.[1];
    expect(qid, parked.text).toBeDefined();

    const other = await connect(w);
    const unknown = await call(other, 'answer', { questionId: 'zzzzzzzzzzzz', choice: 'A' });
    expect(unknown).toEqual({ isError: true, text: 'sleds: no question zzzzzzzzzzzz — the id is in the parked question\'s text' });
    const badChoice = await call(other, 'answer', { questionId: qid, choice: 'maybe' });
    expect(badChoice.isError).toBe(true);
    expect(badChoice.text).toContain('choose A or B');
    const a = await call(other, 'answer', { questionId: qid, choice: 'a' });
    expect(a).toEqual({ isError: false, text: `question ${qid} answered A (An LRU in memory: band $1–3); task ${/task ([a-z2-9]{12})/.exec(parked.text)![1]} is open again. The session that asked gets the answer with its next prompt.` });

    const next = await prompt(w, 'codex-thread-1', 'continue', 'codex');
    // Codex rejects fields it does not know: the hook-specific part alone.
    expect(Object.keys(next)).toEqual(['hookSpecificOutput']);
    expect(next.hookSpecificOutput?.additionalContext).toContain(`with A: An LRU in memory: band $1–3`);
    expect(await prompt(w, 'codex-thread-1', 'and then', 'codex')).toEqual({});
  });
});
