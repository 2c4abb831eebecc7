import { execFile, spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { planResume, type ResumeRequest } from '../../harnesses/resume-plan.js';
import { findLivePane, findLiveSessions, procStartOf } from '../../musher/resume/find-pane.js';
import { ResumeRunner } from '../../musher/resume/runner.js';
import { resumeJobHandler } from '../../musher/resume/resume-job.js';
import { Scheduler } from '../../musher/scheduler/scheduler.js';
import { openStore } from '../../musher/store/db.js';
import { JobStore } from '../../musher/store/jobs.js';
import type { Log } from '../../musher/log.js';
import { startTmux, TMUX_BIN, type TmuxSession } from '../e2e/harness/tmux.js';
import { CLI, waitFor } from '../support/sleds-env.js';

/**
 * Resuming in place with the real tmux: a pane running a placeholder is respawned with the planned command, which
 * records what it received (argv, cwd, env) — so every argument, with spaces, quotes and a trailing ";", is checked
 * as the program sees it.
 */

const execFileP = promisify(execFile);
const SID = '08e1184f-b354-4ea7-836d-1d444464ed05';
const TRICKY = `fix "the bug" in Bob's code; then -x $HOME \`ls\` #{pane_id};`;

const log: Log = { info: () => undefined, warn: () => undefined, error: () => undefined };
const clock = { now: () => Date.now() };

let root: string;
let tmux: TmuxSession;
let socketPath: string;
let pane: string;
let recorder: string;
let runner: ResumeRunner;
const cleanups: Array<() => unknown> = [];

/** A stand-in for claude: writes what it got to $RECORD_TO, then waits to be killed. */
const RECORDER = `#!${process.execPath}
const { writeFileSync, renameSync } = require('node:fs');
const out = process.env.RECORD_TO;
const data = { argv: process.argv.slice(2), cwd: process.cwd(), pid: process.pid, ppid: process.ppid, pane: process.env.TMUX_PANE,
  env: { GATEWAY_TOKEN: process.env.GATEWAY_TOKEN, QUOTED: process.env.QUOTED, CLAUDE_CONFIG_DIR: process.env.CLAUDE_CONFIG_DIR } };
writeFileSync(out + '.tmp', JSON.stringify(data));
renameSync(out + '.tmp', out);
setInterval(() => {}, 1 << 30);
`;

async function tm(...args: string[]): Promise<string> {
  const { stdout } = await execFileP(TMUX_BIN, ['-S', socketPath, ...args]);
  return stdout.trim();
}

function readRecord(file: string): Promise<{ argv: string[]; cwd: string; pid: number; ppid: number; pane: string; env: Record<string, string> }> {
  return waitFor(`the respawned program to write ${basename(file)}`, () => JSON.parse(readFileSync(file, 'utf8')));
}

/** The runner as musher builds it: a pane's variables go through `sleds exec-env` (the CLI the tests run) and a 0600 file. */
function runnerIn(dir: string): ResumeRunner {
  return new ResumeRunner({ log, clock, logDir: join(dir, 'logs'), execEnv: { command: [process.execPath, ...CLI, 'exec-env'], dir: join(dir, 'run', 'env') } });
}

function request(over: Partial<ResumeRequest>): ResumeRequest {
  return {
    harness: 'claude-code',
    sessionId: SID,
    cwd: root,
    prompt: null,
    mode: 'tmux',
    tmuxPane: pane,
    tmuxSocket: socketPath,
    claudeBin: recorder,
    codexBin: '/nonexistent/codex',
    tmuxBin: TMUX_BIN,
    paneLauncher: runner.paneLauncher(),
    ...over,
  };
}

beforeEach(async () => {
  root = realpathSync(mkdtempSync(join(tmpdir(), 'sl-tmux-')));
  cleanups.push(() => rmSync(root, { recursive: true, force: true }));
  runner = runnerIn(root);
  recorder = join(root, 'fake claude');
  writeFileSync(recorder, RECORDER);
  chmodSync(recorder, 0o755);
  tmux = await startTmux({ argv: ['sleep', '300'], env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: root, TERM: 'xterm-256color' }, cwd: root, width: 100, height: 20 });
  cleanups.push(() => tmux.kill());
  const { stdout } = await execFileP(TMUX_BIN, ['-L', tmux.socket, 'display-message', '-p', '-t', tmux.target, '#{socket_path}\t#{pane_id}']);
  [socketPath, pane] = stdout.trim().split('\t') as [string, string];
});

afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('resume in its tmux pane (real tmux)', () => {
  it('respawns the pane in place with the planned command; every argument and variable arrives intact', async () => {
    const before = Number(await tm('display-message', '-p', '-t', pane, '#{pane_pid}'));
    const cwd = join(root, 'my proj #1');
    mkdirSync(cwd);
    const record = join(root, 'record.json');
    const plan = planResume(
      request({
        cwd,
        model: 'claude sonnet "5"',
        prompt: TRICKY,
        env: { RECORD_TO: record, GATEWAY_TOKEN: 'sleds local; token', QUOTED: `"q" 'x' $HOME \\;` },
      }),
    );
    const outcome = await runner.run(plan);
    expect(outcome).toMatchObject({ ok: true, mode: 'tmux', exitCode: 0, error: null });

    const got = await readRecord(record);
    expect(got.argv).toEqual([`--resume=${SID}`, '--model', 'claude sonnet "5"', '--', TRICKY]);
    expect(got.cwd).toBe(cwd);
    expect(got.env).toEqual({ GATEWAY_TOKEN: 'sleds local; token', QUOTED: `"q" 'x' $HOME \\;` });
    expect(got.pane).toBe(pane);
    // The same pane, a new process: the placeholder is gone and the planned command runs there, under the
    // exec-env wrapper that handed it the variables.
    const [paneId, pid, command] = (await tm('display-message', '-p', '-t', pane, '#{pane_id}\t#{pane_pid}\t#{pane_current_command}')).split('\t');
    expect(paneId).toBe(pane);
    expect(got.ppid).toBe(Number(pid));
    expect(Number(pid)).not.toBe(before);
    // The variables are in no process's argv (what `ps` shows any local user), and their file is gone.
    for (const p of [Number(pid), got.pid]) expect(readFileSync(`/proc/${p}/cmdline`, 'utf8')).not.toContain('sleds local; token');
    expect(readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')).toContain('exec-env');
    expect(readdirSync(join(root, 'run', 'env'))).toEqual([]);
    expect(command).toBe(basename(process.execPath));
    expect(await tm('list-panes', '-a', '-F', '#{pane_id}')).toBe(pane);
  });

  it('fails in one line, touching nothing, when the pane or the folder is gone', async () => {
    const before = await tm('display-message', '-p', '-t', pane, '#{pane_pid}');
    const noPane = await runner.run(planResume(request({ tmuxPane: '%999', env: { GATEWAY_TOKEN: 'local-token' } })));
    expect(noPane.ok).toBe(false);
    expect(noPane.error).toMatch(/^resume: tmux could not restart the pane: can't find pane: %999$/);
    // The file tmux never handed to a pane is removed at once.
    expect(readdirSync(join(root, 'run', 'env'))).toEqual([]);
    const noFolder = await runner.run(planResume(request({ cwd: join(root, 'moved away') })));
    expect(noFolder).toMatchObject({ ok: false, error: `resume: the session's folder ${join(root, 'moved away')} is gone — resume it by hand from where it lives now` });
    const noBinary = await runner.run(planResume(request({ claudeBin: join(root, 'no-claude') })));
    expect(noBinary.error).toMatch(/no-claude is not an executable file/);
    expect(await tm('display-message', '-p', '-t', pane, '#{pane_pid}')).toBe(before);
  });

  it('findLivePane reads <config>/sessions: live pid with the same start time only; the tmux server from the process', async () => {
    // Put the recorder in the pane: a live process that tmux started, with TMUX in its environment.
    const record = join(root, 'record.json');
    await runner.run(planResume(request({ env: { RECORD_TO: record } })));
    const live = await readRecord(record);
    const config = join(root, 'claude');
    const sessions = join(config, 'sessions');
    mkdirSync(sessions, { recursive: true });
    const write = (name: string, body: unknown) => writeFileSync(join(sessions, name), typeof body === 'string' ? body : JSON.stringify(body));
    const dead = await deadPid();
    write(`${dead}.json`, { pid: dead, sessionId: SID, tmux: 'w:@1.%7', startedAt: 3 });
    // This test process, but not the process that wrote the file (another start time): a reused pid.
    write(`${process.pid}.json`, { pid: process.pid, sessionId: SID, procStart: '1', tmux: 'w:@2.%8', startedAt: 2 });
    write(`${live.pid}.json`, { pid: live.pid, sessionId: SID, cwd: root, procStart: procStartOf(live.pid), kind: 'interactive', tmux: `main:@0.${pane}`, startedAt: 1, extra: true });
    write(`${live.pid}.8f98.key`, { peerToken: 'x' });
    write('12345.json', '{ torn');

    expect(findLivePane(config, SID)).toBe(pane);
    expect(findLiveSessions(config, SID)).toEqual([{ pid: live.pid, sessionId: SID, cwd: root, pane, tmuxSocket: socketPath, claudeConfigDirEnv: null, startedAt: 1 }]);
    expect(findLivePane(config, 'another-session')).toBeNull();
    expect(findLivePane(join(root, 'no-such-config'), SID)).toBeNull();
  });

  it('a scheduled hold finds the live pane and its server at run time and resumes there with the prompt', async () => {
    const record = join(root, 'record.json');
    const config = join(root, 'claude');
    // The session was started with its own config dir (in the user's shell, not in tmux's environment).
    await runner.run(planResume(request({ env: { RECORD_TO: record, CLAUDE_CONFIG_DIR: config } })));
    const first = await readRecord(record);
    mkdirSync(join(config, 'sessions'), { recursive: true });
    writeFileSync(join(config, 'sessions', `${first.pid}.json`), JSON.stringify({ pid: first.pid, sessionId: SID, procStart: procStartOf(first.pid), tmux: `main:@0.${pane}` }));
    rmSync(record);

    const db = openStore(join(root, 'sleds.db'));
    cleanups.push(() => db.close());
    const handler = resumeJobHandler({
      runner,
      log,
      claudeConfigDir: config,
      binaries: () => ({ claude: recorder, codex: null, tmux: TMUX_BIN }),
      envFor: () => ({ RECORD_TO: record, GATEWAY_TOKEN: 'local-token' }),
    });
    const scheduler = new Scheduler({ store: new JobStore(db), clock, log, handlers: { hold: handler }, timer: { setTimeout: () => null, clearTimeout: () => undefined } });
    scheduler.start();
    const job = scheduler.schedule({ kind: 'hold', sessionId: SID, runAt: Date.now(), payload: { harness: 'claude-code', sessionId: SID, cwd: root, prompt: 'continue where you stopped', model: 'sonnet' } });
    await scheduler.tick(Date.now());

    const second = await readRecord(record);
    expect(second.pid).not.toBe(first.pid);
    expect(second.argv).toEqual([`--resume=${SID}`, '--model', 'sonnet', '--', 'continue where you stopped']);
    expect(second.env.GATEWAY_TOKEN).toBe('local-token');
    expect(second.env.CLAUDE_CONFIG_DIR).toBe(config);
    expect(scheduler.get(job.id)).toMatchObject({ state: 'done', result: { ok: true, summary: 'resumed in its tmux pane', detail: { mode: 'tmux' } } });
    // The token was handed to the pane, never stored with the job.
    expect(JSON.stringify(scheduler.get(job.id))).not.toContain('local-token');
  });
});

function deadPid(): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['-e', '0'], { stdio: 'ignore' });
    child.on('exit', () => resolve(child.pid!));
  });
}
