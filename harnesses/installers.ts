import { claudeCodeInstaller } from './claude-code/install.js';
import { codexInstaller } from './codex/install.js';
import type { HarnessInstaller } from './install-port.js';

/**
 * Every harness sleds install wires, in the order install, uninstall and doctor run them: one line per harness.
 * The first one begins install-state.json (its fields are the file's top level), so it comes first.
 */
export const HARNESS_INSTALLERS: readonly HarnessInstaller[] = [claudeCodeInstaller, codexInstaller];
