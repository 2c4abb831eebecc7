/**
 * `sleds install` / `sleds doctor` / `sleds uninstall` for Codex CLI, run from source against a throwaway
 * HOME, CODEX_HOME and SLEDS_HOME (always all three: never the real ~), with the real Codex binary (pinned in
 * tests/e2e/harness/codex-binary.ts) handed over through SLEDS_CODEX_BIN or PATH. What Codex itself makes of the
 * files is asked of Codex: `codex app-server` → hooks/list gives every hook's trust key, hash and trust status,
 * without a model request. Needs `npm run build` first.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { TomlSyntaxError, TomlText } from '../../harnesses/codex/config-toml.js';
import { CODEX_HOOKS, codexHookCommand, parseSledsCodexHook } from '../../harnesses/codex/install.js';
import { codexTrustHash, effectiveTimeout, planTrust, readTrust, removeTrust } from '../../harnesses/codex/trust.js';
import type { CodexState } from '../../harnesses/install-state.js';
import { ensureCodexBinary } from '../e2e/harness/codex-binary.js';
import { codexHookTrustHash, codexHooksList, type CodexListedHook } from '../e2e/harness/codex-env.js';
import { REPO_ROOT, sleds, type SledsWorld } from '../support/sleds-env.js';
import { useBuiltCliAndBinary, useWorlds, withCodexHome, type CodexWorld } from '../support/worlds.js';

const root = realpathSync(REPO_ROOT);

const newWorld = useWorlds({ SLEDS_CLAUDE_BIN: '/nonexistent/claude' });
const codexBin = useBuiltCliAndBinary(ensureCodexBinary);

/** HOME, SLEDS_HOME and CODEX_HOME under one temp root; no claude (the Claude part takes its direct path). */
function world(env: NodeJS.ProcessEnv = {}, opts: { createCodexHome?: boolean } = {}): CodexWorld {
  return withCodexHome(newWorld(env), opts.createCodexHome !== false);
}

interface Report {
  ok: boolean;
  steps: Array<{ id: string; status: 'ok' | 'fail' | 'warn' | 'info'; message: string; fix?: string; detail?: any }>;
}

async function doctor(w: SledsWorld): Promise<Record<string, Report['steps'][number]>> {
  const r = await sleds(w, ['doctor', '--json']);
  const report = JSON.parse(r.stdout) as Report;
  return Object.fromEntries(report.steps.map((s) => [s.id, s]));
}

function backups(dir: string, name: string): string[] {
  return readdirSync(dir).filter((n) => n.startsWith(`${name}.sleds-backup-`));
}

/** What Codex sees: key → trustStatus, for the hooks of this CODEX_HOME. */
async function listed(w: CodexWorld): Promise<CodexListedHook[]> {
  const r = await codexHooksList(codexBin(), { env: { PATH: process.env.PATH ?? '', HOME: w.home, CODEX_HOME: w.codexHome }, cwd: w.root });
  expect(r.errors).toEqual([]);
  return r.hooks;
}

const sledsCommand = (event: string) => codexHookCommand(process.execPath, root, event);

const THEIR_PROMPT_HOOK = { type: 'command', command: 'echo "their prompt hook"', timeout: 5 };
const THEIR_STOP_HOOK = { type: 'command', command: 'notify-send done' };
// 4-space indent and a key order Codex would not write: uninstall must give back these exact bytes.
const ORIGINAL_HOOKS = `{
    "description": "mine",
    "hooks": {
        "UserPromptSubmit": [{"hooks": [${JSON.stringify(THEIR_PROMPT_HOOK)}]}],
        "Stop": [{"matcher": ".*", "hooks": [${JSON.stringify(THEIR_STOP_HOOK)}]}]
    }
}
`;

function originalConfig(codexHome: string): string {
  const hooksJson = join(codexHome, 'hooks.json');
  // Their prompt hook is trusted; there is a stale entry at the key sleds' Stop hook will take (index 1); a multi-line
  // string holds text that looks like a trust table; no newline at the end.
  return [
    'model = "o3"  # their model',
    `notes = """`,
    `[hooks.state."${hooksJson}:stop:1:0"]`,
    `trusted_hash = "not a table, a string"`,
    `"""`,
    'dates = [',
    '  1979-05-27 07:32:00Z, # a comment in an array',
    ']',
    '',
    '[features]',
    'plugins = false',
    '',
    `[hooks.state."${hooksJson}:user_prompt_submit:0:0"]`,
    `trusted_hash = "${codexHookTrustHash('UserPromptSubmit', {}, THEIR_PROMPT_HOOK as never)}"`,
    '',
    `[hooks.state.'${hooksJson}:stop:1:0']`,
    'enabled = true',
    'trusted_hash = "sha256:0000000000000000000000000000000000000000000000000000000000000000"',
    '',
    "[projects.'/somewhere']",
    'trust_level = "trusted"',
  ].join('\n');
}

describe('sleds install with Codex', () => {
  it('wires hooks and trust into an existing Codex home, keeps theirs, is idempotent, and uninstall gives both files back byte for byte', async () => {
    const w = world({ SLEDS_CODEX_BIN: codexBin() });
    const hooksPath = join(w.codexHome, 'hooks.json');
    const configPath = join(w.codexHome, 'config.toml');
    const ORIGINAL_CONFIG = originalConfig(w.codexHome);
    writeFileSync(hooksPath, ORIGINAL_HOOKS);
    writeFileSync(configPath, ORIGINAL_CONFIG);
    const theirsBefore = await listed(w);
    expect(theirsBefore.map((h) => [h.key.replace(`${hooksPath}:`, ''), h.trustStatus])).toEqual([
      ['user_prompt_submit:0:0', 'trusted'],
      ['stop:0:0', 'untrusted'],
    ]);

    // install
    const first = await sleds(w, ['install']);
    expect(first.code, first.stdout + first.stderr).toBe(0);
    expect(first.stdout).toMatch(/^✓ codex 0\.169\.0 at .*; home /m);
    expect(first.stdout).toContain(`✓ Codex hooks wired in ${hooksPath} (SessionStart, UserPromptSubmit, PostToolUse, PreCompact, Stop, SessionEnd)`);
    expect(first.stdout).toContain(`✓ Codex trusts sleds' hooks (${configPath})`);
    expect(first.stdout).toMatch(/^· in Codex, type 'sled status' or 'sled 5' without the slash/m);
    expect(first.stdout).not.toContain('✗');

    // hooks.json: theirs first and untouched, ours after.
    const hooks = JSON.parse(readFileSync(hooksPath, 'utf8'));
    expect(hooks.description).toBe('mine');
    expect(hooks.hooks.UserPromptSubmit).toEqual([{ hooks: [THEIR_PROMPT_HOOK] }, { hooks: [{ type: 'command', command: sledsCommand('UserPromptSubmit'), timeout: 10 }] }]);
    expect(hooks.hooks.Stop).toEqual([{ matcher: '.*', hooks: [THEIR_STOP_HOOK] }, { hooks: [{ type: 'command', command: sledsCommand('Stop'), timeout: 10 }] }]);
    expect(hooks.hooks.SessionEnd).toEqual([{ hooks: [{ type: 'command', command: sledsCommand('SessionEnd'), timeout: 3 }] }]);
    expect(Object.keys(hooks.hooks).sort()).toEqual(CODEX_HOOKS.map((h) => h.event).sort());
    expect(sledsCommand('Stop')).toBe(`'${process.execPath}' '${root}/dist/hook.cjs' Stop --harness codex`);
    expect(readFileSync(hooksPath, 'utf8')).toMatch(/^\{\n {4}"description"/);

    // config.toml: their bytes first, then sleds' block; the stale entry at sleds' Stop key now holds sleds' hash.
    const config = readFileSync(configPath, 'utf8');
    expect(config.startsWith(ORIGINAL_CONFIG.replace(/sha256:0{64}/, codexTrustHash('Stop', undefined, { type: 'command', command: sledsCommand('Stop'), timeout: 10 })))).toBe(true);
    expect(config).toContain("# >>> sleds: Codex trusts sleds' hooks");

    // What Codex makes of it: every sleds hook trusted, theirs as before.
    const after = await listed(w);
    const status = Object.fromEntries(after.map((h) => [h.key, h.trustStatus]));
    for (const b of theirsBefore) expect(status[b.key], b.key).toBe(b.trustStatus);
    const ours = after.filter((h) => parseSledsCodexHook(h.command, root));
    expect(ours.map((h) => [h.eventName, h.trustStatus, h.timeoutSec])).toEqual(
      expect.arrayContaining(CODEX_HOOKS.map((s) => [s.event[0]!.toLowerCase() + s.event.slice(1), 'trusted', s.timeout])),
    );
    expect(ours).toHaveLength(CODEX_HOOKS.length);

    // One backup each, holding the original bytes; the state says what to undo.
    expect(backups(w.codexHome, 'hooks.json')).toHaveLength(1);
    expect(backups(w.codexHome, 'config.toml')).toHaveLength(1);
    expect(readFileSync(join(w.codexHome, backups(w.codexHome, 'hooks.json')[0]!), 'utf8')).toBe(ORIGINAL_HOOKS);
    expect(readFileSync(join(w.codexHome, backups(w.codexHome, 'config.toml')[0]!), 'utf8')).toBe(ORIGINAL_CONFIG);
    const stateFile = join(w.sledsHome, 'config', 'install-state.json');
    const state = JSON.parse(readFileSync(stateFile, 'utf8'));
    expect(state.codex).toMatchObject({ home: w.codexHome, bin: codexBin(), version: '0.169.0' });
    expect(state.codex.configToml.edited).toEqual([{ key: `${hooksPath}:stop:1:0`, line: `trusted_hash = "sha256:${'0'.repeat(64)}"\n` }]);
    expect(state.codex.hooks.map((h: any) => h.key.replace(`${hooksPath}:`, ''))).toEqual([
      'session_start:0:0',
      'user_prompt_submit:1:0',
      'post_tool_use:0:0',
      'pre_compact:0:0',
      'stop:1:0',
      'session_end:0:0',
    ]);

    // install again: nothing changes, no second backup.
    const bytes = [readFileSync(hooksPath), readFileSync(configPath), readFileSync(stateFile)];
    const second = await sleds(w, ['install']);
    expect(second.code, second.stdout + second.stderr).toBe(0);
    expect(second.stdout).toContain('✓ Codex hooks already wired in');
    expect(second.stdout).toContain("✓ Codex already trusts sleds' hooks");
    expect([readFileSync(hooksPath), readFileSync(configPath), readFileSync(stateFile)].map((b, i) => b.equals(bytes[i]!))).toEqual([true, true, true]);
    expect(backups(w.codexHome, 'hooks.json')).toHaveLength(1);
    expect(backups(w.codexHome, 'config.toml')).toHaveLength(1);

    // doctor: found, wired, trusted.
    let d = await doctor(w);
    expect(d.codex).toMatchObject({ status: 'ok', detail: { version: '0.169.0', home: w.codexHome } });
    expect(d['codex-hooks']?.status).toBe('ok');
    expect(d['codex-trust']?.status).toBe('ok');

    // Someone edits sleds' Stop hook: Codex would no longer trust it, and doctor says so; install mends it.
    const edited = JSON.parse(readFileSync(hooksPath, 'utf8'));
    edited.hooks.Stop[1].hooks[0].timeout = 20;
    writeFileSync(hooksPath, JSON.stringify(edited, null, 4));
    expect((await listed(w)).find((h) => h.key === `${hooksPath}:stop:1:0`)?.trustStatus).toBe('modified');
    d = await doctor(w);
    expect(d['codex-trust']).toMatchObject({ status: 'fail', detail: { untrusted: ['Stop'] } });
    expect(d['codex-trust']?.fix).toContain('sleds install');
    const mend = await sleds(w, ['install']);
    expect(mend.code, mend.stdout).toBe(0);
    expect((await listed(w)).filter((h) => parseSledsCodexHook(h.command, root)).every((h) => h.trustStatus === 'trusted')).toBe(true);
    expect((await doctor(w))['codex-trust']?.status).toBe('ok');

    // uninstall: both files exactly as before (the reformatting by the edit above included), state gone.
    const gone = await sleds(w, ['uninstall']);
    expect(gone.code, gone.stdout + gone.stderr).toBe(0);
    expect(gone.stdout).toContain(`✓ Codex hooks removed: ${hooksPath} is back to exactly what it was before sleds`);
    expect(gone.stdout).toContain(`✓ ${configPath} is back to exactly what it was before sleds`);
    expect(readFileSync(hooksPath, 'utf8')).toBe(ORIGINAL_HOOKS);
    expect(readFileSync(configPath, 'utf8')).toBe(ORIGINAL_CONFIG);
    expect(existsSync(stateFile)).toBe(false);
    expect((await listed(w)).map((h) => [h.key, h.trustStatus])).toEqual(theirsBefore.map((h) => [h.key, h.trustStatus]));
    d = await doctor(w);
    expect(d['codex-hooks']).toMatchObject({ status: 'fail', fix: 'run sleds install' });

    // uninstall again: harmless.
    const again = await sleds(w, ['uninstall']);
    expect(again.code, again.stdout + again.stderr).toBe(0);
    expect(readFileSync(hooksPath, 'utf8')).toBe(ORIGINAL_HOOKS);
    expect(readFileSync(configPath, 'utf8')).toBe(ORIGINAL_CONFIG);
  });

  it('finds codex on PATH with no Codex home yet: creates both files (config.toml 0600), Codex trusts the hooks, uninstall removes them', async () => {
    const w = world({}, { createCodexHome: false });
    const binDir = join(w.root, 'bin');
    mkdirSync(binDir);
    symlinkSync(codexBin(), join(binDir, 'codex'));
    w.env.PATH = `${binDir}:${process.env.PATH}`;
    // The home as Codex names it: a symlinked CODEX_HOME is resolved in the trust keys.
    mkdirSync(join(w.root, 'real-cx'));
    symlinkSync(join(w.root, 'real-cx'), w.codexHome);
    const real = realpathSync(w.codexHome);

    const r = await sleds(w, ['install', '--json']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const steps = Object.fromEntries((JSON.parse(r.stdout) as Report).steps.map((s) => [s.id, s]));
    expect(steps.codex).toMatchObject({ status: 'ok', detail: { bin: join(binDir, 'codex'), version: '0.169.0', home: real } });
    expect(steps['codex-hooks']).toMatchObject({ status: 'ok', detail: { changed: true } });
    expect(steps['codex-trust']).toMatchObject({ status: 'ok', detail: { changed: true } });
    expect(statSync(join(real, 'config.toml')).mode & 0o777).toBe(0o600);
    expect(readFileSync(join(real, 'config.toml'), 'utf8')).toContain(`[hooks.state."${real}/hooks.json:user_prompt_submit:0:0"]`);
    const seen = await listed(w);
    expect(seen.map((h) => h.trustStatus)).toEqual(CODEX_HOOKS.map(() => 'trusted'));
    expect(backups(real, 'hooks.json')).toEqual([]);

    const u = await sleds(w, ['uninstall']);
    expect(u.code, u.stdout + u.stderr).toBe(0);
    expect(existsSync(join(real, 'hooks.json'))).toBe(false);
    expect(existsSync(join(real, 'config.toml'))).toBe(false);
  });

  it('hooks.state written with dotted keys (valid TOML the old scanner refused): Codex trusts sleds\' hooks next to the user\'s', async () => {
    const w = world({ SLEDS_CODEX_BIN: codexBin() });
    const hooksPath = join(w.codexHome, 'hooks.json');
    const configPath = join(w.codexHome, 'config.toml');
    writeFileSync(hooksPath, JSON.stringify({ hooks: { UserPromptSubmit: [{ hooks: [THEIR_PROMPT_HOOK] }] } }));
    const original = `# trusted by hand\n[hooks.state]\n"${hooksPath}:user_prompt_submit:0:0".trusted_hash = "${codexHookTrustHash('UserPromptSubmit', {}, THEIR_PROMPT_HOOK as never)}"\n`;
    writeFileSync(configPath, original);
    expect((await listed(w)).map((h) => h.trustStatus)).toEqual(['trusted']);

    const r = await sleds(w, ['install']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toContain(`✓ Codex trusts sleds' hooks (${configPath})`);
    expect(readFileSync(configPath, 'utf8').startsWith(original)).toBe(true);
    const seen = await listed(w);
    expect(seen.filter((h) => parseSledsCodexHook(h.command, root)).map((h) => h.trustStatus)).toEqual(CODEX_HOOKS.map(() => 'trusted'));
    expect(seen.find((h) => h.command === THEIR_PROMPT_HOOK.command)?.trustStatus).toBe('trusted');

    const u = await sleds(w, ['uninstall']);
    expect(u.code, u.stdout + u.stderr).toBe(0);
    expect(readFileSync(configPath, 'utf8')).toBe(original);
  });

  it('a config.toml that is not TOML (a key given twice) is refused with its file and line, and nothing of Codex is written', async () => {
    const w = world({ SLEDS_CODEX_BIN: '/nonexistent/codex' });
    const configPath = join(w.codexHome, 'config.toml');
    const broken = '# mine\nmodel = "o3"\nmodel = "o4"\n';
    writeFileSync(configPath, broken);
    const r = await sleds(w, ['install', '--json']);
    expect(r.code, r.stdout + r.stderr).toBe(1);
    const steps = (JSON.parse(r.stdout) as Report).steps.filter((s) => s.id.startsWith('codex-'));
    expect(steps.map((s) => [s.id, s.status])).toEqual([['codex-hooks', 'fail']]);
    expect(steps[0]!.message.startsWith(`${configPath} is not TOML (line 3, column `), steps[0]!.message).toBe(true);
    expect(steps[0]!.message).toMatch(/^[^\n]*\(line 3, column \d+: [^\n]+\)$/);
    expect(steps[0]!.fix).toBe('fix it, then run sleds install again');
    expect(readFileSync(configPath, 'utf8')).toBe(broken);
    expect(existsSync(join(w.codexHome, 'hooks.json'))).toBe(false);
    expect(backups(w.codexHome, 'config.toml')).toEqual([]);
    // doctor names the same line.
    writeFileSync(join(w.codexHome, 'hooks.json'), JSON.stringify({ hooks: { Stop: [{ hooks: [{ type: 'command', command: sledsCommand('Stop'), timeout: 10 }] }] } }));
    const d = await doctor(w);
    expect(d['codex-trust']).toMatchObject({ status: 'fail', message: expect.stringContaining(`${configPath} is not TOML (line 3, column`) });
  });

  it('without Codex: nothing is written, and install and doctor say so in one line that is not a failure', async () => {
    const w = world({ SLEDS_CODEX_BIN: '/nonexistent/codex' }, { createCodexHome: false });
    const r = await sleds(w, ['install']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^· Codex CLI not found \(SLEDS_CODEX_BIN=\/nonexistent\/codex is not an executable file, no .*\/cx\): not wired$/m);
    expect(r.stdout).not.toContain('Codex hooks');
    expect(existsSync(w.codexHome)).toBe(false);
    expect(JSON.parse(readFileSync(join(w.sledsHome, 'config', 'install-state.json'), 'utf8')).codex).toBeNull();
    const d = await doctor(w);
    expect(d.codex?.status).toBe('info');
    expect(d['codex-hooks']).toBeUndefined();
    const u = await sleds(w, ['uninstall']);
    expect(u.code, u.stdout).toBe(0);
    expect(u.stdout).not.toContain('Codex');
    expect(existsSync(w.codexHome)).toBe(false);
  });
});

describe('config.toml, read with smol-toml and edited line by line', () => {
  const K = (e: string, g = 0) => `/h/.codex/hooks.json:${e}:${g}:0`;
  const stateWith = (hooks: Array<{ key: string; hash: string }>, edited: CodexState['configToml']['edited']): CodexState => ({
    home: '/h/.codex',
    bin: null,
    version: null,
    hooksJson: { path: '/h/.codex/hooks.json', existedBefore: true, originalSha256: null, backupPath: null, backups: [], hadHooksKey: true, hadEvents: [] },
    configToml: { path: '/h/.codex/config.toml', existedBefore: true, originalSha256: null, backupPath: null, backups: [], edited },
    hooks: hooks.map((h) => ({ event: 'Stop', command: 'x', timeout: 10, ...h })),
  });

  it('finds headers and keys, skipping what only looks like them inside strings and arrays', () => {
    const text = [
      'a = "x # not a comment"',
      "b = '''",
      '[not.a.header]',
      "'''",
      'c = [ "]", { d = 1 }, # c',
      '  2 ]',
      '"q.k".z = 1',
      '[ t . "u.v" ] # c',
      'w = 1979-05-27 07:32:00Z',
      '[[arr]]',
      'e = """a \\""" b"""',
      '',
    ].join('\r\n');
    const doc = new TomlText(text);
    expect(doc.lines.map((_l, i) => doc.header(i)).filter(Boolean)).toEqual([
      { path: ['t', 'u.v'], array: false },
      { path: ['arr'], array: true },
    ]);
    expect(Object.keys(doc.model)).toEqual(['a', 'b', 'c', 'q.k', 't', 'arr']);
    expect(doc.model.t).toMatchObject({ 'u.v': { w: expect.anything() } });
    expect(() => new TomlText('a = "unterminated\n')).toThrow(TomlSyntaxError);
    expect(() => new TomlText('a = 1 2\n')).toThrow(TomlSyntaxError);
  });

  it('finds hooks.state tables, and refuses only the forms of hooks.state that cannot take a table next to them', () => {
    // (The scanner's version of this had `Stop = [{ hooks = [] }]` and then `[[hooks.Stop]]`: not TOML, which Codex refuses.)
    const t = readTrust(`[hooks.state."${K('stop')}"]\nenabled = false\ntrusted_hash = 'sha256:ab'\n[hooks]\nSessionStart = [{ hooks = [] }]\n[[hooks.Stop]]\n`);
    expect(t).toEqual([{ key: K('stop'), hash: 'sha256:ab', inBlock: false }]);
    for (const f of ['hooks = { state = {} }', '[hooks]\nstate = {}', '[[hooks.state]]']) {
      expect('blocker' in planTrust(f, [{ key: K('stop'), hash: 'sha256:1' }], []), f).toBe(true);
    }
    // TOML lets a [hooks.state."…"] table sit next to these (the hand-written scanner refused them).
    for (const f of ['[hooks.state]\n"k".trusted_hash = "x"', 'hooks.state.k.trusted_hash = "x"']) {
      expect('blocker' in planTrust(f, [{ key: K('stop'), hash: 'sha256:1' }], []), f).toBe(false);
    }
  });

  const originals: Array<[string, string]> = [
    ['no file', ''],
    ['no final newline', 'model = "o3"'],
    ['a final newline', 'model = "o3"\n'],
    ['blank lines at the end', 'model = "o3"\n\n\n'],
    ['CRLF', 'model = "o3"\r\n[projects."/x"]\r\ntrust_level = "trusted"\r\n'],
    ['a table of theirs trusting a key sleds uses, with the same hash', `[hooks.state."${K('stop', 1)}"]\ntrusted_hash = "sha256:1"\n`],
    ['a stale hash at a key sleds uses', `[hooks.state."${K('stop', 1)}"] # theirs\ntrusted_hash = "sha256:old"  # stale\nenabled = true\n`],
    ['a table at a key sleds uses, without a hash', `[hooks.state."${K('stop', 1)}"]\nenabled = true`],
  ];

  it.each(originals)('install then uninstall gives back the same bytes: %s', (_name, original) => {
    const wanted = [
      { key: K('stop', 1), hash: 'sha256:1' },
      { key: K('session_start'), hash: 'sha256:2' },
    ];
    const plan = planTrust(original, wanted, []);
    if ('blocker' in plan) throw new Error(plan.blocker);
    const trusted = readTrust(plan.text);
    // Every wanted key is trusted exactly once, with its hash.
    for (const w of wanted) expect(trusted.filter((t) => t.key === w.key).map((t) => t.hash)).toEqual([w.hash]);
    if (original.includes('\r\n')) expect(plan.text.replace(/\r\n/g, '')).not.toContain('\n');
    // Idempotent.
    const again = planTrust(plan.text, wanted, plan.edited);
    expect('blocker' in again ? again.blocker : again.text).toBe(plan.text);
    // Back to the original, up to trailing blank lines (uninstall then writes the backup's exact bytes).
    const back = removeTrust(plan.text, stateWith(wanted, plan.edited));
    if (/\n\s*$/.test(original) || original === '') expect(back).toBe(original);
    else expect(back.replace(/\s+$/, '')).toBe(original);
  });

  it('a changed hash rewrites sleds’ block in place; a key no longer wanted leaves it', () => {
    const one = planTrust('a = 1\n', [{ key: K('stop'), hash: 'sha256:1' }, { key: K('session_end'), hash: 'sha256:3' }], []);
    if ('blocker' in one) throw new Error(one.blocker);
    const two = planTrust(`${one.text}[mine]\nx = 1\n`, [{ key: K('stop'), hash: 'sha256:2' }], []);
    if ('blocker' in two) throw new Error(two.blocker);
    expect(readTrust(two.text).map((t) => [t.key, t.hash, t.inBlock])).toEqual([[K('stop'), 'sha256:2', true]]);
    expect(two.text.endsWith('# <<< sleds <<<\n[mine]\nx = 1\n')).toBe(true);
    expect(removeTrust(two.text, null)).toBe('a = 1\n[mine]\nx = 1\n');
  });

  it('the hash recipe: effective timeouts, and the key as Codex 0.169 computes it', () => {
    expect(effectiveTimeout('Stop', undefined)).toBe(600);
    expect(effectiveTimeout('SessionEnd', undefined)).toBe(1);
    expect(effectiveTimeout('SessionEnd', 10)).toBe(3);
    expect(effectiveTimeout('Interrupt', 2)).toBe(2);
    // The product's recipe and the harness's (written from the facts alone) agree.
    for (const s of CODEX_HOOKS) {
      const h = { type: 'command' as const, command: sledsCommand(s.event), timeout: s.timeout };
      expect(codexTrustHash(s.event, undefined, h)).toBe(codexHookTrustHash(s.event, {}, h));
    }
    expect(codexTrustHash('PreToolUse', '.*', { type: 'command', command: 'x', statusMessage: 'm' })).toBe(codexHookTrustHash('PreToolUse', { matcher: '.*' }, { type: 'command', command: 'x', statusMessage: 'm' }));
  });

  it('recognises sleds’ own Codex hook commands only', () => {
    expect(parseSledsCodexHook(sledsCommand('Stop'), root)).toEqual({ event: 'Stop', files: [process.execPath, `${root}/dist/hook.cjs`] });
    expect(parseSledsCodexHook(`node /old/sleds/dist/hook.cjs Stop --harness codex`, null)?.event).toBe('Stop');
    expect(parseSledsCodexHook(`node ${root}/dist/hook.cjs Stop`, root)).toBeNull();
    expect(parseSledsCodexHook(`node ${root}/dist/hook.cjs Stop --harness codex; rm -rf ~`, root)).toBeNull();
    expect(parseSledsCodexHook(`node /opt/other/dist/hook.cjs Stop --harness codex`, root)).toBeNull();
  });
});
