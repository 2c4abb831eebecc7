import { z } from 'zod';
import { tmuxArg } from '../core/tmux-arg.js';
import { ResumePlanError, type ResumeArgs } from './port.js';
import { builtInHarness, HarnessId } from './registry.js';

export { ResumePlanError } from './port.js';
export { tmuxArg } from '../core/tmux-arg.js';

/**
 * How to resume a session, as a program and its arguments: in the tmux pane it runs in (restarted in place) or
 * headless. Pure: musher/resume/ runs the plan. Every command is an argument array; nothing goes through a shell.
 *
 * Measured (claude 2.1.328, codex 0.169.0, tmux 3.3a):
 * - `claude -p --resume <id> … -- <prompt>` and `codex exec resume … -- <id> <prompt>` resume from any cwd with the
 *   same session id; the `--` keeps a prompt that starts with "-" a prompt (without it claude says "unknown option").
 * - The id is glued to its option, `--resume=<id>` (claude 2.1.328: `claude -p --resume=<id> -- <prompt>` and the
 *   interactive `claude --resume=<id>` resume the same session; `--resume=--settings={…}` is taken as a value and
 *   refused, "is not a UUID and does not match any session title"), and for Codex it goes after `--`. An id never
 *   stands alone where an option could be, and it must be a session id (core/session-id.ts) before it is used.
 * - tmux runs respawn-pane's command without a shell when it is given as two or more arguments (tmux(1), "shell-command
 *   arguments"). tmux still parses its own argv: an argument ending in ";" ends the tmux command (so `x;` must be sent
 *   as `x\;`, and `x\;` as `x\\;`), and `-c` is format-expanded (`#` must be sent as `##`). Spaces, quotes and `$` pass
 *   as they are. A `-c` folder that does not exist is silently replaced by another: the runner checks it first.
 */

/** The harnesses a resume can be planned for (harnesses/registry.ts). */
export const Harness = HarnessId;
export type Harness = HarnessId;

/** tmux: restarted in place in its pane. headless: `-p` / `exec`, output to a file. foreground: the interactive
 * command for a terminal (`sleds go`), the same argv as in a pane. */
export const ResumeMode = z.enum(['tmux', 'headless', 'foreground']);
export type ResumeMode = z.infer<typeof ResumeMode>;

/** The prompt Claude Code itself sends when it continues at a reset (shared/facts/claude-code.md §3). */
export const CONTINUE_PROMPT =
  'Your usage limit has reset. Continue the task you were working on when the limit was reached; do not repeat work that is already complete.';

/**
 * What a scheduled resume stores (the jobs table's payload): the request minus the binaries, found when it runs, and
 * minus the environment, which may hold a token and is made afresh when it runs. Unknown fields are dropped, not
 * refused: whatever else a caller passes (an `env` with a token) never reaches the table.
 */
export const ResumeJob = z.object({
  harness: Harness,
  sessionId: z.string().min(1),
  cwd: z.string().min(1),
  model: z.string().nullish(),
  prompt: z.string().nullable().default(null),
  /** Where it runs: the session's tmux pane when it still has a live one, else headless; or always headless. */
  where: z.enum(['pane-else-headless', 'headless']).default('pane-else-headless'),
  permissionMode: z.string().nullish(),
});
export type ResumeJob = z.infer<typeof ResumeJob>;

export interface ResumeRequest {
  harness: Harness;
  sessionId: string;
  cwd: string;
  model?: string | null;
  /** Sent as the first message of the resumed session; null: none in a pane, CONTINUE_PROMPT headless. */
  prompt: string | null;
  /** For the harness, e.g. ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY of the gateway. */
  env?: Record<string, string>;
  mode: ResumeMode;
  /** tmux mode: the pane id, "%3". */
  tmuxPane?: string;
  /** tmux mode: the server's socket path (`tmux -S`), when it is not the default server. */
  tmuxSocket?: string | null;
  /** Claude only: `--permission-mode` for the resumed session (headless runs cannot answer a permission prompt). */
  permissionMode?: string | null;
  /** Options for the harness itself, before the session id (Codex: `-c key=value` overrides). */
  harnessArgs?: string[];
  /** tmux mode with an environment: how the pane gets it (see PaneLauncher). */
  paneLauncher?: PaneLauncher;
  claudeBin: string;
  codexBin: string;
  tmuxBin: string;
}

/**
 * How a restarted pane gets its environment (the gateway's URL and local token) without the variables ever standing
 * in an argv, where any local user reads them (`ps -eo args`, /proc/<pid>/cmdline — `tmux respawn-pane -e TOKEN=…`
 * did): the runner writes them to a 0600 file, and the pane runs `<command…> <envFile> -- <harness argv…>`
 * (`sleds exec-env`), which reads the file, removes it and starts the harness with the variables added.
 */
export interface PaneLauncher {
  /** The wrapper up to its file argument: [node, <sleds cli>, 'exec-env']. */
  command: string[];
  /** Where the runner writes the environment (in musher's 0700 runtime dir). */
  envFile: string;
}

export interface ResumePlan {
  /** The program to start (tmux itself in tmux mode). */
  file: string;
  args: string[];
  /** Added to the environment of `file` (empty in tmux mode: the pane's variables go through `envFile`). */
  env: Record<string, string>;
  /** tmux mode: the file the runner writes, 0600, before tmux runs; the pane's wrapper reads and removes it. */
  envFile: { path: string; env: Record<string, string> } | null;
  cwd: string;
  mode: ResumeMode;
  harness: Harness;
  sessionId: string;
  /** The harness binary the plan runs (inside tmux in tmux mode), for the runner to check before it starts. */
  program: string;
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const PANE_ID = /^%\d+$/;

export function planResume(req: ResumeRequest): ResumePlan {
  if (!req.cwd.startsWith('/')) throw new ResumePlanError(`resume: the session's folder must be an absolute path, got '${req.cwd}'`);
  const env = req.env ?? {};
  for (const k of Object.keys(env)) if (!ENV_NAME.test(k)) throw new ResumePlanError(`resume: '${k}' is not an environment variable name`);
  const headless = req.mode === 'headless';
  const command = resumeArgv({
    harness: req.harness,
    bin: binaryFor(req),
    sessionId: req.sessionId,
    headless,
    structured: true,
    prompt: req.prompt ?? (headless ? CONTINUE_PROMPT : null),
    model: req.model,
    permissionMode: req.permissionMode,
    harnessArgs: req.harnessArgs,
  });
  const base = { harness: req.harness, sessionId: req.sessionId, cwd: req.cwd, mode: req.mode, program: command[0]! };
  if (req.mode !== 'tmux') return { ...base, file: command[0]!, args: command.slice(1), env: { ...env }, envFile: null };

  if (!req.tmuxPane || !PANE_ID.test(req.tmuxPane)) throw new ResumePlanError(`resume: tmux mode needs a pane id like %3, got '${req.tmuxPane ?? ''}'`);
  const withEnv = Object.keys(env).length > 0;
  const launcher = req.paneLauncher;
  if (withEnv && (!launcher || launcher.command.length === 0 || !launcher.envFile.startsWith('/'))) {
    throw new ResumePlanError('resume: a pane gets its environment through the exec-env wrapper, and none was given');
  }
  const inPane = withEnv ? [...launcher!.command, launcher!.envFile, '--', ...command] : command;
  const socket = req.tmuxSocket ? ['-S', req.tmuxSocket] : [];
  return {
    ...base,
    file: req.tmuxBin,
    args: [...socket, 'respawn-pane', '-k', '-t', req.tmuxPane, '-c', tmuxArg(req.cwd.replace(/#/g, '##')), '--', ...inPane.map(tmuxArg)],
    env: {},
    envFile: withEnv ? { path: launcher!.envFile, env: { ...env } } : null,
  };
}

/** The binary the request found for its harness (the request carries one path per binary name). */
function binaryFor(req: ResumeRequest): string {
  const bins: Record<string, string> = { claude: req.claudeBin, codex: req.codexBin };
  return bins[builtInHarness(req.harness).binary.name] ?? '';
}

/** What resumes one session in its harness, as an argv (see resumeArgv). */
export interface HarnessResume extends ResumeArgs {
  harness: Harness;
}

/**
 * The harness's own argv (program first) that resumes a session: the one place an id reaches an argv. The adapter
 * (harnesses/<id>/) checks the id is a session id (a UUID), else ResumePlanError, and places it where no option can
 * be read from it (Claude Code: `--resume=<id>`; Codex: after the `--` that ends the options).
 */
export function resumeArgv(r: HarnessResume): string[] {
  return builtInHarness(r.harness).resumeArgv(r);
}

/**
 * The interactive resume as a person types it (`claude --resume=<id>`, `codex resume -- <id>`), for a command printed
 * to paste: the caller shell-quotes it (core/shell-quote.ts). Not for running: resumeArgv checks the id.
 */
export function resumeWords(harness: Harness, sessionId: string): string[] {
  return builtInHarness(harness).resumeWords(sessionId);
}
