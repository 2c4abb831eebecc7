import { homedir } from 'node:os';
import { claudeFallbacks, findBinary, TMUX_FALLBACKS } from '../find-binary.js';
import { configuredBinary, DEFAULT_CONFIG, type SledsConfig } from '../config/schema.js';
import type { Binaries } from './resume-job.js';

/**
 * The harness and tmux binaries musher runs: config.yml's `binaries` (and only it, when set), else PATH, else the
 * usual places. Never a SLEDS_* variable of the session that happened to start musher. Absolute paths only: musher
 * runs them without a shell.
 */
export function findBinaries(configured: SledsConfig['binaries'] = DEFAULT_CONFIG.binaries, pathVar: string | undefined = process.env.PATH, home: string = homedir()): Binaries {
  return {
    claude: findBinary('claude', configuredBinary(configured, 'claude'), pathVar, claudeFallbacks(home)).bin,
    codex: findBinary('codex', configuredBinary(configured, 'codex'), pathVar).bin,
    tmux: findBinary('tmux', configuredBinary(configured, 'tmux'), pathVar, TMUX_FALLBACKS).bin,
  };
}
