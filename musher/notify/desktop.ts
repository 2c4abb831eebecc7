import { execFile } from 'node:child_process';
import { findBinary } from '../find-binary.js';
import { configuredBinary, DEFAULT_CONFIG, type SledsConfig } from '../config/schema.js';
import { desktopCommand, hasDisplay } from '../../core/notify/desktop-command.js';

/**
 * A desktop notification where one can be shown: notify-send on Linux (with a display), osascript on macOS. Skipped
 * silently otherwise — a missing notifier is not an error, the Slack notice and the prompt's answer still carry it.
 */

export interface DesktopDeps {
  platform?: string;
  /** For the display check (DISPLAY, WAYLAND_DISPLAY) and PATH. */
  env?: Record<string, string | undefined>;
  /** config.yml's binaries.notifySend / binaries.osascript (only it, when set); else the binary on PATH. */
  binaries?: Partial<Pick<SledsConfig['binaries'], 'notifySend' | 'osascript'>>;
  /** Replaces the lookup (unit tests). */
  findBinary?: (name: string) => string | null;
  /** Default: node's execFile with an argument array, 5 s timeout. Resolves true when the command exited 0. */
  run?: (file: string, args: string[]) => Promise<boolean>;
}

const TIMEOUT_MS = 5_000;
const SETTING = { 'notify-send': 'notifySend', osascript: 'osascript' } as const;

function runFile(file: string, args: string[]): Promise<boolean> {
  return new Promise((resolve) => {
    execFile(file, args, { timeout: TIMEOUT_MS, windowsHide: true }, (err) => resolve(!err));
  });
}

/** Whether the notification was shown (handed to the platform's notifier, which exited 0). Never throws. */
export async function notifyDesktop(title: string, body: string, deps: DesktopDeps = {}): Promise<boolean> {
  const platform = deps.platform ?? process.platform;
  const env = deps.env ?? process.env;
  if (!hasDisplay(platform, env)) return false;
  const cmd = desktopCommand(platform, title, body);
  if (!cmd) return false;
  const bin = deps.findBinary
    ? deps.findBinary(cmd.file)
    : findBinary(cmd.file, configuredBinary({ ...DEFAULT_CONFIG.binaries, ...deps.binaries }, SETTING[cmd.file]), env.PATH).bin;
  if (!bin) return false;
  try {
    return await (deps.run ?? runFile)(bin, cmd.args);
  } catch {
    // The notifier failed to start: false says no notice was shown (a desktop notice is best effort).
    return false;
  }
}
