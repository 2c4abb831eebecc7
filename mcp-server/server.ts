import { homedir } from 'node:os';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { ZodRawShape } from 'zod';
import { resolvePaths } from '../core/paths.js';
import { musherApi, type MusherApi } from './musher-api.js';
import { sessionOf } from './session.js';
import { runTool, TOOL_DESCRIPTIONS, TOOL_INPUTS, type ToolName } from './tools.js';

/** `sleds mcp`: the sleds verbs as MCP tools over stdio, each answered by musher. */

export interface McpDeps {
  api: MusherApi;
  env: Record<string, string | undefined>;
  cwd: string;
  version: string;
}

/** The server with every tool registered (not connected: the caller picks the transport). */
export function buildMcpServer(d: McpDeps): McpServer {
  const server = new McpServer(
    { name: 'sleds', version: d.version },
    { instructions: 'sleds sizes and dispatches work: intake starts a task, estimate gives its band, dispatch its seats, park asks the person one A/B question and the task waits.' },
  );
  for (const name of Object.keys(TOOL_INPUTS) as ToolName[]) {
    const shape: ZodRawShape = TOOL_INPUTS[name].shape;
    server.registerTool(name, { description: TOOL_DESCRIPTIONS[name], inputSchema: shape }, async (args, extra) => {
      const answer = await runTool(name, args, { api: d.api, sessionId: sessionOf(extra._meta, d.env), cwd: d.cwd, node: nodeOf(d.env) });
      return { content: [{ type: 'text' as const, text: answer.text }], ...(answer.isError ? { isError: true } : {}) };
    });
  }
  return server;
}

/** The route node a session is, from the environment `sleds engine` starts it with; ids checked as the route file's. */
function nodeOf(env: Record<string, string | undefined>): { route: string; node: string } | null {
  const route = env.SLEDS_ROUTE;
  const node = env.SLEDS_NODE;
  const id = /^[a-z0-9][a-z0-9-]{0,39}$/;
  return route && node && id.test(route) && id.test(node) ? { route, node } : null;
}

export async function runMcp(cliMain: string, version: string): Promise<number> {
  const paths = resolvePaths(process.env, homedir());
  const api = musherApi({ socketPath: paths.socketFile, cliMain, autostart: !process.env.SLEDS_NO_AUTOSTART });
  const server = buildMcpServer({ api, env: process.env, cwd: process.cwd(), version });
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
    process.stdin.once('end', () => resolve());
  });
  await server.connect(transport);
  await closed;
  await server.close().catch(() => undefined);
  return 0;
}
