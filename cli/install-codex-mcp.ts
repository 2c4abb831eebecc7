import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from './claude-settings.js';
import { scanToml, type TomlLine } from './install-codex.js';
import type { Reporter } from './install-report.js';

/**
 * The sleds MCP server in Codex's config.toml (facts codex-cli §6): one `[mcp_servers.sleds]` table, in its own
 * marked block at the end of the file so that uninstall takes exactly it out. Codex asks before every MCP call by
 * default and `codex exec` cannot ask, so the tools are approved (`default_tools_approval_mode = "approve"`): they
 * read sleds' own state, and park/dispatch only change sleds' tasks.
 *
 * Codex starts MCP servers with a short allow-list of environment variables, so the variables that decide where
 * musher's socket is (SLEDS_HOME, XDG_*) are written into the table's env when install ran with them.
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

function tomlString(s: string): string {
  return JSON.stringify(s);
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
  lines: TomlLine[];
  /** Our block: indices of its marker lines. */
  block: { start: number; end: number } | null;
  /** A definition of mcp_servers.sleds outside our block (the user's own). */
  foreign: boolean;
}

function locate(text: string): Located {
  const lines = scanToml(text);
  const lineText = (l: TomlLine) => text.slice(l.start, l.end).trim();
  const s = lines.findIndex((l) => l.kind === 'other' && lineText(l) === MCP_BLOCK_START);
  const e = s < 0 ? -1 : lines.findIndex((l, j) => j > s && l.kind === 'other' && lineText(l) === MCP_BLOCK_END);
  const block = s >= 0 && e > s ? { start: s, end: e } : null;
  const inBlock = (j: number) => block !== null && j > block.start && j < block.end;
  const ours = (p: string[]) => p[0] === 'mcp_servers' && p[1] === MCP_SERVER_NAME;
  const foreign = lines.some((l, j) => {
    if (inBlock(j)) return false;
    if (l.kind === 'header') return ours(l.path!);
    if (l.kind === 'kv') return ours([...l.table!, ...l.path!]) || (l.table!.length === 0 && l.path![0] === 'mcp_servers' && l.path!.length === 1);
    return false;
  });
  return { lines, block, foreign };
}

/** config.toml with our block holding `spec` (added at the end, or replaced in place); the user's own sleds server wins. */
export function planCodexMcp(text: string, spec: CodexMcpSpec): { text: string; changed: boolean } | { conflict: string } {
  const { lines, block, foreign } = locate(text);
  const nl = text.includes('\r\n') ? '\r\n' : '\n';
  if (foreign) return { conflict: `config.toml already defines mcp_servers.${MCP_SERVER_NAME} itself` };
  const wanted = codexMcpBlock(spec, nl);
  let out: string;
  if (block) {
    const from = lines[block.start]!.start;
    const to = lines[block.end]!.end;
    const current = text.slice(from, to);
    out = text.slice(0, from) + (current.endsWith('\n') ? wanted : wanted.slice(0, -nl.length)) + text.slice(to);
  } else {
    const sep = text.length === 0 ? '' : text.endsWith('\n') ? nl : nl + nl;
    out = text + sep + wanted;
  }
  return { text: out, changed: out !== text };
}

/** config.toml without our block (and the blank line put before it). */
export function removeCodexMcp(text: string): string {
  const { lines, block } = locate(text);
  if (!block) return text;
  let from = lines[block.start]!.start;
  const to = lines[block.end]!.end;
  const before = text.slice(0, from);
  if (/\n\r?\n$/.test(before)) from -= before.endsWith('\r\n') ? 2 : 1;
  return text.slice(0, from) + text.slice(to);
}

/** What Codex would run for the sleds server, when our block is there. */
export function findCodexMcp(text: string): { command: string; args: string[] } | null {
  const { lines, block } = locate(text);
  if (!block) return null;
  let command: string | null = null;
  let args: string[] = [];
  for (const l of lines.slice(block.start + 1, block.end)) {
    if (l.kind !== 'kv' || l.table!.join('.') !== `mcp_servers.${MCP_SERVER_NAME}`) continue;
    try {
      if (l.path!.join('.') === 'command') command = JSON.parse(l.value!) as string;
      if (l.path!.join('.') === 'args') args = JSON.parse(l.value!) as string[];
    } catch {
      // A value that is not the JSON string or array sleds writes: not our entry.
      return null;
    }
  }
  return command ? { command, args } : null;
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
export function installCodexMcp(rep: Reporter, configPath: string, spec: CodexMcpSpec): void {
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
export function withoutCodexMcp(rep: Reporter, text: string): string {
  const out = removeCodexMcp(text);
  if (out !== text) rep.ok('codex-mcp', `the sleds MCP server taken out of Codex's config`);
  return out;
}

export function doctorCodexMcp(rep: Reporter, configPath: string): void {
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
