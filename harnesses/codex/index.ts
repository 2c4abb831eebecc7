import { isSessionId } from '../../core/session-id.js';
import { checkResumable, dottedVersion, ResumePlanError, type Env, type HarnessAdapter, type HeadlessArgs, type ResumeArgs, type TranscriptLine } from '../port.js';
import { CODEX_GATEWAY_PROVIDER, CODEX_GATEWAY_TOKEN_ENV, codexGatewayArgs, codexOwnProviderArgs } from './gateway.js';
import { parseCodexHeadlessLine, readCodexOutput } from './headless.js';
import { CODEX_ROLLOUT_SOURCE, CodexRolloutReader, isRolloutFileName, threadIdFromRolloutPath, type ParsedRolloutLine } from './rollout.js';

/**
 * Codex CLI (measured on 0.169.0; /work/shared/facts/codex-cli.md). Hooks: Claude-Code-compatible JSON, but
 * validated strictly: a field Codex does not know fails the hook (§1), so it gets bare answers. Rollouts under
 * `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<localtime>-<thread>.jsonl` (§5); headless with `exec --json`; the
 * gateway through `-c` overrides of the thread's own provider (a thread sleds starts there: a provider of its own,
 * `sleds`) and a token in SLEDS_GATEWAY_TOKEN.
 */

const json = (answer: object) => ({ stdout: JSON.stringify(answer), exitCode: 0 });

function home(env: Env, homeDir: string): string {
  return (env.CODEX_HOME || `${homeDir.replace(/\/+$/, '')}/.codex`).replace(/\/+$/, '');
}

function resumeArgv(r: ResumeArgs): string[] {
  checkResumable(r, 'codex', isSessionId);
  const structured = r.headless && r.structured !== false;
  const model = r.model ? ['--model', r.model] : [];
  const extra = r.harnessArgs ?? [];
  const prompt = r.prompt !== null ? [r.prompt] : [];
  // The id is positional, so it goes after the `--` with the prompt: never where an option could be read.
  if (r.headless) return [r.bin, 'exec', 'resume', '--skip-git-repo-check', ...(structured ? ['--json'] : []), ...model, ...extra, '--', r.sessionId, ...prompt];
  return [r.bin, 'resume', ...model, ...extra, '--', r.sessionId, ...prompt];
}

/** The sleds MCP server for one run, as `-c` overrides of `[mcp_servers.sleds]`, its tools approved (`exec` cannot ask). */
function sledsMcpArgs(mcp: HeadlessArgs['sledsMcp']): string[] {
  if (!mcp) return [];
  const toml = (v: string) => JSON.stringify(v);
  return [
    '-c',
    `mcp_servers.sleds.command=${toml(mcp.command)}`,
    '-c',
    `mcp_servers.sleds.args=[${mcp.args.map(toml).join(',')}]`,
    '-c',
    'mcp_servers.sleds.default_tools_approval_mode="approve"',
    ...(mcp.env && Object.keys(mcp.env).length > 0 ? ['-c', `mcp_servers.sleds.env={${Object.entries(mcp.env).map(([k, v]) => `${k}=${toml(v)}`).join(',')}}`] : []),
  ];
}

function headlessArgv(r: HeadlessArgs): { argv: string[]; stdin: string } {
  // Unattended: `exec` never asks (approval never, shared/facts/codex-cli.md); the sandbox lets it write its cwd. As a
  // `-c` override because `exec resume` (0.169) takes no `--sandbox`.
  const opts = ['--json', '--skip-git-repo-check', ...(r.model ? ['--model', r.model] : []), ...(r.unattended ? ['-c', 'sandbox_mode="workspace-write"'] : []), ...sledsMcpArgs(r.sledsMcp), ...(r.harnessArgs ?? [])];
  if (r.resumeSessionId == null) return { argv: [r.bin, 'exec', ...opts], stdin: r.prompt };
  if (!isSessionId(r.resumeSessionId)) {
    throw new ResumePlanError(`headless: ${JSON.stringify(r.resumeSessionId.slice(0, 80))} is not a session id (a UUID) — not passing it to codex`);
  }
  // `-` as the prompt: read it from stdin (a bare `codex exec` prints "Reading prompt from stdin...").
  return { argv: [r.bin, 'exec', 'resume', ...opts, '--', r.resumeSessionId, '-'], stdin: r.prompt };
}

/** A rollout line in the shared view (the reader keeps what earlier lines said: the thread, a fork's replay). */
function sharedView(p: ParsedRolloutLine): TranscriptLine {
  switch (p.kind) {
    case 'usage':
      return { kind: 'usage', usage: p.usage };
    case 'bars':
      return { kind: 'limits' };
    case 'wall':
      return { kind: 'wall', wall: p.wall };
    case 'session':
      return { kind: 'session', sessionId: p.sessionId, cwd: p.cwd };
    default:
      return p;
  }
}

export const codex = {
  id: 'codex',
  displayName: 'Codex',
  provider: 'openai',
  binary: { name: 'codex', installs: 'Codex CLI', readVersion: dottedVersion },
  transcriptSource: CODEX_ROLLOUT_SOURCE,
  transcriptReader: (filePath: string) => {
    const reader = new CodexRolloutReader(filePath);
    return { read: (line: string) => sharedView(reader.read(line)) };
  },
  signalSources: [CODEX_ROLLOUT_SOURCE],
  // `codex login status` prints "Not logged in" and exits 1 (measured).
  login: { statusArgs: ['login', 'status'], loggedOut: (output: string) => /^Not logged in\b/m.test(output), hint: "run 'codex login'" },
  hooks: {
    carryOn: { stdout: '', exitCode: 0 },
    block: (reason: string) => json({ decision: 'block', reason }),
    // Codex rejects fields it does not know (systemMessage on a prompt that goes on): the prompt just goes on.
    carryOnWithNote: () => ({ stdout: '', exitCode: 0 }),
    carryOnWithContext: (context: string) => json({ hookSpecificOutput: { hookEventName: 'UserPromptSubmit', additionalContext: context } }),
  },
  sessions: {
    home,
    transcriptDir: (codexHome: string) => `${codexHome}/sessions`,
    isTranscriptOf: (fileName: string, sessionId: string) => isRolloutFileName(fileName) && threadIdFromRolloutPath(fileName) === sessionId,
    sessionIdFromPath: threadIdFromRolloutPath,
    // `sessions/YYYY/MM/DD/rollout-….jsonl` works under any CODEX_HOME, from any cwd (facts §5, measured).
    installedPath: (senderPath: string) => senderPath,
  },
  resumeArgv,
  resumeWords: (sessionId: string) => ['codex', 'resume', '--', sessionId],
  headlessArgv,
  parseHeadlessLine: parseCodexHeadlessLine,
  readHeadlessResult: readCodexOutput,
  gatewayLaunch: (t) => {
    // A thread sleds starts itself gets sleds' own provider, which its resumes name again; another keeps its own.
    const provider = t.sessionProvider ?? (t.ownSessions ? CODEX_GATEWAY_PROVIDER : null);
    if (!provider) return { ok: false, why: "the session's rollout does not say which provider it runs on" };
    if (provider === 'openai') return { ok: false, why: "Codex will not resume a thread signed in with ChatGPT under another provider (0.169 refuses to change a thread's provider)" };
    const slow = t.slow === true;
    const args = provider === CODEX_GATEWAY_PROVIDER ? codexOwnProviderArgs(t.openaiBaseUrl, slow) : codexGatewayArgs(provider, t.openaiBaseUrl, slow);
    if (!args) return { ok: false, why: `the thread's provider '${provider}' cannot be pointed at the gateway` };
    return { ok: true, env: { [CODEX_GATEWAY_TOKEN_ENV]: t.token }, args };
  },
  gatewayNeedsSessionProvider: true,
  // The TUI answers any unknown `/word` itself, before hooks run: a sled verb is typed without the slash.
  sledCommand: 'sled',
  // A picked-up worktree may be one Codex has not trusted yet: exec would refuse it without the flag.
  startWithPrompt: (prompt: string, headless: boolean) => (headless ? ['exec', '--skip-git-repo-check', '--', prompt] : ['--', prompt]),
  continuesItselfAtReset: false,
  resumesInPane: false,
} as const satisfies HarnessAdapter;
