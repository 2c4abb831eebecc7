import { z } from 'zod';
import { oneLine } from './format.js';
import { isSessionId } from './session-id.js';

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

export const Harness = z.enum(['claude-code', 'codex']);
export type Harness = z.infer<typeof Harness>;

/** A session's harness as stored (a free string from the hooks' --harness): Codex, else Claude Code. */
export function harnessOf(name: string | null | undefined): Harness {
  return name === 'codex' ? 'codex' : 'claude-code';
}
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

/** A one-line error for a request that cannot be planned (a bug of the caller, not of the user). */
export class ResumePlanError extends Error {}

export function planResume(req: ResumeRequest): ResumePlan {
  if (!req.cwd.startsWith('/')) throw new ResumePlanError(`resume: the session's folder must be an absolute path, got '${req.cwd}'`);
  const env = req.env ?? {};
  for (const k of Object.keys(env)) if (!ENV_NAME.test(k)) throw new ResumePlanError(`resume: '${k}' is not an environment variable name`);
  const headless = req.mode === 'headless';
  const command = resumeArgv({
    harness: req.harness,
    bin: req.harness === 'claude-code' ? req.claudeBin : req.codexBin,
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

/** What resumes one session in its harness, as an argv (see resumeArgv). */
export interface HarnessResume {
  harness: Harness;
  /** The harness binary (argv[0]). */
  bin: string;
  sessionId: string;
  /** `claude -p` / `codex exec`: one turn without a terminal. */
  headless: boolean;
  /** Headless: output musher reads (`--output-format json`, `--json`); default true. */
  structured?: boolean;
  /** The first message; required headless. */
  prompt: string | null;
  model?: string | null;
  /** Claude only: `--permission-mode` (a headless run cannot answer a permission prompt). */
  permissionMode?: string | null;
  /** Options for the harness itself, before the session id (Codex: `-c key=value` overrides). */
  harnessArgs?: string[];
}

/**
 * The harness's own argv (program first) that resumes a session: the one place an id reaches an argv. The id must be
 * a session id (a UUID), else ResumePlanError; Claude Code gets it glued to its option (`--resume=<id>`), Codex
 * after the `--` that ends the options, so even a hostile id could never be read as an option.
 */
export function resumeArgv(r: HarnessResume): string[] {
  if (!isSessionId(r.sessionId)) {
    throw new ResumePlanError(`resume: ${JSON.stringify(r.sessionId.slice(0, 80))} is not a session id (a UUID) — not passing it to ${r.harness === 'codex' ? 'codex' : 'claude'}`);
  }
  if (r.headless && r.prompt === null) throw new ResumePlanError('resume: a headless resume needs a prompt');
  const structured = r.headless && r.structured !== false;
  const model = r.model ? ['--model', r.model] : [];
  const extra = r.harnessArgs ?? [];
  const prompt = r.prompt !== null ? [r.prompt] : [];
  if (r.harness === 'claude-code') {
    return [
      r.bin,
      ...(r.headless ? ['-p'] : []),
      `--resume=${r.sessionId}`,
      ...(structured ? ['--output-format', 'json'] : []),
      ...model,
      ...(r.permissionMode ? ['--permission-mode', r.permissionMode] : []),
      ...extra,
      ...(r.prompt !== null ? ['--', r.prompt] : []),
    ];
  }
  // Codex: the id is positional, so it goes after the `--` with the prompt.
  if (r.headless) return [r.bin, 'exec', 'resume', '--skip-git-repo-check', ...(structured ? ['--json'] : []), ...model, ...extra, '--', r.sessionId, ...prompt];
  return [r.bin, 'resume', ...model, ...extra, '--', r.sessionId, ...prompt];
}

/**
 * The interactive resume as a person types it (`claude --resume=<id>`, `codex resume -- <id>`), for a command printed
 * to paste: the caller shell-quotes it (core/shell-quote.ts). Not for running: resumeArgv checks the id.
 */
export function resumeWords(harness: Harness, sessionId: string): string[] {
  return harness === 'codex' ? ['codex', 'resume', '--', sessionId] : ['claude', `--resume=${sessionId}`];
}

/** One argument as tmux's own argv parser must see it so the program receives it unchanged (see the top). */
export function tmuxArg(arg: string): string {
  return arg.endsWith(';') ? `${arg.slice(0, -1)}\\;` : arg;
}

// ---------------------------------------------------------------------------------------------------------------
// What a headless run left on stdout

export interface HeadlessResult {
  /** Claude's `result`, or Codex's last agent message. */
  text: string | null;
  /** Claude's `is_error`; for Codex, whether the turn failed. Null when the output says neither. */
  isError: boolean | null;
  /** The session id the output names (Claude's `session_id`, Codex's `thread_id`). */
  sessionId: string | null;
  costUsd: number | null;
  /** Why it failed, when the output says (Claude's api error status, Codex's turn.failed / error message). */
  error: string | null;
}

/** How much of a headless run's error is kept (one line in a job's outcome). */
const ERROR_MAX = 500;

const ClaudeResult = z.looseObject({
  type: z.string().optional(),
  result: z.string().optional(),
  is_error: z.boolean().optional(),
  session_id: z.string().optional(),
  total_cost_usd: z.number().optional(),
  api_error_status: z.number().nullish(),
  terminal_reason: z.string().nullish(),
});

/** `claude -p --output-format json`: one JSON object (the last line that parses as one is taken). */
export function readClaudeOutput(stdout: string): HeadlessResult | null {
  const lines = stdout.split('\n').filter((l) => l.trim().startsWith('{'));
  for (let i = lines.length - 1; i >= 0; i--) {
    let json: unknown;
    try {
      json = JSON.parse(lines[i]!);
    } catch {
      // Not JSON: output around the result object, skipped.
      continue;
    }
    const r = ClaudeResult.safeParse(json);
    if (!r.success || (r.data.result === undefined && r.data.is_error === undefined)) continue;
    const d = r.data;
    const why = d.is_error ? [d.terminal_reason, d.api_error_status ? `HTTP ${d.api_error_status}` : null].filter(Boolean).join(', ') : '';
    return {
      text: d.result ?? null,
      isError: d.is_error ?? null,
      sessionId: d.session_id ?? null,
      costUsd: d.total_cost_usd ?? null,
      error: d.is_error ? oneLine(`${d.result ?? 'error'}${why ? ` (${why})` : ''}`, ERROR_MAX) : null,
    };
  }
  return null;
}

const CodexEvent = z.looseObject({
  type: z.string(),
  thread_id: z.string().optional(),
  item: z.looseObject({ type: z.string().optional(), text: z.string().optional(), message: z.string().optional() }).optional(),
  error: z.looseObject({ message: z.string().optional() }).nullish(),
  message: z.string().optional(),
});

/** `codex exec --json`: JSON lines; the last agent_message, and whether the turn completed or failed. */
export function readCodexOutput(stdout: string): HeadlessResult | null {
  let text: string | null = null;
  let sessionId: string | null = null;
  let turn: 'completed' | 'failed' | null = null;
  let failure: string | null = null;
  let lastError: string | null = null;
  let seen = false;
  for (const line of stdout.split('\n')) {
    if (!line.trim().startsWith('{')) continue;
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch {
      // Not JSON: a line that is not one of codex's events, skipped.
      continue;
    }
    const r = CodexEvent.safeParse(json);
    if (!r.success) continue;
    seen = true;
    const e = r.data;
    if (e.type === 'thread.started' && e.thread_id) sessionId = e.thread_id;
    else if (e.type === 'item.completed' && e.item?.type === 'agent_message' && e.item.text !== undefined) text = e.item.text;
    else if (e.type === 'turn.completed') turn = 'completed';
    else if (e.type === 'turn.failed') {
      turn = 'failed';
      failure = e.error?.message ?? 'the turn failed';
    }
    // A top-level error may be one Codex recovered from (a retried stream): it decides only when no turn ended.
    else if (e.type === 'error') lastError = e.message ?? e.error?.message ?? 'error';
  }
  if (!seen) return null;
  const error = turn === 'failed' ? failure : turn === null ? lastError : null;
  const isError = turn === 'failed' ? true : turn === 'completed' ? false : lastError !== null ? true : null;
  return { text, isError, sessionId, costUsd: null, error: error !== null ? oneLine(error, ERROR_MAX) : null };
}

/** The environment variable a Codex session resumed on the gateway reads its local token from. */
export const CODEX_GATEWAY_TOKEN_ENV = 'SLEDS_GATEWAY_TOKEN';

/**
 * Codex on the gateway: the thread's OWN provider pointed at it. Codex 0.169 refuses to resume a thread under
 * another provider ("Cannot change this thread's model provider from `fake` to `x` on resume", measured), but takes
 * `-c` overrides of the same provider's base_url and env_key. Null when the provider id is not a plain TOML key.
 */
export function codexGatewayArgs(provider: string, openaiBaseUrl: string): string[] | null {
  if (!/^[A-Za-z0-9_-]+$/.test(provider)) return null;
  return ['-c', `model_providers.${provider}.base_url=${JSON.stringify(openaiBaseUrl)}`, '-c', `model_providers.${provider}.env_key=${JSON.stringify(CODEX_GATEWAY_TOKEN_ENV)}`];
}
