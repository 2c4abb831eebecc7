import { resolvePaths } from '../../core/paths.js';
import { findBinary, installerFallbacks, TMUX_FALLBACKS, type BinaryLookup, type BinarySetting } from '../find-binary.js';
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

/**
 * A harness's binary for a command, by the adapter's binary name: SLEDS_<NAME>_BIN, else config.yml's
 * binaries.<name> (and only it), else PATH, else where the harness's installers put it (the adapter says).
 */
export function findHarnessBinary(env: Env, home: string, name: string): BinaryLookup {
  const setting = (BINARY_NAMES as readonly string[]).includes(name) ? cliSettings(env, home).binary(name as BinaryName) : null;
  return findBinary(name, setting, env.PATH, installerFallbacks(name, home));
}

/** codex, tmux or gh for a command, the same way. */
export function findCliBinary(env: Env, home: string, name: 'codex' | 'tmux' | 'gh'): BinaryLookup {
  return findBinary(name, cliSettings(env, home).binary(name), env.PATH, name === 'tmux' ? TMUX_FALLBACKS : []);
}
