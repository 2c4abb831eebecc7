import { describe, expect, it } from 'vitest';
import { parse as parseToml } from 'smol-toml';
import { runTool } from '../../mcp-server/tools.js';
import type { MusherApi } from '../../mcp-server/musher-api.js';
import { claudeCode } from '../../harnesses/claude-code/index.js';
import { codex } from '../../harnesses/codex/index.js';
import { drawNeeds } from '../../cli/needs.js';

/**
 * A route node's agent parks its question through the sleds MCP server the engine hands its harness: the park tool
 * in a node's session parks the node (not a task), and each adapter registers the server its own way.
 */

const MCP = { command: '/usr/bin/node', args: ['/opt/sleds/dist/cli/main.js', 'mcp'], env: { SLEDS_ROUTE: 'eng-503', SLEDS_NODE: 'mailer', SLEDS_HOME: '/home/d/.sleds' } };

describe('park in a route node’s session', () => {
  it('parks the node through routePark, with the route and node the engine set', async () => {
    const calls: Array<{ name: string; input: unknown }> = [];
    const api: MusherApi = {
      call: (async (name: string, input: unknown) => {
        calls.push({ name, input });
        return { ok: true, status: 201, body: { questionId: 'q7k2m9qa45pz', key: 'eng-503', node: 'mailer', question: 'File or link?', options: ['a', 'b'], text: 'Parked: eng-503/mailer waits…' } };
      }) as MusherApi['call'],
    };
    const r = await runTool('park', { question: 'File or link?', options: ['A file: band stays', 'A link: band grows'] }, { api, sessionId: 's1', cwd: '/tmp', node: { route: 'eng-503', node: 'mailer' } });
    expect(r).toEqual({ isError: false, text: 'Parked: eng-503/mailer waits…' });
    expect(calls).toEqual([{ name: 'routePark', input: { body: { route: 'eng-503', node: 'mailer', question: 'File or link?', options: ['A file: band stays', 'A link: band grows'] } } }]);
  });
});

describe('ask in a route node’s session', () => {
  it('asks through routeAsk with the route and node the engine set, and hands the agent musher’s words', async () => {
    const calls: Array<{ name: string; input: unknown }> = [];
    const text = "Resolved from SPEC.md § Exports: 'Exports are emailed as a CSV link' → B) Email a CSV link. Go on with it; it is logged in the PR with where it was found.";
    const api: MusherApi = {
      call: (async (name: string, input: unknown) => {
        calls.push({ name, input });
        return { ok: true, status: 200, body: { key: 'eng-503', node: 'mailer', rung: 'context', next: 'answer', answer: 'Email a CSV link', questionId: null, reason: 'r', text } };
      }) as MusherApi['call'],
    };
    const ctx = { api, sessionId: 's1', cwd: '/tmp', node: { route: 'eng-503', node: 'mailer' } };
    const r = await runTool('ask', { question: 'How do exports reach the customer?', options: ['Attach the file', 'Email a CSV link'], reversible: false, risk: 'high' }, ctx);
    expect(r).toEqual({ isError: false, text });
    expect(calls).toEqual([{ name: 'routeAsk', input: { body: { route: 'eng-503', node: 'mailer', question: 'How do exports reach the customer?', options: ['Attach the file', 'Email a CSV link'], reversible: false, risk: 'high' } } }]);
  });

  it.each<[string, Record<string, unknown>, string]>([
    ['one option', { question: 'File or link?', options: ['A file'], reversible: true }, 'sleds ask: options: options holds 2 to 4 sentences, your recommended one first'],
    ['five options', { question: 'File or link?', options: ['aaa', 'bbb', 'ccc', 'ddd', 'eee'], reversible: true }, 'sleds ask: options: options holds 2 to 4 sentences, your recommended one first'],
    ['no reversible', { question: 'File or link?', options: ['aaa', 'bbb'] }, 'sleds ask: reversible: Invalid input: expected boolean, received undefined'],
  ])('refuses %s, saying what to fix', async (_what, args, text) => {
    const api: MusherApi = { call: (async () => ({ ok: false, kind: 'refused', status: 500, error: 'not called' })) as unknown as MusherApi['call'] };
    expect(await runTool('ask', args, { api, sessionId: 's1', cwd: '/tmp', node: { route: 'eng-503', node: 'mailer' } })).toEqual({ isError: true, text });
  });
});

describe('the sleds MCP server for one headless run', () => {
  it('Claude Code: --mcp-config names a server `sleds` (its tools mcp__sleds__park and mcp__sleds__ask, allowed by name), prompt still on stdin', () => {
    const cmd = claudeCode.headlessArgv({ bin: 'claude', prompt: 'the pack', unattended: true, sledsMcp: MCP });
    const at = cmd.argv.indexOf('--mcp-config');
    expect(at).toBeGreaterThan(0);
    expect(JSON.parse(cmd.argv[at + 1]!)).toEqual({ mcpServers: { sleds: { type: 'stdio', command: MCP.command, args: MCP.args, env: MCP.env } } });
    expect(cmd.argv[cmd.argv.indexOf('--allowedTools') + 1]).toBe('mcp__sleds__park,mcp__sleds__ask');
    expect(cmd.stdin).toBe('the pack');
    expect(cmd.argv.join(' ')).not.toContain('the pack');
    expect(claudeCode.headlessArgv({ bin: 'claude', prompt: 'p' }).argv).not.toContain('--mcp-config');
  });

  it('Codex: -c overrides that are TOML Codex reads as [mcp_servers.sleds], tools approved, the node in its env', () => {
    const cmd = codex.headlessArgv({ bin: 'codex', prompt: 'the pack', unattended: true, sledsMcp: MCP });
    const overrides = cmd.argv.flatMap((a, i) => (cmd.argv[i - 1] === '-c' && a.startsWith('mcp_servers.') ? [a] : []));
    const table = parseToml(overrides.join('\n')) as { mcp_servers: { sleds: Record<string, unknown> } };
    expect(table.mcp_servers.sleds).toEqual({ command: MCP.command, args: MCP.args, default_tools_approval_mode: 'approve', env: MCP.env });
  });
});

describe('sleds needs', () => {
  it('draws each question with its answers and how to answer; says so when nothing waits', () => {
    const now = Date.UTC(2026, 11, 2, 14);
    expect(drawNeeds([], now)).toBe('nothing waits for you: no parked questions');
    const text = drawNeeds(
      [{ kind: 'node', questionId: 'q7k2m9qa45pz', of: 'eng-503/mailer', title: 'Mailer', question: 'File or link?', options: ['A file: band stays', 'A link: band grows'], askedAt: now - 12 * 60_000, inSlack: true, answerWith: 'sleds route answer q7k2m9qa45pz A|B' }],
      now,
    );
    expect(text).toBe('eng-503/mailer (Mailer) asks, 12 min ago · in Slack:\n  File or link?\n  A) A file: band stays\n  B) A link: band grows\n  answer: sleds route answer q7k2m9qa45pz A|B');
  });

  it('draws an escalated question’s three answers with their letters', () => {
    const now = Date.UTC(2026, 11, 2, 23, 40);
    const text = drawNeeds(
      [{ kind: 'node', questionId: 'q7k2m9qa45pz', of: 'eng-503/first', title: 'First', question: 'Where do export rows live?', options: ['The jobs table', 'An exports table', 'A JSON column'], askedAt: now - 40 * 60_000, inSlack: true, answerWith: 'sleds route answer q7k2m9qa45pz A|B|C' }],
      now,
    );
    expect(text).toBe('eng-503/first (First) asks, 40 min ago · in Slack:\n  Where do export rows live?\n  A) The jobs table\n  B) An exports table\n  C) A JSON column\n  answer: sleds route answer q7k2m9qa45pz A|B|C');
  });
});
