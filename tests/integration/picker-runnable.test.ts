/**
 * The picker offers only what can run here (issue 12, point 8): a harness that is not installed shows its rows with
 * that reason and no verb; a dispatch opened in tmux whose process dies in its first seconds says so, with the exit
 * code and the last lines it printed, instead of a window that vanishes. A real musher, the CLI, real tmux.
 */
import { execFile } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { requestMusher } from '../../hooks/musher-client.js';
import type { PickerAnswer } from '../../core/picker/row.js';
import type { Task } from '../../core/task/task.js';
import { startTmux, TMUX_BIN } from '../e2e/harness/tmux.js';
import { sleds, startMusher, type SledsWorld } from '../support/sleds-env.js';
import { writeSledsConfig } from '../support/sleds-config.js';
import { useWorlds } from '../support/worlds.js';

const execFileP = promisify(execFile);
const world = useWorlds();
const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const PROMPT = 'Fix the flaky login test';

/** A folder of stand-in harness programs; `claude` runs `body` (a shell script). */
function binDir(claudeBody: string): string {
  const d = realpathSync(mkdtempSync(join(tmpdir(), 'sl-bin-')));
  cleanups.push(() => rmSync(d, { recursive: true, force: true }));
  writeFileSync(join(d, 'claude'), `#!/bin/sh\n${claudeBody}\n`);
  chmodSync(join(d, 'claude'), 0o755);
  return d;
}

/** A world with `claude` in `bins` and no codex anywhere musher looks, whose session s1 started a task worth high. */
async function worldWithTask(bins: string): Promise<{ w: SledsWorld; task: Task; repo: string }> {
  const w = world({ SLEDS_KEYRING: 'file', SLEDS_SEAT: 'me' });
  writeSledsConfig(w, { binaries: { claude: join(bins, 'claude'), codex: join(bins, 'codex') } });
  await startMusher(w);
  const repo = realpathSync(mkdtempSync(join(tmpdir(), 'sl-pick-repo-')));
  cleanups.push(() => rmSync(repo, { recursive: true, force: true }));
  mkdirSync(join(repo, '.git'));
  const hook = await sleds(w, ['hook', 'UserPromptSubmit'], JSON.stringify({ session_id: 's1', prompt: PROMPT, cwd: repo, hook_event_name: 'UserPromptSubmit' }));
  expect(hook.code, hook.stderr).toBe(0);
  const task = (JSON.parse((await sleds(w, ['tasks', '--json'])).stdout) as { tasks: Task[] }).tasks[0]!;
  expect((await sleds(w, ['task', task.id, 'worth', 'high'])).code).toBe(0);
  return { w, task, repo };
}

async function pick(w: SledsWorld, id: string): Promise<PickerAnswer> {
  const r = await sleds(w, ['pick', id, '--json']);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as PickerAnswer;
}

/** A tmux server whose windows find `bins` first on PATH; the environment a `sleds` run inside it has. */
async function tmuxWith(bins: string, w: SledsWorld): Promise<{ env: NodeJS.ProcessEnv; windows: () => Promise<string[]> }> {
  const t = await startTmux({ argv: ['sleep', '300'], env: { PATH: `${bins}:${process.env.PATH ?? '/usr/bin:/bin'}`, HOME: w.home, TERM: 'xterm-256color' }, cwd: w.home, width: 100, height: 20 });
  cleanups.push(() => t.kill());
  const { stdout } = await execFileP(TMUX_BIN, ['-L', t.socket, 'display-message', '-p', '-t', t.target, '#{socket_path},#{pid},#{session_id}']);
  const tmuxVar = stdout.trim().replace(',$', ',');
  // Dead windows close, as in a default tmux (the harness keeps them for its own debugging).
  await execFileP(TMUX_BIN, ['-L', t.socket, 'set-option', '-g', 'remain-on-exit', 'off']);
  return {
    // tmux gives a new window the PATH of the client that asked for it: the user's shell, where `claude` is.
    env: { TMUX: tmuxVar, TMUX_PANE: '%0', PATH: `${bins}:${process.env.PATH ?? '/usr/bin:/bin'}` },
    windows: async () => (await execFileP(TMUX_BIN, ['-L', t.socket, 'list-windows', '-F', '#{window_name}'])).stdout.trim().split('\n'),
  };
}

describe('the picker offers only what can run', { timeout: 60_000 }, () => {
  it('a harness that is not installed: its rows say so and offer no verb; taking one is refused with the reason', async () => {
    const bins = binDir('exit 0');
    const { w, task } = await worldWithTask(bins);
    const view = await pick(w, task.id);
    const codex = view.rows.filter((r) => r.kind === 'here' && r.harness === 'codex');
    expect(codex.length).toBeGreaterThan(0);
    for (const r of codex) expect(r).toMatchObject({ verb: '—', reason: 'Codex is not installed here (not on PATH, nor binaries.codex in config.yml)' });
    // Claude Code is there: its other models are offered.
    expect(view.rows.filter((r) => r.kind === 'here' && r.harness === 'claude-code').map((r) => r.verb)).toContain('Switch');

    const res = await requestMusher(w.socket, 'POST', `/v1/tasks/${task.id}/dispatch`, JSON.stringify({ row: codex[0]!.index }), {}, 10_000);
    expect(JSON.parse(res.body)).toMatchObject({ ok: false, line: expect.stringContaining('is not offered: Codex is not installed here') });
    const cli = await sleds(w, ['pick', task.id, String(codex[0]!.index), '--json']);
    expect(cli.code).toBe(1);
    expect(JSON.parse(cli.stdout)).toEqual({ error: expect.stringContaining('is not offered: Codex is not installed here') });
  });

  it('a harness that is installed but not logged in: its rows say so, with the command that logs in, and offer no verb', async () => {
    // What the real programs answer when nobody is logged in (measured: claude 2.1.328 `auth status`, codex 0.169.0 `login status`).
    const bins = binDir(`if [ "$1 $2" = "auth status" ]; then printf '{\\n  "loggedIn": false,\\n  "authMethod": "none"\\n}\\n'; exit 1; fi\nexit 0`);
    writeFileSync(join(bins, 'codex'), '#!/bin/sh\nif [ "$1 $2" = "login status" ]; then echo "Not logged in" >&2; exit 1; fi\nexit 0\n');
    chmodSync(join(bins, 'codex'), 0o755);
    const { w, task } = await worldWithTask(bins);
    const here = (await pick(w, task.id)).rows.filter((r) => r.kind === 'here');
    expect(new Set(here.map((r) => `${r.verb} ${r.reason}`))).toEqual(
      new Set(["— Claude Code is not logged in here — run 'claude' and /login, or set ANTHROPIC_API_KEY", "— Codex is not logged in here — run 'codex login'"]),
    );
  });

  it('a dispatch whose process dies as it starts: the exit code and its last lines, not a window that vanishes', async () => {
    const bins = binDir('echo "starting" ; echo "Error: model claude-sonnet-5-5 is not available on your plan" >&2 ; exit 3');
    const { w, task } = await worldWithTask(bins);
    const row = (await pick(w, task.id)).rows.find((r) => r.harness === 'claude-code' && r.verb === 'Switch')!;
    const tmux = await tmuxWith(bins, w);

    const took = await sleds(w, ['pick', task.id, String(row.index)], undefined, tmux.env);
    expect(took.code, took.stdout + took.stderr).toBe(1);
    expect(took.stdout).toContain('claude exited with code 3 as it started, and its window closed. Its last lines:');
    expect(took.stdout).toContain('Error: model claude-sonnet-5-5 is not available on your plan');
    expect(await tmux.windows()).toHaveLength(1); // its dead window is not left behind
  });

  it('a dispatch that keeps running: opened in a new tmux window, and the window stays', async () => {
    const bins = binDir('exec sleep 300');
    const { w, task } = await worldWithTask(bins);
    const row = (await pick(w, task.id)).rows.find((r) => r.harness === 'claude-code' && r.verb === 'Switch')!;
    const tmux = await tmuxWith(bins, w);
    const took = await sleds(w, ['pick', task.id, String(row.index)], undefined, tmux.env);
    expect(took.code, took.stdout + took.stderr).toBe(0);
    expect(took.stdout).toContain('opened in a new tmux window');
    expect(await tmux.windows()).toHaveLength(2);
  });
});
