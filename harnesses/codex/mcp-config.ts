import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../install-files.js';
import type { ReportSink } from '../install-port.js';
import { cloneTable, isTable, tableAt, TomlText, tomlString, verifiedEdit, type TextEdit, type TomlTable } from './config-toml.js';

/**
 * The sleds MCP server in Codex's config.toml (facts codex-cli §6): one `[mcp_servers.sleds]` table, in its own
 * marked block at the end of the file so that uninstall takes exactly it out. Codex asks before every MCP call by
 * default and `codex exec` cannot ask, so the tools are approved (`default_tools_approval_mode = "approve"`): they
 * read sleds' own state, and park/dispatch only change sleds' tasks.
 *
 * Codex starts MCP servers with a short allow-list of environment variables, so the variables that decide where
 * musher's socket is (SLEDS_HOME, XDG_*) are written into the table's env when install ran with them.
 *
 * The file is read with smol-toml and edited as text, each edit checked by parsing the result (config-toml.ts).
 */

export const MCP_SERVER_NAME = 'sleds';
const MCP_BLOCK_START = "# >>> [sleds mcp] the sleds MCP server (written by 'sleds install'; 'sleds uninstall' removes it) >>>";
const MCP_BLOCK_END = '# <<< [sleds mcp] <<<';
/** The variables that move musher's socket (core/paths.ts). */
const PATH_VARS = ['SLEDS_HOME', 'XDG_RUNTIME_DIR', 'XDG_DATA_HOME', 'XDG_STATE_HOME', 'XDG_CONFIG_HOME'] as const;

export interface CodexMcpSpec {
  nodePath: string;
  /** This sleds package's root: the server is `<node> <root>/dist/cli/main.js mcp`. */
  root: string;
  env: Record<string, string | undefined>;
}

export function codexMcpArgs(root: string): string[] {
  return [join(root, 'dist', 'cli', 'main.js'), 'mcp'];
}

/** The marked block, in the file's line endings. */
export function codexMcpBlock(spec: CodexMcpSpec, nl = '\n'): string {
  const out = [
    MCP_BLOCK_START,
    `[mcp_servers.${MCP_SERVER_NAME}]`,
    `command = ${tomlString(spec.nodePath)}`,
    `args = [${codexMcpArgs(spec.root).map(tomlString).join(', ')}]`,
    'default_tools_approval_mode = "approve"',
  ];
  const env = PATH_VARS.filter((k) => spec.env[k]);
  if (env.length) {
    out.push(`[mcp_servers.${MCP_SERVER_NAME}.env]`);
    for (const k of env) out.push(`${k} = ${tomlString(spec.env[k]!)}`);
  }
  out.push(MCP_BLOCK_END);
  return out.join(nl) + nl;
}

interface Located {
  doc: TomlText;
  /** Our block: indices of its marker lines, and what it defines. */
  block: { start: number; end: number; model: TomlTable } | null;
  /** A definition of mcp_servers.sleds (or part of one) outside our block: the user's own. */
  foreign: boolean;
}

/** Throws TomlSyntaxError when the text is not TOML. */
function locate(text: string): Located {
  const doc = new TomlText(text);
  const block = doc.block((t) => t === MCP_BLOCK_START, (t) => t === MCP_BLOCK_END);
  const server = (m: TomlTable): unknown => (isTable(m.mcp_servers) ? m.mcp_servers[MCP_SERVER_NAME] : undefined);
  const theirs = server(doc.model);
  const ours = block ? server(block.model) : undefined;
  // TOML defines a table once, so what the whole file says differs from our block's exactly when the user wrote
  // some of it (the server itself, or a sub-table such as [mcp_servers.sleds.env]).
  const foreign = theirs !== undefined && (ours === undefined || JSON.stringify(theirs) !== JSON.stringify(ours));
  return { doc, block, foreign };
}

function withoutServer(model: TomlTable): TomlTable {
  const out = cloneTable(model);
  if (isTable(out.mcp_servers)) delete out.mcp_servers[MCP_SERVER_NAME];
  return out;
}

/** config.toml with our block holding `spec` (added at the end, or replaced in place); the user's own sleds server wins. */
export function planCodexMcp(text: string, spec: CodexMcpSpec): { text: string; changed: boolean } | { conflict: string } {
  const { doc, block, foreign } = locate(text);
  const nl = doc.eol;
  if (foreign) return { conflict: `config.toml already defines mcp_servers.${MCP_SERVER_NAME} itself` };
  const wanted = codexMcpBlock(spec, nl);
  const edits: TextEdit[] = [];
  if (block) {
    const from = doc.lines[block.start]!.start;
    const to = doc.lines[block.end]!.end;
    const current = text.slice(from, to);
    edits.push([from, to, current.endsWith('\n') ? wanted : wanted.slice(0, -nl.length)]);
  } else {
    const sep = text.length === 0 ? '' : text.endsWith('\n') ? nl : nl + nl;
    edits.push([text.length, text.length, sep + wanted]);
  }
  const expected = withoutServer(doc.model);
  const servers = tableAt(expected, ['mcp_servers']);
  if (!servers) return { conflict: 'config.toml has an mcp_servers that is not a table' };
  servers[MCP_SERVER_NAME] = (new TomlText(wanted).model.mcp_servers as TomlTable)[MCP_SERVER_NAME];
  const out = verifiedEdit(text, edits, expected);
  if ('refused' in out) {
    return { conflict: out.refused.includes('would not be TOML') ? 'config.toml defines mcp_servers as an inline table, which sleds cannot add a server to' : `config.toml cannot take the sleds server without changing other values (${out.refused})` };
  }
  return { text: out.text, changed: out.text !== text };
}

/** config.toml without our block (and the blank line put before it). Throws when the file is not TOML. */
export function removeCodexMcp(text: string): string {
  const { doc, block } = locate(text);
  if (!block) return text;
  let from = doc.lines[block.start]!.start;
  const to = doc.lines[block.end]!.end;
  const before = text.slice(0, from);
  if (/\n\r?\n$/.test(before)) from -= before.endsWith('\r\n') ? 2 : 1;
  const out = verifiedEdit(text, [[from, to, '']], withoutServer(doc.model));
  if ('refused' in out) throw new Error(`the sleds MCP server cannot be taken out without changing other values (${out.refused})`);
  return out.text;
}

/** What Codex would run for the sleds server, when our block is there. */
export function findCodexMcp(text: string): { command: string; args: string[] } | null {
  const { doc, block } = locate(text);
  if (!block) return null;
  const servers = doc.model.mcp_servers;
  const server = isTable(servers) ? servers[MCP_SERVER_NAME] : undefined;
  if (!isTable(server) || typeof server.command !== 'string') return null;
  const args = Array.isArray(server.args) && server.args.every((a) => typeof a === 'string') ? (server.args as string[]) : [];
  return { command: server.command, args };
}

// ---------------------------------------------------------------------------------------------------------------
// The install, uninstall and doctor steps (one report line each, id 'codex-mcp').

function readMaybe(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
}

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** Adds (or brings up to date) the sleds server in Codex's config.toml. Never throws. */
export function installCodexMcp(rep: ReportSink, configPath: string, spec: CodexMcpSpec): void {
  try {
    const text = readMaybe(configPath) ?? '';
    const plan = planCodexMcp(text, spec);
    if ('conflict' in plan) {
      rep.warn('codex-mcp', `${configPath}: ${plan.conflict}, so sleds left it as it is`, `point it at '${spec.nodePath} ${codexMcpArgs(spec.root).join(' ')}', or remove it and run sleds install again`, { path: configPath });
      return;
    }
    if (plan.changed) writeFileAtomic(configPath, plan.text, 0o600);
    rep.ok('codex-mcp', plan.changed ? `Codex runs the sleds MCP server (mcp_servers.${MCP_SERVER_NAME} in ${configPath})` : 'Codex already runs the sleds MCP server', {
      changed: plan.changed,
      path: configPath,
      tools: `mcp__${MCP_SERVER_NAME}`,
    });
  } catch (e) {
    rep.fail('codex-mcp', `cannot add the sleds MCP server to ${configPath} (${message(e)})`, 'check the file is TOML and its folder writable, then run sleds install again');
  }
}

/** config.toml text without the sleds server block, for the uninstall that follows (which writes the file). */
export function withoutCodexMcp(rep: ReportSink, text: string): string {
  const out = removeCodexMcp(text);
  if (out !== text) rep.ok('codex-mcp', `the sleds MCP server taken out of Codex's config`);
  return out;
}

export function doctorCodexMcp(rep: ReportSink, configPath: string): void {
  let found: ReturnType<typeof findCodexMcp>;
  try {
    const text = readMaybe(configPath) ?? '';
    if (locate(text).foreign) {
      rep.warn('codex-mcp', `${configPath} defines mcp_servers.${MCP_SERVER_NAME} itself (not written by sleds install)`, "check it runs 'sleds mcp' (node <sleds>/dist/cli/main.js mcp)", { path: configPath });
      return;
    }
    found = findCodexMcp(text);
  } catch (e) {
    rep.fail('codex-mcp', `${configPath} cannot be read (${message(e)})`, 'fix it, then run sleds install again');
    return;
  }
  if (!found) {
    rep.fail('codex-mcp', `Codex has no sleds MCP server in ${configPath}`, 'run sleds install', { path: configPath });
    return;
  }
  const missing = [found.command, ...found.args].filter((p) => p.startsWith('/') && !existsSync(p));
  if (missing.length) rep.fail('codex-mcp', `Codex's sleds MCP server runs ${missing[0]}, which no longer exists`, 'run sleds install again', { path: configPath });
  else rep.ok('codex-mcp', `Codex runs the sleds MCP server (mcp_servers.${MCP_SERVER_NAME})`, { path: configPath, command: found.command, args: found.args });
}
