import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { encodeEnvFile } from '../../core/exec-env-file.js';
import { CLI, waitFor } from '../support/sleds-env.js';

/**
 * `sleds exec-env <file> -- <program…>` (the CLI from source, real processes): what a pane musher restarts runs, so the
 * gateway token reaches the harness through a 0600 file instead of an argv.
 */

const TOKEN = 'sleds_gw_0123456789abcdefghijklmnopqrstuvwxyzABCDEFG';
let root: string;

beforeEach(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), 'sl-xenv-')));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

interface Ended {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

function wrapper(args: string[], opts: { detached?: boolean } = {}) {
  const child = spawn(process.execPath, [...CLI, 'exec-env', ...args], { cwd: root, env: { PATH: process.env.PATH, HOME: root }, detached: opts.detached ?? false, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const ended = new Promise<Ended>((resolve) => child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })));
  return { child, ended };
}

function envFile(env: Record<string, string>, mode = 0o600, name = 'env-0123456789abcdef01234567.json'): string {
  const file = join(root, name);
  writeFileSync(file, encodeEnvFile(env), { mode });
  chmodSync(file, mode);
  return file;
}

/** A harness stand-in: prints what it was given, exits with the code asked for. */
const SHOW = `process.stdout.write(JSON.stringify({ argv: process.argv.slice(2), token: process.env.ANTHROPIC_AUTH_TOKEN, url: process.env.ANTHROPIC_BASE_URL, home: process.env.HOME })); process.exit(7);`;

describe('sleds exec-env', () => {
  it('starts the program with the variables added, the file removed first, and exits with its code', async () => {
    const file = envFile({ ANTHROPIC_AUTH_TOKEN: TOKEN, ANTHROPIC_BASE_URL: 'http://127.0.0.1:4100' });
    const show = join(root, 'show.js');
    writeFileSync(show, SHOW);
    const { ended } = wrapper([file, '--', process.execPath, show, '--', '--resume=x', '-p']);
    const r = await ended;
    expect(r.code).toBe(7);
    expect(r.stderr).toBe('');
    expect(JSON.parse(r.stdout)).toEqual({ argv: ['--', '--resume=x', '-p'], token: TOKEN, url: 'http://127.0.0.1:4100', home: root });
    expect(existsSync(file)).toBe(false);
  });

  it.each<[string, () => string[], RegExp, { removed?: boolean }]>([
    ['a file that is gone', () => [join(root, 'env-none.json'), '--', 'true'], /^sleds: exec-env: \/.*env-none\.json is gone \(it is read once\) — take the exit at the wall again\n$/, {}],
    ['a file others can read', () => [envFile({ ANTHROPIC_AUTH_TOKEN: TOKEN }, 0o644), '--', 'true'], /could be read by other users \(mode 644\) — refusing it\n$/, { removed: true }],
    ['a symbolic link', () => {
      const target = envFile({ ANTHROPIC_AUTH_TOKEN: TOKEN });
      const link = join(root, 'env-link.json');
      symlinkSync(target, link);
      return [link, '--', 'true'];
    }, /env-link\.json is a symbolic link — refusing it\n$/, {}],
    ['a file that is not an env file', () => {
      const file = join(root, 'env-bad.json');
      writeFileSync(file, JSON.stringify({ v: 1, env: { 'BAD-NAME': 'x' } }), { mode: 0o600 });
      return [file, '--', 'true'];
    }, /names 'BAD-NAME', which is not an environment variable name\n$/, { removed: true }],
  ])('refuses %s in one line and starts nothing', async (_name, args, message, { removed }) => {
    const marker = join(root, 'started');
    const a = args();
    const { ended } = wrapper([a[0]!, '--', process.execPath, '-e', `require('node:fs').writeFileSync(${JSON.stringify(marker)}, 'x')`]);
    const r = await ended;
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(message);
    expect(r.stderr.split('\n')).toHaveLength(2);
    expect(r.stderr).not.toContain(TOKEN);
    expect(existsSync(marker)).toBe(false);
    if (removed) expect(existsSync(a[0]!)).toBe(false);
  });

  it('without a file and a -- it says how it is called (exit 2)', async () => {
    const r = await wrapper(['just-a-file']).ended;
    expect(r.code).toBe(2);
    expect(r.stderr).toBe('sleds: exec-env takes <file> -- <program> [args…] (musher runs it in a pane it restarts)\n');
  });

  /** A harness that counts the signals it gets, says when it is ready, and exits 3 on SIGTERM. */
  const COUNTER = (log: string) => `
    const fs = require('node:fs'); let ints = 0;
    process.on('SIGINT', () => { ints++; fs.appendFileSync(${JSON.stringify(log)}, 'INT\\n'); });
    process.on('SIGTERM', () => { fs.appendFileSync(${JSON.stringify(log)}, 'TERM ints=' + ints + '\\n'); process.exit(3); });
    fs.appendFileSync(${JSON.stringify(log)}, 'ready\\n'); setInterval(() => {}, 1 << 30);`;

  it("a Ctrl-C (SIGINT to the pane's process group) reaches the harness once and leaves the wrapper; a SIGTERM to the wrapper is passed on", async () => {
    const log = join(root, 'signals.log');
    const { child, ended } = wrapper([envFile({ X: '1' }), '--', process.execPath, '-e', COUNTER(log)], { detached: true });
    await waitFor('the harness ready', () => existsSync(log) && readFileSync(log, 'utf8').includes('ready'));
    // What the terminal does on Ctrl-C: the signal to every process of the foreground group.
    process.kill(-child.pid!, 'SIGINT');
    await waitFor('the harness got the Ctrl-C', () => readFileSync(log, 'utf8').includes('INT'));
    process.kill(child.pid!, 'SIGTERM');
    const r = await ended;
    expect(readFileSync(log, 'utf8')).toBe('ready\nINT\nTERM ints=1\n');
    // The wrapper outlived the Ctrl-C and ended with the harness's own code.
    expect({ code: r.code, signal: r.signal }).toEqual({ code: 3, signal: null });
  });

  it('a harness killed by a signal: the wrapper ends by the same signal', async () => {
    const log = join(root, 'plain.log');
    const { child, ended } = wrapper([envFile({ X: '1' }), '--', process.execPath, '-e', `require('node:fs').writeFileSync(${JSON.stringify(log)}, 'ready'); setInterval(() => {}, 1 << 30);`], { detached: true });
    await waitFor('the harness ready', () => existsSync(log));
    process.kill(child.pid!, 'SIGHUP');
    const r = await ended;
    expect({ code: r.code, signal: r.signal }).toEqual({ code: null, signal: 'SIGHUP' });
  });

  it('a program that cannot start: one line, exit 127', async () => {
    const r = await wrapper([envFile({ X: '1' }), '--', join(root, 'no-such-claude')]).ended;
    expect(r.code).toBe(127);
    expect(r.stderr).toMatch(/^sleds: exec-env: could not start \/.*no-such-claude: spawn .* ENOENT\n$/);
  });
});
