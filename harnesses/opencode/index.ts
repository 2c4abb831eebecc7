import { COMMON_HOOK_DIALECT, dottedVersion, ResumePlanError, type Env, type HarnessAdapter, type HeadlessArgs, type ResumeArgs } from '../port.js';
import { parseOpencodeHeadlessLine, readOpencodeOutput } from './headless.js';

/**
 * OpenCode (`opencode-ai` from npm, measured on 1.18.33; /work/shared/facts/opencode.md). Headless with
 * `opencode run --format json`, the prompt on stdin; a session resumed with `--session=<ses_…>`. Its data (sessions,
 * messages, parts) live in one SQLite file, `$XDG_DATA_HOME/opencode/opencode.db`: there is no per-session
 * transcript file to follow or hand over, so the transcript slots below find nothing (say so, never guess). It has
 * no command hooks (it has JS plugins), so the hook answers are the common bare ones and nothing of it runs them.
 *
 * provider: OpenCode runs any provider's model; sleds points it at Anthropic (the provider it speaks most plainly
 * with a custom baseURL, and the one the gateway continues it on). A node's model is chosen apart from its harness:
 * `--model provider/model` in headlessArgv.
 */

/** OpenCode's session ids: `ses_` and base62 (measured: `ses_dcadb0f94ffeOsg6t1jlXobGZf`). */
export function isOpencodeSessionId(id: string): boolean {
  return /^ses_[0-9A-Za-z]{12,64}$/.test(id);
}

function checkSession(id: string, where: string): void {
  if (!isOpencodeSessionId(id)) throw new ResumePlanError(`${where}: ${JSON.stringify(id.slice(0, 80))} is not an OpenCode session id (ses_…) — not passing it to opencode`);
}

/** `$XDG_DATA_HOME/opencode` (default `~/.local/share/opencode`): where opencode.db is. */
function home(env: Env, homeDir: string): string {
  const data = env.XDG_DATA_HOME || `${homeDir.replace(/\/+$/, '')}/.local/share`;
  return `${data.replace(/\/+$/, '')}/opencode`;
}

function headlessArgv(r: HeadlessArgs): { argv: string[]; stdin: string } {
  if (r.resumeSessionId != null) checkSession(r.resumeSessionId, 'headless');
  // `run` with no message reads it from stdin (measured). The id is glued to its option: never read as one.
  const session = r.resumeSessionId != null ? [`--session=${r.resumeSessionId}`] : [];
  return { argv: [r.bin, 'run', '--format', 'json', ...session, ...(r.model ? ['--model', r.model] : []), ...(r.harnessArgs ?? [])], stdin: r.prompt };
}

function resumeArgv(r: ResumeArgs): string[] {
  checkSession(r.sessionId, 'resume');
  if (r.headless && r.prompt === null) throw new ResumePlanError('resume: a headless resume needs a prompt');
  const model = r.model ? ['--model', r.model] : [];
  const extra = r.harnessArgs ?? [];
  if (!r.headless) return [r.bin, `--session=${r.sessionId}`, ...model, ...extra];
  const structured = r.structured !== false ? ['--format', 'json'] : [];
  return [r.bin, 'run', `--session=${r.sessionId}`, ...structured, ...model, ...extra, '--', r.prompt ?? ''];
}

/** The OPENCODE_CONFIG_CONTENT that sends the anthropic provider to `baseURL`, its key read from `keyEnv` ({env:…}). */
export function anthropicProviderConfig(baseURL: string, keyEnv: string): string {
  return JSON.stringify({ provider: { anthropic: { options: { baseURL, apiKey: `{env:${keyEnv}}` } } } });
}

/** The variable the gateway token travels in: the config names it, so the token is never in the config text. */
export const OPENCODE_GATEWAY_TOKEN_ENV = 'SLEDS_GATEWAY_TOKEN';

const TRANSCRIPT_SOURCE = 'opencode-session';

export const opencode = {
  id: 'opencode',
  displayName: 'OpenCode',
  provider: 'anthropic',
  // `opencode --version` prints the bare version ("1.18.33").
  binary: { name: 'opencode', installs: 'OpenCode (npm opencode-ai)', readVersion: dottedVersion },
  transcriptSource: TRANSCRIPT_SOURCE,
  // Sessions are rows in opencode.db, not lines of a file: a line handed here is not one of OpenCode's.
  transcriptReader: () => ({ read: () => ({ kind: 'ignored' as const }) }),
  signalSources: [TRANSCRIPT_SOURCE],
  // `opencode auth list` lists stored credentials; "0 credentials" when none (exit 0). Keys from the environment
  // or a config are not stored credentials, so this is "logged out" only in OpenCode's own sense.
  login: { statusArgs: ['auth', 'list'], loggedOut: (output: string) => /(^|\s)0 credentials\b/.test(output.replace(/\u001b\[[0-9;]*m/g, '')) },
  hooks: COMMON_HOOK_DIALECT,
  sessions: {
    home,
    transcriptDir: (dataDir: string) => dataDir,
    isTranscriptOf: () => false,
    sessionIdFromPath: () => null,
    installedPath: (senderPath: string) => senderPath,
  },
  resumeArgv,
  resumeWords: (sessionId: string) => ['opencode', `--session=${sessionId}`],
  headlessArgv,
  parseHeadlessLine: parseOpencodeHeadlessLine,
  readHeadlessResult: readOpencodeOutput,
  /**
   * The anthropic provider's baseURL through OPENCODE_CONFIG_CONTENT (merged over the user's config), its apiKey
   * an `{env:…}` reference to the token's variable (sent as x-api-key, which the gateway accepts): measured on 1.18.33.
   */
  gatewayLaunch: (t) => ({
    ok: true,
    env: { OPENCODE_CONFIG_CONTENT: anthropicProviderConfig(`${t.anthropicBaseUrl}/v1`, OPENCODE_GATEWAY_TOKEN_ENV), [OPENCODE_GATEWAY_TOKEN_ENV]: t.token },
    args: [],
  }),
  gatewayNeedsSessionProvider: false,
  // No record of the process that runs a session, and nothing continues by itself at a reset.
  resumesInPane: false,
  continuesItselfAtReset: false,
} as const satisfies HarnessAdapter;
