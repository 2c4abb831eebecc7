/**
 * The argv that shows a desktop notification, per platform. Pure: the caller checks the binary and the display,
 * and runs it with execFile (never a shell).
 *
 * macOS: the strings reach AppleScript as `argv` items of a run handler, never spliced into the script's source, so
 * no quote, backslash or newline in a title can change the script. The first argument is a fixed word so that
 * osascript's option parser stops before a title that starts with '-'.
 * Linux: notify-send with `--` before the strings, for the same reason.
 */

export type DesktopPlatform = 'linux' | 'darwin' | string;

export interface DesktopCommand {
  file: 'notify-send' | 'osascript';
  args: string[];
}

const OSASCRIPT_SOURCE = [
  'on run argv',
  'display notification (item 3 of argv) with title (item 2 of argv)',
  'end run',
];

/** Control characters out, one line, bounded: notification servers show a line or two. */
function clean(s: string, max: number): string {
  // eslint-disable-next-line no-control-regex
  const flat = s.replace(/[\u0000-\u001f\u007f]+/g, ' ').replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

export function desktopCommand(platform: DesktopPlatform, title: string, body: string): DesktopCommand | null {
  const t = clean(title, 120);
  const b = clean(body, 400);
  if (platform === 'linux') return { file: 'notify-send', args: ['--app-name=sleds', '--', t, b] };
  if (platform === 'darwin') return { file: 'osascript', args: [...OSASCRIPT_SOURCE.flatMap((line) => ['-e', line]), 'sleds', t, b] };
  return null;
}

/** Linux needs a graphical session to show anything; macOS's osascript finds its own (or fails, which is fine). */
export function hasDisplay(platform: DesktopPlatform, env: Record<string, string | undefined>): boolean {
  if (platform === 'linux') return Boolean(env.DISPLAY || env.WAYLAND_DISPLAY);
  return platform === 'darwin';
}
