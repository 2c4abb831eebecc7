import { homedir } from 'node:os';
import { findBinary, findClaude } from '../find-binary.js';
import type { Binaries } from './resume-job.js';

/**
 * The harness and tmux binaries, found the way the CLI finds them (SLEDS_CLAUDE_BIN / SLEDS_CODEX_BIN /
 * SLEDS_TMUX_BIN, else PATH, else the usual places). Absolute paths only: musher runs them without a shell.
 */
export function findBinaries(env: Record<string, string | undefined> = process.env, home: string = homedir()): Binaries {
  return {
    claude: findClaude(env, home).bin,
    codex: findBinary(env, 'codex', 'SLEDS_CODEX_BIN').bin,
    tmux: findBinary(env, 'tmux', 'SLEDS_TMUX_BIN', ['/usr/bin/tmux', '/usr/local/bin/tmux', '/opt/homebrew/bin/tmux']).bin,
  };
}
