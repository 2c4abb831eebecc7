/**
 * Throwaway HOME + clean environment for running the real Claude Code against
 * the fake API, and a helper to run `claude -p …`.
 */
import { mkdir, mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { cleanEnv, makeRealTempDir, runToEnd, type RunOptions, type RunResult } from './child.js';

export type { RunResult };

export type ClaudeAuthMode = 'apiKey' | 'subscriber';

/** Fake credentials. The API key looks real enough; the OAuth token may be any string. */
export const TEST_API_KEY = 'sk-ant-test-0123456789abcdefghijklmnopqrstuvwxyzABCDEF';
export const TEST_OAUTH_TOKEN = 'sk-ant-oat01-test-0123456789abcdefghijklmnopqrstuvwxyz';

export interface MakeClaudeHomeOptions {
  mode: ClaudeAuthMode;
  /** Base URL of the fake API (ANTHROPIC_BASE_URL). */
  fakeUrl: string;
  /** Project directory claude will run in; it is marked as trusted. */
  cwd: string;
  /** Written to ~/.claude/settings.json when given. */
  settings?: object;
  /** Shallow-merged into ~/.claude.json (top level). */
  extraClaudeJson?: Record<string, unknown>;
  /** Extra environment variables (applied last, so they can override). */
  extraEnv?: Record<string, string>;
}

export interface ClaudeHome {
  /** The temp HOME directory. */
  home: string;
  /** Clean environment for the claude process. */
  env: Record<string, string>;
  /** ~/.claude.json */
  claudeJsonPath: string;
  /** ~/.claude (the config dir; settings.json, projects/, …) */
  claudeDir: string;
  /** ~/.claude/settings.json (may not exist) */
  settingsPath: string;
  /** $TMPDIR of the claude process (<home>/tmp). */
  tmpDir: string;
  /** The realpath of the project dir, as written into the trust entry. */
  cwd: string;
  /** Removes the temp HOME. */
  cleanup(): Promise<void>;
}

/** Prefixes of inherited variables that must never reach the claude under test. */
const SCRUBBED_PREFIXES = ['CLAUDE', 'ANTHROPIC'];

/** The base environment (child.ts), never with any CLAUDE* / ANTHROPIC* variable the test runner itself may have. */
export function cleanBaseEnv(home: string): Record<string, string> {
  return cleanEnv(home, SCRUBBED_PREFIXES);
}

export async function makeClaudeHome(opts: MakeClaudeHomeOptions): Promise<ClaudeHome> {
  const home = await mkdtemp(path.join(os.tmpdir(), 'sleds-e2e-home-'));
  const claudeDir = path.join(home, '.claude');
  await mkdir(claudeDir, { recursive: true });
  // Claude Code puts its scratch files (claude-<uid>/, fswatch probes) and its
  // messaging sockets (cc-socks/<pid>.sock) under $TMPDIR: keep them per test.
  const tmpDir = path.join(home, 'tmp');
  await mkdir(tmpDir);
  const cwd = await realpath(opts.cwd);

  const claudeJson: Record<string, unknown> = {
    // Without it interactive mode runs the first-run flow (theme picker, login) and
    // fails to reach api.anthropic.com.
    hasCompletedOnboarding: true,
    // Pre-answered so no first-run theme dialog shows up.
    theme: 'dark',
    projects: {
      [cwd]: {
        hasTrustDialogAccepted: true,
        hasCompletedProjectOnboarding: true,
        allowedTools: [],
      },
    },
  };
  if (opts.mode === 'apiKey') {
    // Otherwise: "Detected a custom API key … Do you want to use this API key?" (default: No).
    claudeJson.customApiKeyResponses = { approved: [TEST_API_KEY.slice(-20)], rejected: [] };
  }
  Object.assign(claudeJson, opts.extraClaudeJson ?? {});
  const claudeJsonPath = path.join(home, '.claude.json');
  await writeFile(claudeJsonPath, JSON.stringify(claudeJson, null, 2));

  const settingsPath = path.join(claudeDir, 'settings.json');
  if (opts.settings) await writeFile(settingsPath, JSON.stringify(opts.settings, null, 2));

  const env: Record<string, string> = {
    ...cleanBaseEnv(home),
    TMPDIR: tmpDir,
    ANTHROPIC_BASE_URL: opts.fakeUrl,
    // No HEAD /api/hello, no telemetry, no attempts to reach other hosts.
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    // Lets --dangerously-skip-permissions run as root.
    IS_SANDBOX: '1',
    // A failing request fails at once instead of ~3 minutes of backoff.
    CLAUDE_CODE_MAX_RETRIES: '0',
  };
  if (opts.mode === 'apiKey') env.ANTHROPIC_API_KEY = TEST_API_KEY;
  else env.CLAUDE_CODE_OAUTH_TOKEN = TEST_OAUTH_TOKEN;
  Object.assign(env, opts.extraEnv ?? {});

  return {
    home,
    env,
    claudeJsonPath,
    claudeDir,
    settingsPath,
    tmpDir,
    cwd,
    cleanup: () => rm(home, { recursive: true, force: true, maxRetries: 5 }),
  };
}

/** A fresh empty project directory (mkdtemp, realpath'd). */
export function makeProjectDir(prefix = 'sleds-e2e-proj-'): Promise<string> {
  return makeRealTempDir(prefix);
}

export type RunClaudePrintOptions = Omit<RunOptions, 'input'>;

/**
 * Runs `<bin> <args…>` (typically `['-p', 'hello']`) with stdin closed
 * (/dev/null), collecting stdout and stderr. Never rejects for a non-zero exit.
 */
export function runClaudePrint(bin: string, args: string[], opts: RunClaudePrintOptions): Promise<RunResult> {
  return runToEnd(bin, args, opts);
}

export interface StatuslineRecorder {
  /** Value for settings.statusLine.command. */
  command: string;
  /** Where the last stdin JSON is saved (written atomically: tmp file + rename). */
  dataFile: string;
  /** The last saved stdin JSON, or undefined if the statusline has not run yet. */
  read(): Promise<any | undefined>;
}

/**
 * Writes a tiny node script into `dir` to use as a statusLine command. It saves
 * its stdin JSON to `dataFile` and prints one line:
 * `<label> 5h=<five_hour.used_percentage|none> 7d=<seven_day.used_percentage|none>`.
 */
export async function writeStatuslineRecorder(dir: string, label = 'SLEDS-E2E-STATUS'): Promise<StatuslineRecorder> {
  const script = path.join(dir, 'statusline-recorder.mjs');
  const dataFile = path.join(dir, 'statusline-stdin.json');
  const source = `import { readFileSync, renameSync, writeFileSync } from 'node:fs';
const raw = readFileSync(0, 'utf8');
const out = ${JSON.stringify(dataFile)};
writeFileSync(out + '.tmp-' + process.pid, raw);
renameSync(out + '.tmp-' + process.pid, out);
let d = {};
try { d = JSON.parse(raw); } catch {}
const rl = d.rate_limits ?? {};
console.log(${JSON.stringify(label)} + ' 5h=' + (rl.five_hour?.used_percentage ?? 'none') + ' 7d=' + (rl.seven_day?.used_percentage ?? 'none'));
`;
  await writeFile(script, source);
  // statusLine commands run through a shell: quote both paths.
  const command = `${shellQuote(process.execPath)} ${shellQuote(script)}`;
  return {
    command,
    dataFile,
    async read() {
      try {
        return JSON.parse(await readFile(dataFile, 'utf8'));
      } catch {
        return undefined;
      }
    },
  };
}

/** POSIX single-quote quoting for a value placed into a shell command string. */
export function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}
