import { execFile, spawn } from 'node:child_process';
import { asUser } from '../user-umask.js';
import { randomBytes } from 'node:crypto';
import { accessSync, chmodSync, closeSync, constants as fsConstants, mkdirSync, openSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { encodeEnvFile, ENV_FILE_MAX_AGE_MS, ENV_FILE_PATTERN } from '../../core/exec-env-file.js';
import { builtInHarness } from '../../harnesses/registry.js';
import type { Harness, PaneLauncher, ResumeMode, ResumePlan } from '../../harnesses/resume-plan.js';
import type { Clock } from '../clock.js';
import type { Log } from '../log.js';
import { isSameProcess, procStartOf } from './find-pane.js';

/**
 * Runs a resume plan (harnesses/resume-plan.ts).
 *
 * - tmux: runs tmux's respawn-pane and reports its exit; the harness then lives in the user's pane, not under musher.
 *   The pane's environment (the gateway's token) is written first to a 0600 file in musher's 0700 runtime dir, which
 *   the pane's `sleds exec-env` reads and removes (core/exec-env-file.ts); a file tmux never got to is removed here.
 * - headless: starts the harness in its own process group (detached), stdout and stderr to files under the state
 *   dir, nothing tying it to musher: a musher that stops or restarts does not take a half-done turn down with it.
 *   While musher lives, the child's exit reports the outcome; a musher started later finds the run by its handle
 *   (pid, start time, files) and `watch`es it to the end. The outcome is read from the output file either way
 *   (Claude's JSON `result`/`is_error`, Codex's last agent message), so a run that ended while musher was away still
 *   has one — only its exit code is lost.
 */

export interface ResumeOutcome {
  ok: boolean;
  mode: ResumeMode;
  harness: Harness;
  sessionId: string;
  startedAt: number;
  finishedAt: number;
  /** The exit code of tmux (tmux mode) or of the harness (headless); null when it ended unobserved. */
  exitCode: number | null;
  pid: number | null;
  /** Headless: stdout and stderr of the run. */
  logFile: string | null;
  errFile: string | null;
  /** Claude's `result`, or Codex's last agent message. */
  result: string | null;
  isError: boolean | null;
  costUsd: number | null;
  /** One line, when it did not work. */
  error: string | null;
}

/** What identifies a headless run across a musher restart (stored with the job). */
export interface HeadlessHandle {
  pid: number;
  /** /proc start time, so a reused pid is not mistaken for the run. */
  procStart: string | null;
  harness: Harness;
  sessionId: string;
  logFile: string;
  errFile: string;
  startedAt: number;
}

export interface ResumeRunnerDeps {
  log: Log;
  clock: Clock;
  /** Where headless runs write their output, e.g. <state dir>/resume. */
  logDir: string;
  /** How often `watch` looks whether a run from before a restart is still going; default 2 s. */
  watchEveryMs?: number;
  /** The environment the plan's variables are added to; default musher's own. */
  baseEnv?: NodeJS.ProcessEnv;
  /** How a restarted pane gets its environment: the wrapper's argv up to its file, and the (0700) folder of the files. */
  execEnv: { command: string[]; dir: string };
}

export interface RunOptions {
  /** Names the output files (a job id); default the session id and time. */
  name?: string;
  /** Headless: called once the harness has started, with what finds it again after a restart. */
  onStarted?: (handle: HeadlessHandle) => void;
}

type OutcomeBase = Pick<ResumeOutcome, 'mode' | 'harness' | 'sessionId' | 'startedAt'>;

const TMUX_TIMEOUT_MS = 10_000;
const MAX_OUTPUT_BYTES = 8 * 1024 * 1024;

export class ResumeRunner {
  constructor(private readonly deps: ResumeRunnerDeps) {}

  /** For a tmux plan with an environment: the wrapper and a fresh file name for it (harnesses/resume-plan.ts). */
  paneLauncher(): PaneLauncher {
    return { command: [...this.deps.execEnv.command], envFile: join(this.deps.execEnv.dir, `env-${randomBytes(12).toString('hex')}.json`) };
  }

  async run(plan: ResumePlan, opts: RunOptions = {}): Promise<ResumeOutcome> {
    const startedAt = this.deps.clock.now();
    const base = { mode: plan.mode, harness: plan.harness, sessionId: plan.sessionId, startedAt };
    const problem = this.preflight(plan);
    if (problem) return this.failed(base, problem);
    if (plan.mode === 'tmux') return this.runTmux(plan, base);
    if (plan.mode === 'headless') return this.runHeadless(plan, base, opts);
    return this.failed(base, `resume: '${plan.mode}' runs in the user's terminal, not under musher`);
  }

  /** The end of a headless run started before this musher: polls until its process is gone, then reads its output. */
  watch(handle: HeadlessHandle): Promise<ResumeOutcome> {
    return new Promise((resolve) => {
      const every = this.deps.watchEveryMs ?? 2000;
      const look = (): void => {
        if (isSameProcess(handle.pid, handle.procStart ?? undefined)) {
          setTimeout(look, every).unref();
          return;
        }
        resolve(this.readOutcome(handle, null));
      };
      look();
    });
  }

  /** What a missing folder or binary would otherwise turn into: tmux starting the pane elsewhere, or a dead pane. */
  private preflight(plan: ResumePlan): string | null {
    try {
      if (!statSync(plan.cwd).isDirectory()) return `resume: ${plan.cwd} is not a folder — the session's folder moved?`;
    } catch {
      return `resume: the session's folder ${plan.cwd} is gone — resume it by hand from where it lives now`;
    }
    for (const bin of plan.mode === 'tmux' ? [plan.file, plan.program] : [plan.file]) {
      try {
        accessSync(bin, fsConstants.X_OK);
      } catch {
        return `resume: ${bin} is not an executable file — install it or set binaries.claude / binaries.codex / binaries.tmux in config.yml`;
      }
    }
    return null;
  }

  private runTmux(plan: ResumePlan, base: OutcomeBase): Promise<ResumeOutcome> {
    if (plan.envFile) {
      try {
        this.writeEnvFile(plan.envFile.path, plan.envFile.env);
      } catch (e) {
        return Promise.resolve(this.failed(base, `resume: could not write the pane's environment to ${plan.envFile.path}: ${(e as Error).message}`));
      }
    }
    return new Promise((resolve) => {
      execFile(plan.file, plan.args, { cwd: plan.cwd, timeout: TMUX_TIMEOUT_MS, env: { ...(this.deps.baseEnv ?? process.env), ...plan.env } }, (err, _stdout, stderr) => {
        const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : null) : 0;
        const finishedAt = this.deps.clock.now();
        if (code === 0) {
          this.deps.log.info(`resume: ${plan.harness} session ${plan.sessionId} restarted in its tmux pane`);
          resolve({ ...base, ok: true, finishedAt, exitCode: 0, pid: null, logFile: null, errFile: null, result: null, isError: null, costUsd: null, error: null });
          return;
        }
        // No pane will read it: the token goes now, not at the next sweep.
        if (plan.envFile) rmSync(plan.envFile.path, { force: true });
        const why = firstLine(stderr) || (err as Error).message;
        resolve({ ...this.failed(base, `resume: tmux could not restart the pane: ${why}`), exitCode: code });
      });
    });
  }

  /** 0600, created here and nowhere else (O_EXCL: never through a link), in a 0700 folder; stale ones swept first. */
  private writeEnvFile(path: string, env: Record<string, string>): void {
    const dir = dirname(path);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    chmodSync(dir, 0o700);
    this.sweepEnvFiles(dir);
    writeFileSync(path, encodeEnvFile(env), { mode: 0o600, flag: 'wx' });
  }

  /** Files whose pane never started (it died first, or tmux ran it elsewhere): removed once they are old. */
  private sweepEnvFiles(dir: string): void {
    const now = this.deps.clock.now();
    for (const name of readdirSync(dir)) {
      if (!ENV_FILE_PATTERN.test(name)) continue;
      const file = join(dir, name);
      try {
        if (now - statSync(file).mtimeMs > ENV_FILE_MAX_AGE_MS) {
          rmSync(file, { force: true });
          this.deps.log.warn(`resume: removed ${file}, an environment no pane read in ${ENV_FILE_MAX_AGE_MS / 60_000} minutes`);
        }
      } catch {
        // gone meanwhile: read by its pane
      }
    }
  }

  private runHeadless(plan: ResumePlan, base: OutcomeBase, opts: RunOptions): Promise<ResumeOutcome> {
    mkdirSync(this.deps.logDir, { recursive: true, mode: 0o700 });
    const name = safeName(opts.name ?? `${plan.sessionId}-${base.startedAt}`);
    const logFile = join(this.deps.logDir, `${name}.out`);
    const errFile = join(this.deps.logDir, `${name}.err`);
    const out = openSync(logFile, 'a', 0o600);
    const err = openSync(errFile, 'a', 0o600);
    return new Promise((resolve) => {
      let settled = false;
      const settle = (o: ResumeOutcome): void => {
        if (settled) return;
        settled = true;
        resolve(o);
      };
      let child;
      try {
        // The user's umask: what the resumed harness writes in the project is the user's as they would make it.
        child = asUser(() =>
          spawn(plan.file, plan.args, {
            cwd: plan.cwd,
            env: { ...(this.deps.baseEnv ?? process.env), ...plan.env },
            detached: true,
            stdio: ['ignore', out, err],
          }),
        );
      } finally {
        closeSync(out);
        closeSync(err);
      }
      child.on('error', (e) => settle({ ...this.failed(base, `resume: could not start ${plan.file}: ${e.message}`), logFile, errFile }));
      if (child.pid === undefined) return; // 'error' follows
      const handle: HeadlessHandle = {
        pid: child.pid,
        procStart: procStartOf(child.pid),
        harness: plan.harness,
        sessionId: plan.sessionId,
        logFile,
        errFile,
        startedAt: base.startedAt,
      };
      child.unref();
      this.deps.log.info(`resume: ${plan.harness} session ${plan.sessionId} running headless (pid ${child.pid}, output ${logFile})`);
      opts.onStarted?.(handle);
      child.on('exit', (code, signal) => {
        const o = this.readOutcome(handle, code);
        if (signal) o.error = o.error ?? `resume: the run was ended by ${signal}`;
        if (signal) o.ok = false;
        settle(o);
      });
    });
  }

  private readOutcome(h: HeadlessHandle, exitCode: number | null): ResumeOutcome {
    const stdout = readCapped(h.logFile);
    const parsed = builtInHarness(h.harness).readHeadlessResult(stdout);
    const finishedAt = this.deps.clock.now();
    const base = { mode: 'headless' as const, harness: h.harness, sessionId: h.sessionId, startedAt: h.startedAt, finishedAt, exitCode, pid: h.pid, logFile: h.logFile, errFile: h.errFile };
    const exitedBadly = exitCode !== null && exitCode !== 0;
    if (!parsed) {
      const why = lastLine(readCapped(h.errFile)) || lastLine(stdout);
      const error = exitCode === null ? `ended while musher was away and left no result in ${h.logFile}` : exitedBadly ? `exited with code ${exitCode}${why ? `: ${why}` : ''}` : `left no result in ${h.logFile}`;
      return { ...base, ok: false, result: null, isError: null, costUsd: null, error: `resume: ${h.harness} ${error}` };
    }
    const ok = parsed.isError === false && !exitedBadly;
    const error = ok ? null : (parsed.error ?? (exitedBadly ? `exited with code ${exitCode}` : 'the run did not finish its turn'));
    return { ...base, ok, result: parsed.text, isError: parsed.isError, costUsd: parsed.costUsd, error: error ? `resume: ${error}` : null };
  }

  private failed(base: OutcomeBase, error: string): ResumeOutcome {
    this.deps.log.warn(error);
    return { ...base, ok: false, finishedAt: this.deps.clock.now(), exitCode: null, pid: null, logFile: null, errFile: null, result: null, isError: null, costUsd: null, error };
  }
}

function readCapped(file: string): string {
  try {
    const text = readFileSync(file, 'utf8');
    return text.length > MAX_OUTPUT_BYTES ? text.slice(-MAX_OUTPUT_BYTES) : text;
  } catch {
    // No output file: the program printed nothing.
    return '';
  }
}

function firstLine(s: string): string {
  return s.split('\n').map((l) => l.trim()).find(Boolean) ?? '';
}

function lastLine(s: string): string {
  return (s.split('\n').map((l) => l.trim()).filter(Boolean).at(-1) ?? '').slice(0, 300);
}

function safeName(s: string): string {
  return s.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 120);
}
