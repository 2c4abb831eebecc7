import { resolvePaths } from '../../core/paths.js';
import { claudeFallbacks, findBinary, TMUX_FALLBACKS, type BinaryLookup, type BinarySetting } from '../find-binary.js';
import { loadConfig, type LoadedConfig } from './load.js';
import { BINARY_NAMES, configuredBinary, type BinaryName, type UpstreamName } from './schema.js';

/**
 * The settings as a `sleds` command sees them. The command runs in the user's own shell, so a SLEDS_* variable there
 * may override config.yml for that one command; musher never reads these variables (it is auto-started by whichever
 * session ran a hook first, and takes config.yml alone: musher/config/load.ts). One setting in config.yml therefore
 * works for both.
 */

type Env = Record<string, string | undefined>;

export const UPSTREAM_ENV: Readonly<Record<UpstreamName, string>> = {
  anthropic: 'SLEDS_ANTHROPIC_UPSTREAM',
  openai: 'SLEDS_OPENAI_UPSTREAM',
  claudeUsage: 'SLEDS_CLAUDE_USAGE_URL',
  slack: 'SLEDS_SLACK_API_URL',
  github: 'SLEDS_GITHUB_API',
};

export const BINARY_ENV: Readonly<Record<BinaryName, string>> = {
  claude: 'SLEDS_CLAUDE_BIN',
  codex: 'SLEDS_CODEX_BIN',
  tmux: 'SLEDS_TMUX_BIN',
  gh: 'SLEDS_GH_BIN',
  osascript: 'SLEDS_OSASCRIPT',
  notifySend: 'SLEDS_NOTIFY_SEND',
};

export interface CliSettings {
  loaded: LoadedConfig;
  upstream(name: UpstreamName): string;
  binary(name: BinaryName): BinarySetting | null;
}

export function cliSettings(env: Env, home: string): CliSettings {
  const loaded = loadConfig(resolvePaths(env, home).configDir, home);
  return {
    loaded,
    upstream: (name) => env[UPSTREAM_ENV[name]] || loaded.config.upstreams[name],
    binary: (name) => {
      const forced = env[BINARY_ENV[name]];
      return forced ? { path: forced, source: BINARY_ENV[name] } : configuredBinary(loaded.config.binaries, name);
    },
  };
}

/** claude for a command: SLEDS_CLAUDE_BIN, else config.yml's binaries.claude (and only it), else PATH, else the installers' places. */
export function findClaude(env: Env, home: string): BinaryLookup {
  return findBinary('claude', cliSettings(env, home).binary('claude'), env.PATH, claudeFallbacks(home));
}

/** A harness's binary for a command, by the adapter's binary name: claude's own lookup, else the same way as codex's. */
export function findHarnessBinary(env: Env, home: string, name: string): BinaryLookup {
  if (name === 'claude') return findClaude(env, home);
  const known = (BINARY_NAMES as readonly string[]).includes(name) ? cliSettings(env, home).binary(name as BinaryName) : null;
  return findBinary(name, known, env.PATH, []);
}

/** codex, tmux or gh for a command, the same way. */
export function findCliBinary(env: Env, home: string, name: 'codex' | 'tmux' | 'gh'): BinaryLookup {
  return findBinary(name, cliSettings(env, home).binary(name), env.PATH, name === 'tmux' ? TMUX_FALLBACKS : []);
}
