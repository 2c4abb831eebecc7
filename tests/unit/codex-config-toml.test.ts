/**
 * Codex's config.toml as sleds edits it (the trust block for its hooks, the sleds MCP server block), with nasty
 * inputs. What counts is what a TOML parser (and so Codex) reads back: every planned file is parsed with smol-toml
 * and must hold exactly the user's values plus sleds' entries; uninstall must give the user's bytes back; a file
 * that is not TOML is refused with the line that is wrong.
 */
import { parse } from 'smol-toml';
import { describe, expect, it } from 'vitest';
import { planTrust, removeTrust } from '../../harnesses/codex/trust.js';
import { planCodexMcp, removeCodexMcp } from '../../harnesses/codex/mcp-config.js';

const HOOKS = '/h/.codex/hooks.json';
const K = (event: string, group = 0) => `${HOOKS}:${event}:${group}:0`;
const WANTED = [
  { key: K('stop', 1), hash: 'sha256:1' },
  { key: K('session_start'), hash: 'sha256:2' },
];
const SPEC = { nodePath: '/usr/bin/node', root: '/opt/sleds', env: { SLEDS_HOME: '/tmp/s h' } };
const OUR_MCP = { command: '/usr/bin/node', args: ['/opt/sleds/dist/cli/main.js', 'mcp'], default_tools_approval_mode: 'approve', env: { SLEDS_HOME: '/tmp/s h' } };

type Table = Record<string, any>;
const model = (text: string): Table => JSON.parse(JSON.stringify(parse(text))) as Table;

/** The user's values with sleds' trust entries and MCP server added: what Codex must read from the planned file. */
function withOurs(original: Table): Table {
  const out = JSON.parse(JSON.stringify(original)) as Table;
  out.hooks ??= {};
  out.hooks.state ??= {};
  for (const w of WANTED) out.hooks.state[w.key] = { ...(out.hooks.state[w.key] ?? {}), trusted_hash: w.hash };
  out.mcp_servers ??= {};
  out.mcp_servers.sleds = OUR_MCP;
  return out;
}

function install(text: string): { text: string; edited: any } {
  const trust = planTrust(text, WANTED, []);
  if ('blocker' in trust) throw new Error(`blocker: ${trust.blocker}`);
  const mcp = planCodexMcp(trust.text, SPEC);
  if ('conflict' in mcp) throw new Error(`conflict: ${mcp.conflict}`);
  return { text: mcp.text, edited: trust.edited };
}

function uninstall(text: string, edited: any): string {
  return removeTrust(removeCodexMcp(text), {
    home: '/h/.codex',
    bin: null,
    version: null,
    hooksJson: { path: HOOKS, existedBefore: true, originalSha256: null, backupPath: null, backups: [], hadHooksKey: true, hadEvents: [] },
    configToml: { path: '/h/.codex/config.toml', existedBefore: true, originalSha256: null, backupPath: null, backups: [], edited },
    hooks: WANTED.map((w) => ({ event: 'Stop', command: 'x', timeout: 10, ...w })),
  });
}

const MCP_START = "# >>> [sleds mcp] the sleds MCP server (written by 'sleds install'; 'sleds uninstall' removes it) >>>";

/** Valid TOML, each with a trap: sleds must add its entries, Codex must read the user's values unchanged. */
const accepted: Array<[string, string]> = [
  ['comments everywhere', '# mine\nmodel = "o3" # the model\n\n[features] # flags\nplugins = false # off\n# the end\n'],
  ['a multi-line string holding what looks like sleds’ tables and markers', `notes = """\n${MCP_START}\n[mcp_servers.sleds]\ncommand = "not a server"\n# <<< [sleds mcp] <<<\n[hooks.state."${K('stop', 1)}"]\ntrusted_hash = "a string"\n"""\n`],
  ['a literal multi-line string with a header in it', "notes = '''\n[hooks.state.\"x\"]\n'''\nmodel = 'o3'\n"],
  ['inline tables and arrays over several lines', 'tui = { theme = "dark", keys = { quit = "q" } }\nlist = [\n  "a", # one\n  { b = "]" },\n]\n'],
  ['an inline table for one server under [mcp_servers]', '[mcp_servers]\ntheirs = { command = "their-server", args = ["--x"] }\n'],
  ['arrays of tables', '[[profiles.list]]\nname = "a"\n[[profiles.list]]\nname = "b"\n'],
  ['CRLF line endings', 'model = "o3"\r\n[projects."/x"]\r\ntrust_level = "trusted"\r\n'],
  ['no final newline', '[projects."/x"]\ntrust_level = "trusted"'],
  ['a date-time with a space and quoted, dotted keys', 'when = 1979-05-27 07:32:00Z\n"a.b".c = 1\n[ t . "u.v" ]\nw = 2\n'],
  ['a stale trust entry of theirs at a key sleds uses, with comments', `[hooks.state.'${K('stop', 1)}'] # theirs\nenabled = true\ntrusted_hash = "sha256:old" # stale\n`],
  ['hooks.state written as dotted keys at the top level, for a hook of theirs', `hooks.state."${K('pre_tool_use')}".trusted_hash = "sha256:theirs"\n`],
  ['hooks.state as a table with dotted keys inside, for a hook of theirs', `[hooks.state]\n"${K('pre_tool_use')}".trusted_hash = "sha256:theirs"\n`],
  ['[hooks] with other keys of theirs', '[hooks]\nenabled = true\n'],
];

describe('config.toml: sleds adds its entries and Codex reads everything else unchanged', () => {
  it.each(accepted)('%s', (_name, original) => {
    const before = model(original);
    const { text, edited } = install(original);
    expect(model(text)).toEqual(withOurs(before));
    if (original.includes('\r\n')) expect(text.replace(/\r\n/g, '')).not.toContain('\n');
    // Installing again changes nothing.
    expect(install(text).text).toBe(text);
    // Uninstall: the user's values as they were, and their bytes too (up to the blank lines at the end).
    const back = uninstall(text, edited);
    expect(model(back)).toEqual(before);
    expect(back.replace(/\s+$/, '')).toBe(original.replace(/\s+$/, ''));
  });
});

/** Forms sleds must not write next to: planning refuses (a warning at install), and nothing is changed. */
const refused: Array<[string, string, 'trust' | 'mcp']> = [
  ['hooks as an inline table', 'hooks = { state = {} }\n', 'trust'],
  ['hooks.state as an inline table under [hooks]', '[hooks]\nstate = {}\n', 'trust'],
  ['hooks.state as an array of tables', '[[hooks.state]]\nx = 1\n', 'trust'],
  ['a key sleds uses, trusted by a dotted key of theirs', `[hooks.state]\n"${K('stop', 1)}".trusted_hash = "sha256:old"\n`, 'trust'],
  ['mcp_servers.sleds of their own', '[mcp_servers.sleds]\ncommand = "/opt/my-sleds"\n', 'mcp'],
  ['mcp_servers.sleds of their own, as dotted keys', 'mcp_servers.sleds.command = "/opt/my-sleds"\n', 'mcp'],
  ['mcp_servers.sleds of their own, as an inline table', '[mcp_servers]\nsleds = { command = "/opt/my-sleds" }\n', 'mcp'],
  ['only a sub-table of mcp_servers.sleds of their own', '[mcp_servers.sleds.env]\nX = "1"\n', 'mcp'],
  ['mcp_servers as an inline table', 'mcp_servers = { theirs = { command = "x" } }\n', 'mcp'],
];

describe('config.toml: forms sleds does not write next to are refused', () => {
  it.each(refused)('%s', (_name, original, part) => {
    if (part === 'trust') expect('blocker' in planTrust(original, WANTED, [])).toBe(true);
    else expect('conflict' in planCodexMcp(original, SPEC)).toBe(true);
  });
});

/** Not TOML (Codex refuses to start on these): refused with the line that is wrong. */
const malformed: Array<[string, string, number]> = [
  ['an unterminated string', 'model = "o3"\nnotes = "unterminated\n', 2],
  ['two values on a line', '[features]\nplugins = false true\n', 2],
  ['a key given twice', 'model = "o3"\nmodel = "o4"\n', 2],
  ['a table given twice', '[features]\nplugins = false\n[features]\nother = 1\n', 3],
  ['a value that is not one', 'model = "o3"\n\nplugins = tru\n', 3],
  ['a sub-table of a plain value', 'model = "o3"\n[model.x]\n', 2],
];

describe('config.toml: a file that is not TOML is refused with its line', () => {
  it.each(malformed)('%s', (_name, text, line) => {
    expect(() => planTrust(text, WANTED, [])).toThrow(new RegExp(`line ${line}\\b`));
    expect(() => planCodexMcp(text, SPEC)).toThrow(new RegExp(`line ${line}\\b`));
  });
});
