import type { UsageRecord, WallRecord } from '../core/usage.js';
import type { HookAnswer } from '../core/wire.js';
import type { HarnessEvent } from './events.js';

/**
 * The port every harness adapter implements (`harnesses/<id>/index.ts`): what sleds must know of one coding agent,
 * in one place, so that nothing outside `harnesses/<id>/` branches on a harness's name. Pure: an adapter builds
 * argv, environments, paths and hook answers and parses the harness's own output; musher runs and reads them.
 */

export type Env = Readonly<Record<string, string | undefined>>;

/** The plan providers whose bars sleds reads and whose platform keys it holds. */
export type PlanProvider = 'anthropic' | 'openai' | 'google';

/** The providers sleds holds a platform key for (a wall continues on it); Google's plans are read, not continued. */
export type KeyedProvider = Exclude<PlanProvider, 'google'>;
export function holdsPlatformKey(p: PlanProvider): p is KeyedProvider {
  return p !== 'google';
}

/** The answers a hook prints, in the harness's dialect (exit code and stdout). */
export interface HookDialect {
  /** Let the prompt (or the stop, the tool call) go on, untouched. */
  carryOn: HookAnswer;
  /** Block the typed prompt and answer it in place with `reason` (no model request is made). */
  block(reason: string): HookAnswer;
  /** Let the prompt through with a line shown to the person, where the harness shows one. */
  carryOnWithNote(note: string): HookAnswer;
  /** Let the prompt through with context for the model (and, where the harness shows one, a line for the person). */
  carryOnWithContext(context: string, note: string | null): HookAnswer;
}

/** What resumes one session, as an argv (see HarnessAdapter.resumeArgv). */
export interface ResumeArgs {
  /** The harness binary (argv[0]). */
  bin: string;
  sessionId: string;
  /** One turn without a terminal (`claude -p`, `codex exec`). */
  headless: boolean;
  /** Headless: output musher reads (`--output-format json`, `--json`); default true. */
  structured?: boolean;
  /** The first message; required headless. */
  prompt: string | null;
  model?: string | null;
  /** `--permission-mode`, for harnesses that have one (a headless run cannot answer a permission prompt). */
  permissionMode?: string | null;
  /** Options for the harness itself, before the session id (Codex: `-c key=value` overrides). */
  harnessArgs?: string[];
}

/** A headless run with a structured event stream: the prompt goes on stdin, never in argv (`ps` shows argv). */
export interface HeadlessArgs {
  bin: string;
  prompt: string;
  model?: string | null;
  /** Resume this session instead of starting one (checked to be a session id). */
  resumeSessionId?: string | null;
  /**
   * Nobody is there to answer a permission prompt (a route node in its own worktree): let the run edit files in its
   * cwd without asking, as far as the harness allows it to unattended. Never a flag that skips every check.
   */
  unattended?: boolean;
  /**
   * The sleds MCP server for this run (a route node's agent parks its question through it): the adapter registers it
   * the harness's way and lets its `park` tool run without a prompt. null: the harness's own configuration only.
   */
  sledsMcp?: { command: string; args: string[]; env?: Record<string, string> } | null;
  harnessArgs?: string[];
}

export interface HeadlessCommand {
  argv: string[];
  stdin: string;
}

/** What a headless run left on stdout, summed up. */
export interface HeadlessResult {
  /** The final reply's text. */
  text: string | null;
  /** Whether the run says it failed; null when the output says neither. */
  isError: boolean | null;
  /** The session id the output names. */
  sessionId: string | null;
  costUsd: number | null;
  /** Why it failed, when the output says. */
  error: string | null;
}

/**
 * One line of a session's transcript (or rollout), in the view every harness shares: priced usage, a wall (a
 * usage-limit rejection), the session it belongs to, plan limits seen without usage. musher's ingest sources read the
 * harness's own richer records (harnesses/<id>/transcript.ts, rollout.ts); this view is what any caller can rely on.
 */
export type TranscriptLine =
  | { kind: 'usage'; usage: UsageRecord }
  | { kind: 'wall'; wall: WallRecord }
  | { kind: 'session'; sessionId: string; cwd: string | null }
  | { kind: 'limits' }
  | { kind: 'ignored' }
  | { kind: 'error'; message: string };

/** Reads one transcript file's lines in order (some harnesses need what earlier lines said). Never throws. */
export interface TranscriptReader {
  read(line: string): TranscriptLine;
}

/** Where musher's gateway is, and the local token a harness sends it. */
export interface GatewayTarget {
  token: string;
  /** The gateway's Anthropic-shaped base URL (`http://127.0.0.1:<port>`). */
  anthropicBaseUrl: string;
  /** The gateway's OpenAI-shaped base URL (`…/v1`). */
  openaiBaseUrl: string;
  /** The model provider the session runs on, when the harness keeps one per session (Codex's thread provider). */
  sessionProvider?: string | null;
  /** Answers will take minutes (the batch tier's Message Batches): the harness is told to wait for a silent stream. */
  slow?: boolean;
  /**
   * The run's sessions are sleds' own: started headless on the gateway by sleds (an overnight node's) and resumed
   * only that way. A harness that ties a session to its provider (Codex) may then give it a provider of sleds' own.
   */
  ownSessions?: boolean;
}

/** The environment and extra options that point a harness at the gateway, or why it cannot be. */
export type GatewayLaunch = { ok: true; env: Record<string, string>; args: string[] } | { ok: false; why: string };

/** Where a harness keeps a session's files (used by snapshot and pickup). Paths are POSIX strings. */
export interface SessionFiles {
  /** The harness's home: its config dir, from the environment or under the user's home. */
  home(env: Env, homeDir: string): string;
  /** The folder a session started in `cwd` writes its transcript under (searched recursively). */
  transcriptDir(home: string, cwd: string): string;
  /** Whether a file (by its name) is the transcript of this session. */
  isTranscriptOf(fileName: string, sessionId: string): boolean;
  /** The session id a transcript path names, or null. */
  sessionIdFromPath(path: string): string | null;
  /**
   * Where a transcript handed over from another machine goes (relative to the harness home, as `senderPath` is)
   * when the session is picked up into `cwd`, so that resuming there finds it.
   */
  installedPath(senderPath: string, cwd: string): string;
}

/**
 * Install/uninstall/doctor live in `harnesses/<id>/install*.ts` (issue 13 part H2); the lead wires them here after
 * the merge. Optional so that a harness with nothing to install (the minimal test adapter) needs none.
 */
export interface HarnessInstaller {
  install(...args: never[]): unknown;
  uninstall(...args: never[]): unknown;
  doctor(...args: never[]): unknown;
}

export interface HarnessAdapter {
  /** The id stored with sessions, walls and jobs ('claude-code', 'codex', …); the hooks' `--harness` value. */
  readonly id: string;
  /** The name a person reads ("Claude Code"). */
  readonly displayName: string;
  /** Whose plan bars the harness spends ('anthropic', 'openai'): the platform key it continues on. */
  readonly provider: PlanProvider;
  /** Detect and version: the binary's name and how to read its `--version` output. */
  readonly binary: {
    readonly name: string;
    /** What a person installs to get it ("Codex CLI"). */
    readonly installs: string;
    readVersion(stdout: string): string | null;
    /** Where its official installers put it, searched after PATH (absolute POSIX paths under `home`). */
    fallbacks?(home: string): string[];
  };
  /** Whether it is logged in, by its own word: the argv after the binary, and whether what it printed says "logged out". */
  readonly login: {
    readonly statusArgs: readonly string[];
    loggedOut(output: string): boolean;
    /** What a person does to log in, said after "not logged in here — " ("run 'codex login'"). */
    readonly hint?: string;
  };
  readonly hooks: HookDialect;
  readonly sessions: SessionFiles;
  /** The usage source name its transcript or rollout records carry ('claude-transcript', 'codex-rollout'). */
  readonly transcriptSource: string;
  /** A reader for one transcript file's lines, from the first line on. */
  transcriptReader(filePath: string): TranscriptReader;
  /** Every wall signal source only this harness produces (its transcript, its own hook events, its statusline). */
  readonly signalSources: readonly string[];
  /**
   * The harness's own argv (program first) that resumes a session: the one place an id reaches an argv. The id
   * must be a session id, else it throws ResumePlanError; it is placed where no option can be read from it.
   */
  resumeArgv(r: ResumeArgs): string[];
  /** The interactive resume as a person types it, for a printed command (the caller shell-quotes it). */
  resumeWords(sessionId: string): string[];
  /** A headless run that streams structured events (one JSON object a line) on stdout. */
  headlessArgv(r: HeadlessArgs): HeadlessCommand;
  /** One line of that stream in the shared vocabulary; a malformed or unknown line is `error`/`ignored`, never a throw. */
  parseHeadlessLine(line: string): HarnessEvent[];
  /** What a headless run (structured output) left on stdout, or null when it left nothing readable. */
  readHeadlessResult(stdout: string): HeadlessResult | null;
  /** The environment (and options) that send the harness's model requests to musher's gateway. */
  gatewayLaunch(target: GatewayTarget): GatewayLaunch;
  /** gatewayLaunch needs the session's own model provider (Codex keeps one per thread, in its rollout's first line). */
  readonly gatewayNeedsSessionProvider: boolean;
  /**
   * A live session can be restarted in place in its tmux pane: the harness keeps a record of the process that runs
   * it (Claude Code's `<config>/sessions/<pid>.json`); Codex keeps none, so its user resumes it where they like.
   */
  readonly resumesInPane: boolean;
  /** The harness continues the session by itself once a limit resets (Claude Code's autoContinueAtUsageLimit, facts §3). */
  readonly continuesItselfAtReset: boolean;
  /**
   * How a person types a sled verb at the harness's prompt: '/sled' (a plugin's slash command, the default when absent)
   * or 'sled' where the harness answers an unknown `/word` itself before hooks run (Codex).
   */
  readonly sledCommand?: string;
  /**
   * The argv after the binary that starts a new session with `prompt` as its first message (a pickup from another
   * harness: this one cannot read that one's transcript). Absent: the harness cannot be started with a brief.
   */
  startWithPrompt?(prompt: string, headless: boolean): string[];
  readonly install?: HarnessInstaller;
}

/** The first line of `--version` output that holds a dotted version, its version ("2.1.328 (Claude Code)" → 2.1.328). */
export function dottedVersion(stdout: string): string | null {
  const m = /\b(\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.-]+)?)\b/.exec(stdout);
  return m?.[1] ?? null;
}

/**
 * A whole headless stream read line by line: every line's events in order, with a turn_completed that names no
 * session given the one turn_started named (Codex says its thread id only once, at the start).
 */
export function readHeadlessStream(adapter: Pick<HarnessAdapter, 'parseHeadlessLine'>, stdout: string): HarnessEvent[] {
  let sessionId: string | null = null;
  const out: HarnessEvent[] = [];
  for (const line of stdout.split('\n')) {
    if (line.trim() === '') continue;
    for (const e of adapter.parseHeadlessLine(line)) {
      if (e.kind === 'turn_started' && e.sessionId) sessionId = e.sessionId;
      out.push(e.kind === 'turn_completed' && e.sessionId === null ? { ...e, sessionId } : e);
    }
  }
  return out;
}

/** The dialect both harnesses accept: a bare block, no fields a strict validator could refuse (see codex). */
export const COMMON_HOOK_DIALECT: HookDialect = {
  carryOn: { stdout: '', exitCode: 0 },
  block: (reason) => ({ stdout: JSON.stringify({ decision: 'block', reason }), exitCode: 0 }),
  carryOnWithNote: () => ({ stdout: '', exitCode: 0 }),
  carryOnWithContext: (context) => ({ stdout: JSON.stringify({ hookSpecificOutput: { hookEventName: 'UserPromptSubmit', additionalContext: context } }), exitCode: 0 }),
};

/** A one-line error for a request that cannot be planned (a bug of the caller, not of the user). */
export class ResumePlanError extends Error {}

/** The checks every resumeArgv makes first: a session id (a UUID) only, and a prompt when headless. */
export function checkResumable(r: ResumeArgs, program: string, isSessionId: (id: string) => boolean): void {
  if (!isSessionId(r.sessionId)) {
    throw new ResumePlanError(`resume: ${JSON.stringify(r.sessionId.slice(0, 80))} is not a session id (a UUID) — not passing it to ${program}`);
  }
  if (r.headless && r.prompt === null) throw new ResumePlanError('resume: a headless resume needs a prompt');
}
