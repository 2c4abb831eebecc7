import { isSessionId } from '../../core/session-id.js';
import { checkResumable, dottedVersion, ResumePlanError, type Env, type HarnessAdapter, type HeadlessArgs, type ResumeArgs } from '../port.js';
import { parseGeminiHeadlessLine, readGeminiOutput } from './headless.js';
import { GEMINI_SESSION_SOURCE, GeminiSessionReader, isGeminiSessionFileOf } from './session-file.js';

/**
 * Gemini CLI (`@google/gemini-cli`, measured on 0.61.0; /work/shared/facts/gemini-cli.md). Headless with
 * `-p '' --output-format stream-json` (the prompt on stdin: `-p` is appended to it, so an empty `-p` adds nothing);
 * resumed by `--resume=<uuid>` from the same project folder; sessions under `~/.gemini/tmp/<project>/chats/`.
 * Hooks: Gemini reads `decision`/`reason`, `systemMessage` and `hookSpecificOutput.additionalContext` from a hook's
 * JSON; its prompt event is BeforeAgent. sleds installs no hooks into Gemini yet (there is no installer), so the
 * dialect is only what `--harness gemini-cli` answers.
 */

const json = (answer: object) => ({ stdout: JSON.stringify(answer), exitCode: 0 });

function home(env: Env, homeDir: string): string {
  // GEMINI_CLI_HOME replaces the user's home, and `.gemini` goes under it (measured: its homedir() reads it first).
  return `${(env.GEMINI_CLI_HOME || homeDir).replace(/\/+$/, '')}/.gemini`;
}

/**
 * A headless run cannot answer a confirmation, and Gemini without one leaves every tool that writes out of the
 * model's tool list (measured: write_file is "not found" in the default mode). The node runs in a worktree of its
 * own, so it runs with everything approved, and `--skip-trust` stands in for the trust dialog it cannot show.
 */
const HEADLESS_FLAGS = ['--skip-trust', '--approval-mode', 'yolo'];

/** Claude's permission modes, as Gemini's approval modes (the ones it has). */
const APPROVAL_MODE: Record<string, string> = { bypassPermissions: 'yolo', acceptEdits: 'auto_edit', plan: 'plan', default: 'default' };

function checkedId(id: string): string {
  if (!isSessionId(id)) throw new ResumePlanError(`headless: ${JSON.stringify(id.slice(0, 80))} is not a session id (a UUID) — not passing it to gemini`);
  return id;
}

function headlessArgv(r: HeadlessArgs): { argv: string[]; stdin: string } {
  const resume = r.resumeSessionId != null ? [`--resume=${checkedId(r.resumeSessionId)}`] : [];
  const model = r.model ? ['--model', r.model] : [];
  return { argv: [r.bin, '-p', '', '--output-format', 'stream-json', ...HEADLESS_FLAGS, ...resume, ...model, ...(r.harnessArgs ?? [])], stdin: r.prompt };
}

function resumeArgv(r: ResumeArgs): string[] {
  checkResumable(r, 'gemini', isSessionId);
  // Glued to its option, so the id is never read as one (yargs takes `--resume=<v>` whole).
  const resume = `--resume=${r.sessionId}`;
  const model = r.model ? ['--model', r.model] : [];
  const mode = r.permissionMode ? APPROVAL_MODE[r.permissionMode] : undefined;
  const approval = mode ? ['--approval-mode', mode] : [];
  const extra = r.harnessArgs ?? [];
  if (!r.headless) return [r.bin, resume, ...model, ...approval, ...extra];
  const structured = r.structured !== false ? ['--output-format', 'stream-json'] : [];
  // `--prompt=<text>` glued, so a prompt that starts with `-` stays the prompt.
  return [r.bin, resume, '--skip-trust', ...structured, ...model, ...approval, ...extra, `--prompt=${r.prompt ?? ''}`];
}

export const geminiCli = {
  id: 'gemini-cli',
  displayName: 'Gemini CLI',
  provider: 'google',
  // `gemini --version` prints the bare version ("0.61.0").
  binary: { name: 'gemini', installs: 'Gemini CLI (npm i -g @google/gemini-cli)', readVersion: dottedVersion },
  transcriptSource: GEMINI_SESSION_SOURCE,
  transcriptReader: () => {
    const reader = new GeminiSessionReader();
    return { read: (line: string) => reader.read(line) };
  },
  signalSources: [GEMINI_SESSION_SOURCE],
  // Gemini has no login status command; `gemini --version` runs without one. A missing login shows only when a run
  // fails with "Please set an Auth method…" (measured), which is what loggedOut recognises.
  login: { statusArgs: ['--version'], loggedOut: (output: string) => /Please set an Auth method|must specify the GEMINI_API_KEY/.test(output) },
  hooks: {
    carryOn: { stdout: '', exitCode: 0 },
    block: (reason: string) => json({ decision: 'block', reason }),
    carryOnWithNote: (note: string) => json({ systemMessage: note }),
    carryOnWithContext: (context: string, note: string | null) =>
      json({ hookSpecificOutput: { hookEventName: 'BeforeAgent', additionalContext: context }, ...(note !== null ? { systemMessage: note } : {}) }),
  },
  sessions: {
    home,
    // The project folder's name comes from `.gemini/projects.json` (not derivable from cwd alone): search all of tmp/.
    transcriptDir: (geminiHome: string) => `${geminiHome}/tmp`,
    isTranscriptOf: isGeminiSessionFileOf,
    // The file name holds 8 hex digits of the id, not the id: the id is only in the file's first line.
    sessionIdFromPath: (_path: string): string | null => null,
    // `tmp/<project>/chats/<file>`: under the receiver's project name for cwd, which Gemini makes its basename when
    // the name is free (a taken name gets a suffix, and then the picked-up file is not found by `--resume`).
    installedPath: (senderPath: string, cwd: string) => {
      const file = senderPath.slice(senderPath.lastIndexOf('/') + 1);
      const project = cwd.replace(/\/+$/, '').split('/').pop() || 'root';
      return `tmp/${project.toLowerCase()}/chats/${file}`;
    },
  },
  resumeArgv,
  resumeWords: (sessionId: string) => ['gemini', `--resume=${sessionId}`],
  headlessArgv,
  parseHeadlessLine: parseGeminiHeadlessLine,
  readHeadlessResult: readGeminiOutput,
  gatewayLaunch: () => ({
    ok: false,
    why: "musher's gateway serves the Anthropic Messages and OpenAI Responses wire formats; Gemini CLI speaks Google's generateContent, so it cannot continue through the gateway",
  }),
  gatewayNeedsSessionProvider: false,
  continuesItselfAtReset: false,
  resumesInPane: false,
} as const satisfies HarnessAdapter;
