/**
 * `sleds install` / `sleds doctor` / `sleds uninstall`, run from source against a throwaway HOME and
 * SLEDS_HOME (never the real ~), with the real Claude Code binary (pinned in tests/e2e/harness/claude-binary.ts)
 * handed over through SLEDS_CLAUDE_BIN. Needs `npm run build` first.
 */
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, realpathSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseSledsStatusLine, statusLineCommand } from '../../harnesses/claude-code/settings.js';
import { shellWords, shQuote } from '../../harnesses/install-files.js';
import { ensureClaudeBinary } from '../e2e/harness/claude-binary.js';
import { REPO_ROOT, SHIPPED_CLI, sleds, type SledsWorld } from '../support/sleds-env.js';
import { useBuiltCliAndBinary, useWorlds } from '../support/worlds.js';

// No request of Claude Code's own may leave the machine (telemetry, hello).
const world = useWorlds({ CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1' });
const claudeBin = useBuiltCliAndBinary(ensureClaudeBinary);

function run(file: string, args: string[], env: NodeJS.ProcessEnv, input = ''): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolveRun) => {
    const child = execFile(file, args, { env, timeout: 60_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : 1) : 0;
      resolveRun({ code, stdout, stderr });
    });
    child.stdin?.on('error', () => undefined); // a command that does not read its stdin
    child.stdin?.end(input);
  });
}

async function pluginList(w: SledsWorld): Promise<Array<{ id: string; enabled: boolean; readFromFolder?: string }>> {
  const r = await run(claudeBin(), ['plugin', 'list', '--json'], w.env);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout.slice(r.stdout.indexOf('[')));
}

function backups(dir: string): string[] {
  return readdirSync(dir).filter((n) => n.startsWith('settings.json.sleds-backup-'));
}

function readJson(path: string): any {
  return JSON.parse(readFileSync(path, 'utf8'));
}

interface Report {
  ok: boolean;
  steps: Array<{ id: string; status: 'ok' | 'fail' | 'warn' | 'info'; message: string; fix?: string; detail?: any }>;
}

async function doctorJson(w: SledsWorld): Promise<{ code: number; report: Report }> {
  const r = await sleds(w, ['doctor', '--json']);
  return { code: r.code, report: JSON.parse(r.stdout) as Report };
}

const root = realpathSync(REPO_ROOT);
const THEIRS = `printf '%s' "it's mine"`;
// 4-space indent, keys in an order Claude Code itself would not write: uninstall must give back these exact bytes.
const ORIGINAL = `{
    "model": "opus",
    "statusLine": {"type": "command", "command": ${JSON.stringify(THEIRS)}, "padding": 2},
    "permissions": {"allow": ["Bash(ls:*)"]},
    "zeta": true
}
`;

describe('sleds install with the real claude', () => {
  it('wires the plugin and the statusline, keeps the user statusLine, is idempotent, and uninstall gives everything back', async () => {
    const w = world({ SLEDS_CLAUDE_BIN: claudeBin() });
    const settingsPath = join(w.claudeDir, 'settings.json');
    writeFileSync(settingsPath, ORIGINAL);

    // install
    const first = await sleds(w, ['install']);
    expect(first.code, first.stdout + first.stderr).toBe(0);
    expect(first.stdout).toMatch(/^✓ plugin sleds@sleds-local installed and enabled with 'claude plugin'/m);
    expect(first.stdout).toMatch(/^✓ statusline now runs sleds, then your own: printf/m);
    expect(first.stdout).toMatch(/^✓ musher started \(pid \d+\)/m);
    expect(first.stdout).not.toContain('✗');

    const listed = await pluginList(w);
    expect(listed).toContainEqual(expect.objectContaining({ id: 'sleds@sleds-local', enabled: true, readFromFolder: join(root, 'plugin') }));

    const settings = readJson(settingsPath);
    expect(settings.enabledPlugins).toEqual({ 'sleds@sleds-local': true });
    expect(settings.extraKnownMarketplaces).toEqual({ 'sleds-local': { source: { source: 'directory', path: root } } });
    expect(settings.model).toBe('opus');
    expect(settings.permissions).toEqual({ allow: ['Bash(ls:*)'] });
    expect(settings.zeta).toBe(true);
    expect(settings.statusLine.type).toBe('command');
    expect(settings.statusLine.padding).toBe(0);
    const parsed = parseSledsStatusLine(settings.statusLine.command, SHIPPED_CLI);
    expect(parsed?.then).toBe(THEIRS);
    expect(settings.statusLine.command.startsWith(`${shQuote(process.execPath)} `)).toBe(true);

    // The command works through a real shell: sleds' line, then the user's own output.
    const shown = await run('/bin/sh', ['-c', settings.statusLine.command], w.env, JSON.stringify({ session_id: 's', cwd: '/tmp', model: { id: 'm', display_name: 'M' } }));
    expect(shown.code).toBe(0);
    expect(shown.stdout.trimEnd().endsWith("it's mine")).toBe(true);
    expect(shown.stdout.trim()).not.toBe("it's mine");

    // One backup, holding the original bytes.
    expect(backups(w.claudeDir)).toHaveLength(1);
    expect(readFileSync(join(w.claudeDir, backups(w.claudeDir)[0]!), 'utf8')).toBe(ORIGINAL);

    // What uninstall needs, private to the user.
    const stateFile = join(w.sledsHome, 'config', 'install-state.json');
    expect(statSync(stateFile).mode & 0o777).toBe(0o600);
    const state = readJson(stateFile);
    expect(state.plugin.method).toBe('claude');
    expect(state.statusLine.original).toEqual({ present: true, value: { type: 'command', command: THEIRS, padding: 2 } });
    expect(state.settings.backupPath).toBe(join(w.claudeDir, backups(w.claudeDir)[0]!));
    expect(state.claude.version).toMatch(/^\d+\.\d+\.\d+/);

    // install again: nothing changes, no second backup.
    const bytes = readFileSync(settingsPath);
    const stateBytes = readFileSync(stateFile);
    const second = await sleds(w, ['install']);
    expect(second.code, second.stdout + second.stderr).toBe(0);
    expect(second.stdout).toMatch(/^✓ plugin sleds@sleds-local already installed and enabled/m);
    expect(second.stdout).toMatch(/^✓ statusline already runs sleds/m);
    expect(second.stdout).toMatch(/^✓ musher already running/m);
    expect(readFileSync(settingsPath).equals(bytes)).toBe(true);
    expect(readFileSync(stateFile).equals(stateBytes)).toBe(true);
    expect(backups(w.claudeDir)).toHaveLength(1);

    // doctor: all good.
    const good = await sleds(w, ['doctor']);
    expect(good.code, good.stdout).toBe(0);
    expect(good.stdout).not.toContain('✗');
    expect(good.stdout).toMatch(/^✓ plugin sleds@sleds-local enabled$/m);
    expect(good.stdout).toMatch(/^✓ musher running \(pid \d+\)/m);
    expect(good.stdout).toMatch(/^✓ socket mode 0600$/m);
    const goodJson = await doctorJson(w);
    expect(goodJson.code).toBe(0);
    expect(goodJson.report.ok).toBe(true);
    expect(goodJson.report.steps.find((s) => s.id === 'statusline')?.detail.chained).toBe(THEIRS);
    expect(goodJson.report.steps.find((s) => s.id === 'marketplace')?.detail.path).toBe(root);

    // doctor with musher stopped: says so, and how to fix it.
    expect((await sleds(w, ['musher', 'stop'])).code).toBe(0);
    const down = await sleds(w, ['doctor']);
    expect(down.code).toBe(1);
    expect(down.stdout).toMatch(/^✗ musher is not running .* — start it with 'sleds musher start'/m);
    const downJson = await doctorJson(w);
    expect(downJson.report.ok).toBe(false);
    expect(downJson.report.steps.filter((s) => s.status === 'fail').map((s) => s.id)).toEqual(['musher']);

    // uninstall (with musher running again, so it has something to stop).
    expect((await sleds(w, ['musher', 'start'])).code).toBe(0);
    const gone = await sleds(w, ['uninstall']);
    expect(gone.code, gone.stdout + gone.stderr).toBe(0);
    expect(gone.stdout).toMatch(/^✓ musher stopped \(pid \d+\)/m);
    expect(readFileSync(settingsPath, 'utf8')).toBe(ORIGINAL);
    expect((await pluginList(w)).map((p) => p.id)).not.toContain('sleds@sleds-local');
    expect(existsSync(stateFile)).toBe(false);
    const after = await doctorJson(w);
    expect(after.report.steps.find((s) => s.id === 'musher')?.status).toBe('fail');

    // uninstall again: harmless.
    const again = await sleds(w, ['uninstall']);
    expect(again.code, again.stdout + again.stderr).toBe(0);
    expect(readFileSync(settingsPath, 'utf8')).toBe(ORIGINAL);
  });

  it('backs up no settings.json that `claude plugin install` created a moment before: it says who created it', async () => {
    const w = world({ SLEDS_CLAUDE_BIN: claudeBin() });
    const settingsPath = join(w.claudeDir, 'settings.json');
    expect(existsSync(settingsPath)).toBe(false);
    const r = await sleds(w, ['install', '--json']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const report = JSON.parse(r.stdout) as Report & { backup: string | null };
    expect(report.steps.filter((s) => s.id === 'backup')).toEqual([]);
    expect(report.steps).toContainEqual(expect.objectContaining({ id: 'settings', status: 'info', message: `${settingsPath} was created by claude plugin install (nothing of yours to back up)` }));
    expect(backups(w.claudeDir)).toEqual([]);
    expect(report.backup).toBeNull();
    expect(readJson(join(w.sledsHome, 'config', 'install-state.json')).settings.backups).toEqual([]);

    // Uninstall: the file had nothing of the user's in it, so it goes.
    const u = await sleds(w, ['uninstall']);
    expect(u.code, u.stdout + u.stderr).toBe(0);
    expect(existsSync(settingsPath)).toBe(false);
  });

  it('writes where CLAUDE_CONFIG_DIR says, for sleds and for claude alike', async () => {
    const w = world({ SLEDS_CLAUDE_BIN: claudeBin() });
    const cfg = join(w.root, 'cfg');
    w.env.CLAUDE_CONFIG_DIR = cfg;
    const r = await sleds(w, ['install', '--json']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const report = JSON.parse(r.stdout) as Report;
    expect(report.ok).toBe(true);
    expect(report.steps.find((s) => s.id === 'plugin')?.detail.method).toBe('claude');
    const settings = readJson(join(cfg, 'settings.json'));
    expect(settings.enabledPlugins['sleds@sleds-local']).toBe(true);
    expect(parseSledsStatusLine(settings.statusLine.command, SHIPPED_CLI)?.then).toBeNull();
    expect(existsSync(join(w.claudeDir, 'settings.json'))).toBe(false);
    expect(await pluginList(w)).toContainEqual(expect.objectContaining({ id: 'sleds@sleds-local', enabled: true }));

    const u = await sleds(w, ['uninstall', '--json']);
    expect(u.code, u.stdout).toBe(0);
    expect(JSON.parse(u.stdout).ok).toBe(true);
    // Claude Code created settings.json for the plugin; with nothing else in it, it goes.
    expect(existsSync(join(cfg, 'settings.json'))).toBe(false);
  });
});

describe('sleds install without a claude binary', () => {
  it('writes the plugin keys claude would write, and uninstall removes the file it created', async () => {
    const w = world({});
    w.env.SLEDS_CLAUDE_BIN = join(w.root, 'no-such-claude');
    const settingsPath = join(w.claudeDir, 'settings.json');
    expect(existsSync(settingsPath)).toBe(false);

    const r = await sleds(w, ['install']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^! plugin sleds@sleds-local enabled by writing settings.json directly \(claude not found \(SLEDS_CLAUDE_BIN=.* is not an executable file\)\)/m);
    const settings = readJson(settingsPath);
    // The exact shape `claude plugin marketplace add` + `claude plugin install` write (checked on 2.1.328 above).
    expect(settings.extraKnownMarketplaces).toEqual({ 'sleds-local': { source: { source: 'directory', path: root } } });
    expect(settings.enabledPlugins).toEqual({ 'sleds@sleds-local': true });
    expect(parseSledsStatusLine(settings.statusLine.command, SHIPPED_CLI)).toEqual(expect.objectContaining({ then: null }));
    expect(readJson(join(w.sledsHome, 'config', 'install-state.json')).plugin.method).toBe('direct');
    expect(backups(w.claudeDir)).toHaveLength(0); // nothing to back up: there was no file

    const bytes = readFileSync(settingsPath);
    expect((await sleds(w, ['install'])).code).toBe(0);
    expect(readFileSync(settingsPath).equals(bytes)).toBe(true);

    // doctor: wired, but no claude to be found.
    const d = await doctorJson(w);
    expect(d.code).toBe(1);
    const byId = Object.fromEntries(d.report.steps.map((s) => [s.id, s]));
    expect(byId.claude?.status).toBe('fail');
    expect(byId.claude?.fix).toContain('SLEDS_CLAUDE_BIN');
    for (const id of ['plugin', 'marketplace', 'statusline', 'musher']) expect(byId[id]?.status, id).toBe('ok');

    const u = await sleds(w, ['uninstall']);
    expect(u.code, u.stdout + u.stderr).toBe(0);
    expect(existsSync(settingsPath)).toBe(false);
  });
});

describe('sleds install over the plugin\'s old name', () => {
  it('removes sled@sleds-local, so the hooks never run twice, and keeps the user\'s other plugins', async () => {
    const w = world({});
    w.env.SLEDS_CLAUDE_BIN = join(w.root, 'no-such-claude');
    const settingsPath = join(w.claudeDir, 'settings.json');
    writeFileSync(settingsPath, JSON.stringify({ enabledPlugins: { 'sled@sleds-local': true, 'theirs@market': true } }, null, 2) + '\n');
    const r = await sleds(w, ['install', '--json']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const steps = (JSON.parse(r.stdout) as Report).steps;
    expect(steps).toContainEqual(expect.objectContaining({ id: 'plugin', status: 'info', message: "removed the plugin's old name sled@sleds-local from settings.json" }));
    expect(readJson(settingsPath).enabledPlugins).toEqual({ 'theirs@market': true, 'sleds@sleds-local': true });
  });
});

describe('the statusLine command', () => {
  const nasty = [THEIRS, 'echo $HOME | tr a-z A-Z', `a\\ b "c\\"d" 'e'`, "'", "it's; rm -rf ~ #", '~/bin/line --flag=$(date)'];

  it.each(nasty)('chains %j so that a POSIX shell hands it back unchanged', async (theirs) => {
    const cmd = statusLineCommand('/usr/bin/node', [join(root, 'dist', 'statusline.cjs')], theirs);
    expect(parseSledsStatusLine(cmd, SHIPPED_CLI)?.then).toBe(theirs);
    expect(shellWords(cmd)?.at(-1)).toBe(theirs);
    // What /bin/sh itself makes of it: print each word NUL-separated instead of running node.
    const words = await run('/bin/sh', ['-c', `printf '%s\\0' ${cmd}`], { PATH: process.env.PATH });
    expect(words.stdout.split('\0').slice(0, -1)).toEqual(['/usr/bin/node', join(root, 'dist', 'statusline.cjs'), '--then', theirs]);
  });

  it('does not take someone else’s command for ours', () => {
    expect(parseSledsStatusLine('node /opt/other/dist/cli/main.js statusline', SHIPPED_CLI)).toBeNull();
    expect(parseSledsStatusLine(`sleds statusline; echo owned`, SHIPPED_CLI)).toBeNull();
    expect(parseSledsStatusLine(`'/usr/bin/node' ${shQuote(SHIPPED_CLI)} statusline`, SHIPPED_CLI)).toEqual({ runner: ['/usr/bin/node', SHIPPED_CLI, 'statusline'], then: null });
    expect(parseSledsStatusLine(`npx -y sleds statusline --then 'echo hi'`, SHIPPED_CLI)?.then).toBe('echo hi');
  });
});
