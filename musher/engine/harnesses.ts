import { harnessById } from '../../harnesses/registry.js';
import type { SledsConfig } from '../config/schema.js';
import { findHarnessBinary } from '../resume/binaries.js';
import type { EngineNode, Harnesses } from './ports.js';

/**
 * The harness a node runs in: its own (`harness:` in the route file), else the seat's default (`engine.harness` in the
 * policy); sleds never picks one for you, so a node with neither needs a person. The binary is config.yml's
 * `binaries.<name>` when set, else the adapter's binary on PATH. The environment is the engine's own plus where the
 * node is, so the agent's `park` verb and its setup know which node they belong to.
 */
/** The variables that say where musher's socket is (core/paths.ts). */
const MCP_PATH_VARS = ['SLEDS_HOME', 'XDG_RUNTIME_DIR', 'XDG_DATA_HOME', 'XDG_STATE_HOME', 'XDG_CONFIG_HOME', 'HOME'] as const;

export function registryHarnesses(opts: {
  defaultHarness: (node: EngineNode) => string | null;
  binaries: SledsConfig['binaries'];
  env: NodeJS.ProcessEnv;
  home: string;
  portBase: (n: EngineNode) => number;
  /** `sleds mcp` as a command (this sleds): every node's agent gets it, to park a question. */
  sledsMcp?: { command: string; args: string[]; env?: Record<string, string> } | null;
}): Harnesses {
  return {
    forNode(node) {
      const id = node.harness ?? opts.defaultHarness(node);
      if (!id) return { ok: false, error: "no harness named — give the node `harness:` in its route file, or set `engine.harness` in .sleds/policy.yml" };
      const found = harnessById(id);
      if (!found.ok) return { ok: false, error: found.error };
      const name = found.adapter.binary.name;
      const bin = findHarnessBinary(name, opts.binaries, opts.env.PATH, opts.home);
      if (!bin.bin) return { ok: false, error: `${found.adapter.displayName} (${name}) was not found (${bin.how}) — install ${found.adapter.binary.installs} or set binaries.${name} in config.yml` };
      const env: Record<string, string> = {};
      for (const [k, v] of Object.entries(opts.env)) if (v !== undefined) env[k] = v;
      env.SLEDS_ROUTE = node.routeKey;
      env.SLEDS_NODE = node.nodeId;
      env.SLEDS_PORT_BASE = String(opts.portBase(node));
      // The MCP server is told the node and where musher is itself: Codex starts it with a short allow-list of variables.
      const mcpEnv: Record<string, string> = { SLEDS_ROUTE: node.routeKey, SLEDS_NODE: node.nodeId };
      for (const k of MCP_PATH_VARS) if (env[k]) mcpEnv[k] = env[k]!;
      const sledsMcp = opts.sledsMcp ? { ...opts.sledsMcp, env: { ...opts.sledsMcp.env, ...mcpEnv } } : null;
      return { ok: true, adapter: found.adapter, bin: bin.bin, env, sledsMcp };
    },
  };
}
