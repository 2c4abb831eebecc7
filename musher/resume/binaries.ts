import { homedir } from 'node:os';
import { sessionHarnesses } from '../../harnesses/registry.js';
import { findBinary, installerFallbacks, TMUX_FALLBACKS, type BinaryLookup } from '../find-binary.js';
import { BINARY_NAMES, configuredBinary, DEFAULT_CONFIG, type BinaryName, type SledsConfig } from '../config/schema.js';
import type { Binaries } from './resume-job.js';

/**
 * A harness's binary by its adapter's name: config.yml's `binaries.<name>` when it has that key (and only it), else
 * PATH, else the places its installers put it.
 */
export function findHarnessBinary(name: string, configured: Record<BinaryName, string | null>, pathVar: string | undefined, home: string): BinaryLookup {
  const setting = (BINARY_NAMES as readonly string[]).includes(name) ? configuredBinary(configured, name as BinaryName) : null;
  return findBinary(name, setting, pathVar, installerFallbacks(name, home));
}

/**
 * The harness and tmux binaries musher runs: config.yml's `binaries` (and only it, when set), else PATH, else the
 * usual places. Never a SLEDS_* variable of the session that happened to start musher. Absolute paths only: musher
 * runs them without a shell. One entry per harness sleds keeps sessions of, by its adapter's binary name.
 */
export function findBinaries(configured: SledsConfig['binaries'] = DEFAULT_CONFIG.binaries, pathVar: string | undefined = process.env.PATH, home: string = homedir()): Binaries {
  const harnesses = Object.fromEntries(sessionHarnesses().map((a) => [a.binary.name, findHarnessBinary(a.binary.name, configured, pathVar, home).bin]));
  return { ...harnesses, tmux: findBinary('tmux', configuredBinary(configured, 'tmux'), pathVar, TMUX_FALLBACKS).bin };
}
