import { execFile } from 'node:child_process';
import { findBinary } from '../find-binary.js';
import { desktopCommand, hasDisplay } from '../../core/notify/desktop-command.js';

/**
 * A desktop notification where one can be shown: notify-send on Linux (with a display), osascript on macOS. Skipped
 * silently otherwise — a missing notifier is not an error, the Slack notice and the prompt's answer still carry it.
 */

export interface DesktopDeps {
  platform?: string;
  env?: Record<string, string | undefined>;
  /** Default: SLEDS_NOTIFY_SEND / SLEDS_OSASCRIPT when set (an absolute path), else the binary on PATH. */
  findBinary?: (name: string) => string | null;
  /** Default: node's execFile with an argument array, 5 s timeout. Resolves true when the command exited 0. */
  run?: (file: string, args: string[]) => Promise<boolean>;
}

const TIMEOUT_MS = 5_000;
const OVERRIDE_VAR = { 'notify-send': 'SLEDS_NOTIFY_SEND', osascript: 'SLEDS_OSASCRIPT' } as const;

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
  const bin = deps.findBinary ? deps.findBinary(cmd.file) : findBinary(env, cmd.file, OVERRIDE_VAR[cmd.file]).bin;
  if (!bin) return false;
  try {
    return await (deps.run ?? runFile)(bin, cmd.args);
  } catch {
    return false;
  }
}
