import { isSessionId } from '../../core/session-id.js';
import type { HookAnswer } from '../../core/wire.js';
import { checkResumable, dottedVersion, ResumePlanError, type Env, type HarnessAdapter, type HeadlessArgs, type ResumeArgs, type TranscriptLine } from '../port.js';
import { parseClaudeHeadlessLine, readClaudeOutput } from './headless.js';
import { claudeProjectSlug } from './project-slug.js';
import { CLAUDE_TRANSCRIPT_SOURCE, parseClaudeTranscriptLine, sessionIdFromTranscriptPath } from './transcript.js';

/**
 * Claude Code (measured on 2.1.328; /work/shared/facts/claude-code.md). Hooks: JSON on stdout with exit 0
 * (§1.4); transcripts under `<config>/projects/<slug of the launch cwd>/<session>.jsonl` (§4); headless with
 * `-p --output-format stream-json --verbose` (§6); the gateway through ANTHROPIC_BASE_URL and ANTHROPIC_AUTH_TOKEN.
 */

const json = (answer: object): HookAnswer => ({ stdout: JSON.stringify(answer), exitCode: 0 });

function home(env: Env, homeDir: string): string {
  return (env.CLAUDE_CONFIG_DIR || `${homeDir.replace(/\/+$/, '')}/.claude`).replace(/\/+$/, '');
}

function resumeArgv(r: ResumeArgs): string[] {
  checkResumable(r, 'claude', isSessionId);
  const structured = r.headless && r.structured !== false;
  return [
    r.bin,
    ...(r.headless ? ['-p'] : []),
    // The id is glued to its option: `--resume=--settings={…}` is a refused value, never an option (2.1.328).
    `--resume=${r.sessionId}`,
    ...(structured ? ['--output-format', 'json'] : []),
    ...(r.model ? ['--model', r.model] : []),
    ...(r.permissionMode ? ['--permission-mode', r.permissionMode] : []),
    ...(r.harnessArgs ?? []),
    // `--` keeps a prompt that starts with "-" a prompt (without it claude says "unknown option").
    ...(r.prompt !== null ? ['--', r.prompt] : []),
  ];
}

/**
 * Edits in the cwd without asking (`-p` denies what it would have asked about). Not bypassPermissions: as root it is
 * refused (shared/facts/claude-code.md §0), and a worktree is no sandbox.
 */
const UNATTENDED = ['--permission-mode', 'acceptEdits'];

/**
 * The sleds MCP server for one run: `--mcp-config` takes a JSON string (a server named `sleds`, so its tools are
 * `mcp__sleds__<tool>`), and `-p` denies a tool it would have asked about, so park is allowed by name.
 */
function sledsMcpArgs(mcp: HeadlessArgs['sledsMcp']): string[] {
  if (!mcp) return [];
  return ['--mcp-config', JSON.stringify({ mcpServers: { sleds: { type: 'stdio', command: mcp.command, args: mcp.args, ...(mcp.env ? { env: mcp.env } : {}) } } }), '--allowedTools', 'mcp__sleds__park,mcp__sleds__ask'];
}

function headlessArgv(r: HeadlessArgs): { argv: string[]; stdin: string } {
  if (r.resumeSessionId != null && !isSessionId(r.resumeSessionId)) {
    throw new ResumePlanError(`headless: ${JSON.stringify(r.resumeSessionId.slice(0, 80))} is not a session id (a UUID) — not passing it to claude`);
  }
  return {
    // `-p` with no prompt argument reads the prompt from stdin (captured, tests/fixtures/headless).
    argv: [r.bin, '-p', '--output-format', 'stream-json', '--verbose', ...(r.resumeSessionId ? [`--resume=${r.resumeSessionId}`] : []), ...(r.model ? ['--model', r.model] : []), ...(r.unattended ? UNATTENDED : []), ...sledsMcpArgs(r.sledsMcp), ...(r.harnessArgs ?? [])],
    stdin: r.prompt,
  };
}

/** A transcript line in the shared view: every record stands alone (no state between lines). */
function readTranscriptLine(line: string, filePath: string): TranscriptLine {
  const p = parseClaudeTranscriptLine(line, { filePath });
  return p.kind === 'session' ? { kind: 'session', sessionId: p.sessionId, cwd: p.cwd } : p;
}

export const claudeCode = {
  id: 'claude-code',
  displayName: 'Claude Code',
  provider: 'anthropic',
  binary: {
    name: 'claude',
    installs: 'Claude Code',
    readVersion: dottedVersion,
    // Where the official installers put claude (the native one, and the npm-local one).
    fallbacks: (home: string) => [`${home.replace(/\/+$/, '')}/.claude/local/claude`, `${home.replace(/\/+$/, '')}/.local/bin/claude`],
  },
  transcriptSource: CLAUDE_TRANSCRIPT_SOURCE,
  transcriptReader: (filePath: string) => ({ read: (line: string) => readTranscriptLine(line, filePath) }),
  signalSources: [CLAUDE_TRANSCRIPT_SOURCE, 'hook:StopFailure', 'statusline'],
  // `claude auth status` prints JSON with `loggedIn` and exits 1 when false (measured).
  login: {
    statusArgs: ['auth', 'status'],
    hint: "run 'claude' and /login, or set ANTHROPIC_API_KEY",
    loggedOut: (output: string) => {
      try {
        return (JSON.parse(output) as { loggedIn?: unknown }).loggedIn === false;
      } catch {
        // Not the JSON answer (an older version without the command): not a clear "logged out".
        return false;
      }
    },
  },
  hooks: {
    carryOn: { stdout: '', exitCode: 0 },
    // suppressOriginalPrompt: the typed `/sled …` is not echoed under the block (facts §1.5).
    block: (reason: string) => json({ decision: 'block', reason, hookSpecificOutput: { hookEventName: 'UserPromptSubmit', suppressOriginalPrompt: true } }),
    // Shown as "UserPromptSubmit says: …" when the prompt goes on (§1.4).
    carryOnWithNote: (note: string) => json({ systemMessage: note }),
    carryOnWithContext: (context: string, note: string | null) => {
      const specific = { hookEventName: 'UserPromptSubmit', additionalContext: context };
      return json(note === null ? { hookSpecificOutput: specific } : { systemMessage: note, hookSpecificOutput: specific });
    },
  },
  sessions: {
    home,
    transcriptDir: (configDir: string, cwd: string) => `${configDir}/projects/${claudeProjectSlug(cwd)}`,
    isTranscriptOf: (fileName: string, sessionId: string) => fileName === `${sessionId}.jsonl`,
    sessionIdFromPath: sessionIdFromTranscriptPath,
    // Under the project folder of the cwd it resumes in (not the sender's), so both `claude --resume=<id>` and
    // `claude --continue` run there find it.
    installedPath: (senderPath: string, cwd: string) => `projects/${claudeProjectSlug(cwd)}/${senderPath.split('/').pop() ?? ''}`,
  },
  resumeArgv,
  resumeWords: (sessionId: string) => ['claude', `--resume=${sessionId}`],
  headlessArgv,
  parseHeadlessLine: parseClaudeHeadlessLine,
  readHeadlessResult: readClaudeOutput,
  /**
   * ANTHROPIC_AUTH_TOKEN (sent as a bearer token) wins over a subscriber's CLAUDE_CODE_OAUTH_TOKEN and, unlike
   * ANTHROPIC_API_KEY, asks no "use this API key?" question in an interactive session (measured on 2.1.328). The
   * token only works against this machine's gateway: the platform key itself never leaves musher.
   */
  // A slow gateway (the batch tier) answers after minutes of keepalives only: Claude Code aborts and re-sends a stream
  // without data after 5 minutes unless its idle timeout is raised (to its 30-minute maximum) and its fetch idle
  // limit lifted (shared/facts/claude-code.md "Slow responses").
  gatewayLaunch: (t) => ({
    ok: true,
    env: { ANTHROPIC_BASE_URL: t.anthropicBaseUrl, ANTHROPIC_AUTH_TOKEN: t.token, ...(t.slow ? { CLAUDE_STREAM_IDLE_TIMEOUT_MS: '1800000', API_FORCE_IDLE_TIMEOUT: '0' } : {}) },
    args: [],
  }),
  gatewayNeedsSessionProvider: false,
  sledCommand: '/sled',
  // `--` keeps a brief that starts with "-" a prompt.
  startWithPrompt: (prompt: string, headless: boolean) => (headless ? ['-p', '--', prompt] : ['--', prompt]),
  continuesItselfAtReset: true,
  resumesInPane: true,
} as const satisfies HarnessAdapter;
