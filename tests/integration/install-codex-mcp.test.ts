/**
 * `sleds install` puts the sleds MCP server into Codex's config.toml; the real codex binary reads it back
 * (`codex mcp get sleds --json`), the server it names answers over stdio, doctor reports it, and uninstall takes
 * it out again. A server named sleds that the user wrote stays theirs.
 */
import { execFile } from 'node:child_process';
import { readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { describe, expect, it } from 'vitest';
import { ensureCodexBinary } from '../e2e/harness/codex-binary.js';
import { REPO_ROOT, sleds, type SledsWorld } from '../support/sleds-env.js';
import { useBuiltCliAndBinary, useWorlds, withCodexHome, type CodexWorld } from '../support/worlds.js';

const run = promisify(execFile);
const root = realpathSync(REPO_ROOT);
const newWorld = useWorlds({ SLEDS_CLAUDE_BIN: '/nonexistent/claude', SLEDS_CODEX_BIN: '' });
const codexBin = useBuiltCliAndBinary(ensureCodexBinary);

function world(): CodexWorld {
  const w = withCodexHome(newWorld());
  w.env.SLEDS_CODEX_BIN = codexBin();
  return w;
}

async function codexMcpGet(w: CodexWorld): Promise<any> {
  const r = await run(codexBin(), ['mcp', 'get', 'sleds', '--json'], { env: { PATH: process.env.PATH ?? '', HOME: w.home, CODEX_HOME: w.codexHome }, cwd: w.root });
  return JSON.parse(r.stdout);
}

async function doctorStep(w: SledsWorld, id: string): Promise<{ status: string; message: string; fix?: string } | undefined> {
  const r = await sleds(w, ['doctor', '--json']);
  return (JSON.parse(r.stdout) as { steps: Array<{ id: string; status: string; message: string; fix?: string }> }).steps.find((s) => s.id === id);
}

describe('sleds install wires the MCP server into Codex', { timeout: 60_000 }, () => {
  it('Codex reads the server back, the server it names answers, doctor says so, uninstall gives the file back', async () => {
    const w = world();
    const configPath = join(w.codexHome, 'config.toml');
    const theirs = 'model = "gpt-5.1-codex"\n\n[mcp_servers.theirs]\ncommand = "their-server"\n';
    writeFileSync(configPath, theirs);

    const installed = await sleds(w, ['install']);
    expect(installed.code, installed.stdout + installed.stderr).toBe(0);
    expect(installed.stdout).toContain(`✓ Codex runs the sleds MCP server (mcp_servers.sleds in ${configPath})`);
    const got = await codexMcpGet(w);
    expect(got).toMatchObject({
      name: 'sleds',
      enabled: true,
      transport: { type: 'stdio', command: process.execPath, args: [join(root, 'dist', 'cli', 'main.js'), 'mcp'], env: { SLEDS_HOME: w.sledsHome } },
    });
    expect(readFileSync(configPath, 'utf8')).toContain('default_tools_approval_mode = "approve"');

    // The server exactly as Codex would start it (its env is Codex's short allow-list plus the table's).
    const t = got.transport as { command: string; args: string[]; env: Record<string, string> };
    const client = new Client({ name: 'codex-mcp-client', version: '0.169.0' });
    await client.connect(new StdioClientTransport({ command: t.command, args: t.args, env: { PATH: process.env.PATH ?? '', HOME: w.home, ...t.env }, stderr: 'pipe' }));
    try {
      const r = (await client.callTool({ name: 'status', arguments: {} })) as { content: Array<{ text?: string }>; isError?: boolean };
      expect(r.isError ?? false).toBe(false);
      expect(r.content[0]?.text).toContain('sleds · seat status');
    } finally {
      await client.close();
    }
    expect(await doctorStep(w, 'codex-mcp')).toMatchObject({ status: 'ok', message: 'Codex runs the sleds MCP server (mcp_servers.sleds)' });

    const again = await sleds(w, ['install']);
    expect(again.stdout).toContain('✓ Codex already runs the sleds MCP server');

    const gone = await sleds(w, ['uninstall']);
    expect(gone.code, gone.stdout + gone.stderr).toBe(0);
    expect(gone.stdout).toContain("✓ the sleds MCP server taken out of Codex's config");
    expect(readFileSync(configPath, 'utf8')).toBe(theirs);
    expect(await doctorStep(w, 'codex-mcp')).toBeUndefined(); // no sleds hooks: doctor stops at them
  });

  it("a sleds server the user defined is left alone, with a warning that says what to do", async () => {
    const w = world();
    const configPath = join(w.codexHome, 'config.toml');
    const theirs = '[mcp_servers.sleds]\ncommand = "/opt/my-sleds"\n';
    writeFileSync(configPath, theirs);
    const installed = await sleds(w, ['install']);
    expect(installed.stdout).toContain(`! ${configPath}: config.toml already defines mcp_servers.sleds itself, so sleds left it as it is`);
    expect(readFileSync(configPath, 'utf8').startsWith(theirs)).toBe(true);
    expect((await codexMcpGet(w)).transport.command).toBe('/opt/my-sleds');
    expect(await doctorStep(w, 'codex-mcp')).toMatchObject({ status: 'warn', message: `${configPath} defines mcp_servers.sleds itself (not written by sleds install)` });
  });
});
