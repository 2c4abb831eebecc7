import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { notifyDesktop } from '../../musher/notify/desktop.js';

/** A stand-in notify-send (the only fake: the notification server is the edge of the world) that records its argv. */
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function fakeNotifier(exitCode = 0): { bin: string; argvFile: string } {
  const dir = mkdtempSync(join(tmpdir(), 'sl-desktop-'));
  dirs.push(dir);
  const argvFile = join(dir, 'argv.json');
  const bin = join(dir, 'notify-send');
  writeFileSync(bin, `#!${process.execPath}\nrequire('fs').writeFileSync(${JSON.stringify(argvFile)}, JSON.stringify(process.argv.slice(2)));\nprocess.exit(${exitCode});\n`);
  chmodSync(bin, 0o755);
  return { bin, argvFile };
}

describe('desktop notifications through a real child process', () => {
  it('runs notify-send with the strings as separate arguments, untouched by any shell', async () => {
    const { bin, argvFile } = fakeNotifier();
    const title = 'sleds: handed off to $(whoami) `id`';
    const shown = await notifyDesktop(title, "it's; rm -rf ~ && echo \"x\"", { platform: 'linux', env: { DISPLAY: ':0' }, binaries: { notifySend: bin } });
    expect(shown).toBe(true);
    expect(JSON.parse(readFileSync(argvFile, 'utf8'))).toEqual(['--app-name=sleds', '--', title, "it's; rm -rf ~ && echo \"x\""]);
  });

  it('a notifier that fails (no notification server) → not shown, no error', async () => {
    const { bin } = fakeNotifier(1);
    expect(await notifyDesktop('t', 'b', { platform: 'linux', env: { DISPLAY: ':0' }, binaries: { notifySend: bin } })).toBe(false);
  });

  it('SLEDS_NOTIFY_SEND in the environment is not run: only config.yml names the notifier', async () => {
    const { bin, argvFile } = fakeNotifier();
    const empty = mkdtempSync(join(tmpdir(), 'sl-desktop-'));
    dirs.push(empty);
    expect(await notifyDesktop('t', 'b', { platform: 'linux', env: { DISPLAY: ':0', PATH: empty, SLEDS_NOTIFY_SEND: bin } })).toBe(false);
    expect(existsSync(argvFile)).toBe(false);
  });

  it('no notify-send on PATH → not shown, no error', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'sl-desktop-'));
    dirs.push(empty);
    expect(await notifyDesktop('t', 'b', { platform: 'linux', env: { DISPLAY: ':0', PATH: empty } })).toBe(false);
  });
});
