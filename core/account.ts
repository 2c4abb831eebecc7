/**
 * Whose plan bars a reading is. Two Claude accounts on one machine (a second config dir, another account after
 * `/login`) have separate 5-hour and weekly windows; their readings must never mix. Claude Code keeps the signed-in
 * account in its global config (`.claude.json`: `oauthAccount.accountUuid` + `organizationUuid`, the pair the binary
 * itself compares to tell two accounts apart); a session whose config names none (a token from the environment, an
 * API key) is keyed by its config dir. Pure: the caller reads the files.
 */

export interface Account {
  /** Stable key: `claude:<account uuid>/<org uuid>`, `claude-dir:<config dir>`, `codex-dir:<CODEX_HOME>`. */
  key: string;
  /** What a person recognises: the e-mail address, or the folder with `~` for the home. */
  label: string;
}

function trimSlashes(path: string): string {
  return path.length > 1 ? path.replace(/\/+$/, '') : path;
}

/** `<dir>` of a transcript at `<dir>/projects/<slug>/<session>.jsonl` (or a subagent's file deeper in it). */
export function claudeConfigDirOfTranscript(transcriptPath: string): string | null {
  // The slug has no `/`, so the last `/projects/<slug>/` is the config dir's own.
  const m = /^(.+)\/projects\/[^/]+\/[^/].*\.jsonl$/.exec(transcriptPath);
  return m ? trimSlashes(m[1]!) : null;
}

/** `$CODEX_HOME` of a rollout at `<home>/sessions/YYYY/MM/DD/rollout-….jsonl`. */
export function codexHomeOfRollout(rolloutPath: string): string | null {
  const m = /^(.+)\/sessions\/\d{4}\/\d{2}\/\d{2}\/rollout-[^/]+\.jsonl$/.exec(rolloutPath);
  return m ? trimSlashes(m[1]!) : null;
}

/**
 * Where Claude Code keeps the global config for a config dir: inside it when CLAUDE_CONFIG_DIR points there, and
 * beside it (`~/.claude.json`) for the default `~/.claude`. The first that exists wins.
 */
export function claudeGlobalConfigPaths(configDir: string): string[] {
  const dir = trimSlashes(configDir);
  const inside = `${dir}/.claude.json`;
  if (!dir.endsWith('/.claude')) return [inside];
  return [inside, `${dir.slice(0, -'/.claude'.length)}/.claude.json`];
}

function withTilde(path: string, homeDir: string): string {
  const home = trimSlashes(homeDir);
  return path === home ? '~' : path.startsWith(`${home}/`) ? `~${path.slice(home.length)}` : path;
}

function text(v: unknown): string | null {
  return typeof v === 'string' && v.trim() !== '' ? v.trim() : null;
}

/** The account a Claude config dir is signed in to, from its parsed global config (null: none readable). */
export function claudeAccount(configDir: string, globalConfig: unknown, homeDir: string): Account {
  const dir = trimSlashes(configDir);
  const oauth = globalConfig && typeof globalConfig === 'object' ? (globalConfig as Record<string, unknown>).oauthAccount : undefined;
  if (oauth && typeof oauth === 'object') {
    const o = oauth as Record<string, unknown>;
    const account = text(o.accountUuid);
    if (account) {
      const org = text(o.organizationUuid) ?? '-';
      return { key: `claude:${account}/${org}`, label: text(o.emailAddress) ?? withTilde(dir, homeDir) };
    }
  }
  return { key: `claude-dir:${dir}`, label: withTilde(dir, homeDir) };
}

/** Codex's account: its home (the rollouts' own readings carry no account id). */
export function codexAccount(codexHome: string, homeDir: string): Account {
  const dir = trimSlashes(codexHome);
  return { key: `codex-dir:${dir}`, label: withTilde(dir, homeDir) };
}
