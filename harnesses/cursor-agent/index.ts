import { isSessionId } from '../../core/session-id.js';
import { checkResumable, COMMON_HOOK_DIALECT, dottedVersion, ResumePlanError, type Env, type HarnessAdapter, type HeadlessArgs, type ResumeArgs } from '../port.js';
import { parseCursorHeadlessLine, readCursorOutput } from './headless.js';

/**
 * Cursor's agent CLI (`cursor-agent`), built from its DOCUMENTATION, not measured: it is not on npm and cannot be
 * installed here (shared/facts/cursor-agent.md; https://cursor.com/docs/cli/reference/output-format and
 * …/cli/headless). Headless: `-p --output-format stream-json`; resume: `--resume <chatId>` (a UUID). It talks only
 * to Cursor's backend (no base URL to set), so it cannot be sent to musher's gateway. Its chats live in its own
 * store under ~/.cursor (no transcript file sleds can read line by line), and its hooks (`.cursor/hooks.json`) are
 * not wired: the hook answers are the common bare ones.
 *
 * provider: 'openai', the maker of the model Cursor's agent launched with as its default (GPT-5); the plan it spends
 * is Cursor's own. A node's model is chosen apart from its harness (`--model`).
 */

function home(env: Env, homeDir: string): string {
  return `${homeDir.replace(/\/+$/, '')}/.cursor`;
}

function headlessArgv(r: HeadlessArgs): { argv: string[]; stdin: string } {
  if (r.resumeSessionId != null && !isSessionId(r.resumeSessionId)) {
    throw new ResumePlanError(`headless: ${JSON.stringify(r.resumeSessionId.slice(0, 80))} is not a chat id (a UUID) — not passing it to cursor-agent`);
  }
  // Piped stdin puts it in print mode (documented); the prompt is read from there, never argv. The id is glued.
  const resume = r.resumeSessionId != null ? [`--resume=${r.resumeSessionId}`] : [];
  return { argv: [r.bin, '-p', '--output-format', 'stream-json', ...resume, ...(r.model ? ['--model', r.model] : []), ...(r.harnessArgs ?? [])], stdin: r.prompt };
}

function resumeArgv(r: ResumeArgs): string[] {
  checkResumable(r, 'cursor-agent', isSessionId);
  const model = r.model ? ['--model', r.model] : [];
  const extra = r.harnessArgs ?? [];
  if (!r.headless) return [r.bin, `--resume=${r.sessionId}`, ...model, ...extra];
  const format = r.structured !== false ? ['--output-format', 'stream-json'] : [];
  return [r.bin, '-p', `--resume=${r.sessionId}`, ...format, ...model, ...extra, '--', r.prompt ?? ''];
}

const TRANSCRIPT_SOURCE = 'cursor-agent-chat';

export const cursorAgent = {
  id: 'cursor-agent',
  displayName: 'Cursor Agent',
  provider: 'openai',
  // Versions are dated builds ("2025.09.18-7ae6800", as community notes show it; not measured).
  binary: { name: 'cursor-agent', installs: "Cursor's agent CLI (curl https://cursor.com/install)", readVersion: dottedVersion },
  transcriptSource: TRANSCRIPT_SOURCE,
  // Its chats are in its own store, not a line-per-record file: a line handed here is not one of its own.
  transcriptReader: () => ({ read: () => ({ kind: 'ignored' as const }) }),
  signalSources: [TRANSCRIPT_SOURCE],
  // `cursor-agent status` (documented) says whether it is logged in; "Not logged in" when not.
  login: { statusArgs: ['status'], loggedOut: (output: string) => /\bnot logged in\b/i.test(output) },
  hooks: COMMON_HOOK_DIALECT,
  sessions: {
    home,
    transcriptDir: (cursorHome: string) => `${cursorHome}/chats`,
    isTranscriptOf: () => false,
    sessionIdFromPath: () => null,
    installedPath: (senderPath: string) => senderPath,
  },
  resumeArgv,
  resumeWords: (sessionId: string) => ['cursor-agent', `--resume=${sessionId}`],
  headlessArgv,
  parseHeadlessLine: parseCursorHeadlessLine,
  readHeadlessResult: readCursorOutput,
  gatewayLaunch: () => ({ ok: false, why: "Cursor's agent talks only to Cursor's backend: it has no base URL to point at the gateway" }),
  gatewayNeedsSessionProvider: false,
  resumesInPane: false,
  continuesItselfAtReset: false,
} as const satisfies HarnessAdapter;
