/**
 * `sleds` as a command: `sleds install` links it into ~/.local/bin (the user's PATH), doctor checks it, uninstall
 * removes it — only a link that is sleds' own. Run from source with a throwaway HOME and a PATH of our making,
 * and the linked `sleds` run by name from a folder that is not this package. Needs `npm run build` first.
 */
import { execFile } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, readFileSync, readlinkSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, SHIPPED_CLI, sleds, type SledsWorld } from '../support/sleds-env.js';
import { useWorlds } from '../support/worlds.js';

const world = useWorlds({ CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1' });

beforeAll(() => {
  if (!existsSync(SHIPPED_CLI)) throw new Error(`${SHIPPED_CLI} is missing — run 'npm run build' first`);
});

interface Step {
  id: string;
  status: 'ok' | 'fail' | 'warn' | 'info';
  message: string;
  fix?: string;
  detail?: Record<string, unknown>;
}

/** A world with no claude (the plugin goes in through settings.json: fast) and a PATH holding node but no sleds. */
function seat(opts: { localBinOnPath: boolean }): SledsWorld & { bin: string; project: string } {
  const w = world({});
  w.env.SLEDS_CLAUDE_BIN = join(w.root, 'no-such-claude');
  const bin = join(w.home, '.local', 'bin');
  const base = [dirname(process.execPath), '/usr/bin', '/bin'];
  w.env.PATH = (opts.localBinOnPath ? [bin, ...base] : base).join(delimiter);
  const project = join(w.root, 'their-project');
  mkdirSync(project);
  return Object.assign(w, { bin, project });
}

/** `sleds <args>` by name, as the user types it in their own project: found on PATH, not given by path. */
function byName(w: SledsWorld, args: string[], cwd: string): Promise<{ code: number | string; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile('sleds', args, { env: w.env, cwd, timeout: 60_000 }, (err, stdout, stderr) => {
      const code = err ? ((err as { code?: number | string }).code ?? 1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

async function steps(w: SledsWorld, args: string[]): Promise<{ code: number; steps: Step[] }> {
  const r = await sleds(w, [...args, '--json']);
  return { code: r.code, steps: (JSON.parse(r.stdout) as { steps: Step[] }).steps };
}

const stepOf = (all: Step[], id: string): Step | undefined => all.find((s) => s.id === id);

describe('the sleds command on the PATH', () => {
  it('install links it into ~/.local/bin; it runs by name from the user\'s project; doctor says so; uninstall removes it', async () => {
    const w = seat({ localBinOnPath: true });
    const before = await byName(w, ['--version'], w.project);
    expect(before.code).toBe('ENOENT'); // nothing puts sleds on the PATH before the install

    const installed = await steps(w, ['install']);
    expect(installed.code).toBe(0);
    const link = join(w.bin, 'sleds');
    expect(stepOf(installed.steps, 'command')).toMatchObject({ status: 'ok', message: `sleds command linked: ${link} → ${realpathSync(SHIPPED_CLI)}`, detail: { path: link, target: realpathSync(SHIPPED_CLI), onPath: true } });
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(readlinkSync(link)).toBe(realpathSync(SHIPPED_CLI));

    // By name, from a folder that is not this package: it finds its package (prices/, plugin/) through the link.
    const version = await byName(w, ['--version'], w.project);
    expect(version.code, version.stderr).toBe(0);
    expect(version.stdout.trim()).toContain(JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')).version);
    const doctor = await byName(w, ['doctor', '--json'], w.project);
    const report = JSON.parse(doctor.stdout) as { steps: Step[] };
    expect(stepOf(report.steps, 'build')?.status).toBe('ok');
    expect(stepOf(report.steps, 'command')).toMatchObject({ status: 'ok', message: `sleds on PATH: ${link} → ${realpathSync(SHIPPED_CLI)}` });

    // A command that talks to musher (started by the install), by name from the project.
    const st = await byName(w, ['status', '--json'], w.project);
    expect(st.code, st.stderr).toBe(0);
    expect(JSON.parse(st.stdout)).toHaveProperty('wallBook');

    // Again: nothing changes.
    const again = await steps(w, ['install']);
    expect(stepOf(again.steps, 'command')).toMatchObject({ status: 'ok', message: `sleds command already linked: ${link} → ${realpathSync(SHIPPED_CLI)}` });

    const gone = await steps(w, ['uninstall']);
    expect(gone.code).toBe(0);
    expect(stepOf(gone.steps, 'command')).toMatchObject({ status: 'ok', message: `sleds command removed (${link})` });
    expect(existsSync(link)).toBe(false);
    expect((await byName(w, ['--version'], w.project)).code).toBe('ENOENT');

    // doctor, run by path now that the command is gone: names what is missing and the fix.
    const missing = await steps(w, ['doctor']);
    expect(stepOf(missing.steps, 'command')).toMatchObject({ status: 'warn', message: 'sleds is not on your PATH', fix: expect.stringMatching(/^run node \/\S+\/dist\/cli\/main\.js install \(it links sleds into ~\/\.local\/bin\)$/) });
  });

  it('with ~/.local/bin not on the PATH: links it there and says the one line to add; doctor says the same', async () => {
    const w = seat({ localBinOnPath: false });
    const r = await sleds(w, ['install']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const link = join(w.bin, 'sleds');
    const line = `export PATH="$HOME/.local/bin:$PATH"`;
    expect(r.stdout).toContain(`! sleds command linked: ${link} → ${realpathSync(SHIPPED_CLI)}, but ~/.local/bin is not on your PATH — add this line to your shell's profile (~/.bashrc or ~/.zshrc) and open a new terminal: ${line}`);
    expect(readlinkSync(link)).toBe(realpathSync(SHIPPED_CLI));

    const d = await steps(w, ['doctor']);
    expect(stepOf(d.steps, 'command')).toMatchObject({ status: 'warn', message: `sleds is linked at ${link}, but ~/.local/bin is not on your PATH`, fix: `add this line to your shell's profile (~/.bashrc or ~/.zshrc) and open a new terminal: ${line}` });

    // With the line added (here: the PATH the new terminal would have), sleds runs by name.
    w.env.PATH = `${w.bin}${delimiter}${w.env.PATH}`;
    expect((await byName(w, ['--version'], w.project)).code).toBe(0);
  });

  it('never replaces or removes a sleds that is not its own link, and says so', async () => {
    const w = seat({ localBinOnPath: true });
    mkdirSync(w.bin, { recursive: true });
    const link = join(w.bin, 'sleds');
    const theirs = '#!/bin/sh\necho "my own sleds"\n';
    writeFileSync(link, theirs, { mode: 0o755 });

    const r = await steps(w, ['install']);
    expect(r.code).toBe(0);
    expect(stepOf(r.steps, 'command')).toMatchObject({ status: 'warn', message: `${link} is not sleds' link (left as it is)`, fix: `remove it or rename it, then run 'sleds install' again` });
    expect(readFileSync(link, 'utf8')).toBe(theirs);

    const u = await steps(w, ['uninstall']);
    expect(stepOf(u.steps, 'command')).toMatchObject({ status: 'ok', message: `${link} is not sleds' link (left as it is)` });
    expect(readFileSync(link, 'utf8')).toBe(theirs);
  });

  it('uninstall leaves a link the user pointed elsewhere after the install', async () => {
    const w = seat({ localBinOnPath: true });
    expect((await sleds(w, ['install'])).code).toBe(0);
    const link = join(w.bin, 'sleds');
    const elsewhere = join(w.root, 'other-sleds.js');
    writeFileSync(elsewhere, '#!/usr/bin/env node\n', { mode: 0o755 });
    rmSync(link);
    symlinkSync(elsewhere, link);

    const u = await steps(w, ['uninstall']);
    expect(stepOf(u.steps, 'command')).toMatchObject({ status: 'ok', message: `${link} is not sleds' link (left as it is)` });
    expect(readlinkSync(link)).toBe(elsewhere);
  });
});
