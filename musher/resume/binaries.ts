import { homedir } from 'node:os';
import { findBinary, installerFallbacks, TMUX_FALLBACKS } from '../find-binary.js';
import { configuredBinary, DEFAULT_CONFIG, type SledsConfig } from '../config/schema.js';
import type { Binaries } from './resume-job.js';

/**
 * The harness and tmux binaries musher runs: config.yml's `binaries` (and only it, when set), else PATH, else the
 * usual places. Never a SLEDS_* variable of the session that happened to start musher. Absolute paths only: musher
 * runs them without a shell.
 */
export function findBinaries(configured: SledsConfig['binaries'] = DEFAULT_CONFIG.binaries, pathVar: string | undefined = process.env.PATH, home: string = homedir()): Binaries {
  // A harness's binary by its adapter's name: config.yml's binaries.<name>, else PATH, else its installers' places.
  const harness = (name: 'claude' | 'codex'): string | null => findBinary(name, configuredBinary(configured, name), pathVar, installerFallbacks(name, home)).bin;
  return {
    claude: harness('claude'),
    codex: harness('codex'),
    tmux: findBinary('tmux', configuredBinary(configured, 'tmux'), pathVar, TMUX_FALLBACKS).bin,
  };
}
