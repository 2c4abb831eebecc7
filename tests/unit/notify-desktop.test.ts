import { describe, expect, it } from 'vitest';
import { desktopCommand, hasDisplay } from '../../core/notify/desktop-command.js';
import { notifyDesktop } from '../../musher/notify/desktop.js';

describe('the desktop notification argv', () => {
  it('Linux: notify-send, the strings after --', () => {
    expect(desktopCommand('linux', 'sleds: handed off to dana', 'Retry — /sled pickup abc')).toEqual({
      file: 'notify-send',
      args: ['--app-name=sleds', '--', 'sleds: handed off to dana', 'Retry — /sled pickup abc'],
    });
    expect(desktopCommand('linux', '-rf', '--urgency=critical')!.args.slice(-3)).toEqual(['--', '-rf', '--urgency=critical']);
  });

  it('macOS: the strings are argv items of a fixed script, never part of its source', () => {
    const title = 'say "hi" \\ & do shell script "rm -rf ~"';
    const cmd = desktopCommand('darwin', title, 'line1\nline2 "quoted"')!;
    expect(cmd.file).toBe('osascript');
    expect(cmd.args).toEqual([
      '-e', 'on run argv',
      '-e', 'display notification (item 3 of argv) with title (item 2 of argv)',
      '-e', 'end run',
      'sleds', title, 'line1 line2 "quoted"',
    ]);
    // Nothing the caller passes reaches a -e script.
    const scripts = cmd.args.filter((_, i) => cmd.args[i - 1] === '-e');
    expect(scripts.join('\n')).not.toContain('hi');
  });

  it('a title starting with - comes after the fixed first argument, so osascript does not read it as an option', () => {
    const args = desktopCommand('darwin', '-e', 'x')!.args;
    expect(args.slice(-3)).toEqual(['sleds', '-e', 'x']);
  });

  it('other platforms: nothing', () => expect(desktopCommand('win32', 't', 'b')).toBeNull());

  it.each([
    ['linux', {}, false],
    ['linux', { DISPLAY: ':0' }, true],
    ['linux', { WAYLAND_DISPLAY: 'wayland-0' }, true],
    ['darwin', {}, true],
    ['win32', { DISPLAY: ':0' }, false],
  ])('hasDisplay(%s, %j) = %s', (platform, env, shown) => expect(hasDisplay(platform, env)).toBe(shown));
});

describe('notifyDesktop', () => {
  const ran: Array<[string, string[]]> = [];
  const run = async (file: string, args: string[]) => {
    ran.push([file, args]);
    return true;
  };

  it('no binary → not shown, no error, nothing run', async () => {
    ran.length = 0;
    expect(await notifyDesktop('t', 'b', { platform: 'linux', env: { DISPLAY: ':0' }, findBinary: () => null, run })).toBe(false);
    expect(await notifyDesktop('t', 'b', { platform: 'darwin', env: {}, findBinary: () => null, run })).toBe(false);
    expect(ran).toEqual([]);
  });

  it('no display on Linux → not shown, nothing run', async () => {
    ran.length = 0;
    expect(await notifyDesktop('t', 'b', { platform: 'linux', env: {}, findBinary: () => '/usr/bin/notify-send', run })).toBe(false);
    expect(ran).toEqual([]);
  });

  it('runs the binary found with the argv built; a failing notifier is "not shown", never a throw', async () => {
    ran.length = 0;
    expect(await notifyDesktop('t', 'b', { platform: 'linux', env: { DISPLAY: ':0' }, findBinary: () => '/usr/bin/notify-send', run })).toBe(true);
    expect(ran).toEqual([['/usr/bin/notify-send', ['--app-name=sleds', '--', 't', 'b']]]);
    const throwing = async () => {
      throw new Error('boom');
    };
    expect(await notifyDesktop('t', 'b', { platform: 'linux', env: { DISPLAY: ':0' }, findBinary: () => '/x', run: throwing })).toBe(false);
  });
});
