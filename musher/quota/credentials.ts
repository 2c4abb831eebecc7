import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { z } from 'zod';

/**
 * Claude Code's OAuth login, read-only: `<config dir>/.credentials.json` → `claudeAiOauth.accessToken`, or on macOS the
 * keychain item `Claude Code-credentials` (read with `security`). sleds never refreshes the token (refresh tokens
 * rotate: using one would sign Claude Code out) and never writes, logs or returns it anywhere but the request header.
 */

export type CredentialsFailure = 'missing' | 'unreadable' | 'malformed' | 'no-token' | 'expired';

export type ClaudeCredentials =
  | {
      ok: true;
      token: string;
      /** First 12 hex digits of sha256(token): names the login in state and logs without revealing it. */
      fingerprint: string;
      /** Epoch ms, or null when the store does not say. */
      expiresAt: number | null;
      source: 'file' | 'keychain';
      /** The file path or keychain service it came from (no secret). */
      where: string;
      subscriptionType: string | null;
    }
  | {
      ok: false;
      reason: CredentialsFailure;
      /** One line for `sleds doctor` and the log: what is wrong and what to do. Never contains the token. */
      message: string;
      where: string;
      /** Set for `expired`: lets a poller tell a new token from the same stale one. */
      fingerprint: string | null;
    };

export const KEYCHAIN_SERVICE = 'Claude Code-credentials';

export function fingerprint(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex').slice(0, 12);
}

const CredentialsFile = z.looseObject({
  claudeAiOauth: z
    .looseObject({
      accessToken: z.string().nullish(),
      expiresAt: z.union([z.number(), z.string()]).nullish(),
      subscriptionType: z.string().nullish(),
    })
    .nullish(),
});

function expiresAtMs(v: number | string | null | undefined): number | null {
  if (v === null || v === undefined) return null;
  const n = typeof v === 'number' ? v : /^\d+$/.test(v.trim()) ? Number(v) : Date.parse(v);
  if (!Number.isFinite(n) || n <= 0) return null;
  return n < 1e12 ? n * 1000 : n; // seconds in some stores, ms in Claude Code's
}

/** Pure: the text of a credentials store → credentials or a reason. `nowMs` decides expiry. */
export function parseCredentials(text: string, where: string, source: 'file' | 'keychain', nowMs: number): ClaudeCredentials {
  const fail = (reason: CredentialsFailure, message: string, fp: string | null = null): ClaudeCredentials => ({
    ok: false,
    reason,
    message,
    where,
    fingerprint: fp,
  });
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    // JSON.parse's message quotes the text: never pass it on.
    return fail('malformed', `${where} is not valid JSON — sign in again with \`claude\` (/login)`);
  }
  const parsed = CredentialsFile.safeParse(json);
  if (!parsed.success) return fail('malformed', `${where} does not look like Claude Code credentials — sign in again with \`claude\` (/login)`);
  const oauth = parsed.data.claudeAiOauth;
  const token = oauth?.accessToken?.trim();
  if (!token) {
    return fail('no-token', `${where} holds no claudeAiOauth.accessToken (an API-key login?) — per-model weekly bars and credits need a claude.ai login`);
  }
  const fp = fingerprint(token);
  const expiresAt = expiresAtMs(oauth?.expiresAt);
  if (expiresAt !== null && expiresAt <= nowMs) {
    return fail('expired', `the Claude OAuth token in ${where} expired at ${new Date(expiresAt).toISOString()} — run \`claude\` once to refresh it`, fp);
  }
  return { ok: true, token, fingerprint: fp, expiresAt, source, where, subscriptionType: oauth?.subscriptionType ?? null };
}

/** Run `security` with an argument array; resolves stdout, rejects with the exit code. */
export type RunSecurity = (args: string[]) => Promise<string>;

const runSecurity: RunSecurity = (args) =>
  new Promise((resolve, reject) => {
    execFile('security', args, { timeout: 5_000, maxBuffer: 1 << 20, windowsHide: true }, (err, stdout) => {
      if (err) reject(err);
      else resolve(String(stdout));
    });
  });

/**
 * The keychain services to try, most specific first. With CLAUDE_CONFIG_DIR set, Claude Code suffixes the service
 * with the first 8 hex of sha256(NFC(config dir)) (claude-code-router, verified against Claude Code 2.1.220).
 */
export function keychainServices(configDir: string, configDirFromEnv: boolean): string[] {
  if (!configDirFromEnv) return [KEYCHAIN_SERVICE];
  const suffix = createHash('sha256').update(configDir.normalize('NFC'), 'utf8').digest('hex').slice(0, 8);
  return [`${KEYCHAIN_SERVICE}-${suffix}`, KEYCHAIN_SERVICE];
}

export interface CredentialsSource {
  /** `claudeConfigDir(env, home)` from core/paths. */
  claudeConfigDir: string;
  /** Whether CLAUDE_CONFIG_DIR was set (it changes the keychain service name). */
  configDirFromEnv?: boolean;
  now: () => number;
  platform?: NodeJS.Platform;
  /** Injected for tests; defaults to fs.readFile(utf8). */
  readText?: (path: string) => Promise<string>;
  /** Injected for tests; defaults to execFile('security', args). */
  security?: RunSecurity;
}

async function fromFile(src: CredentialsSource): Promise<ClaudeCredentials> {
  const where = `${src.claudeConfigDir.replace(/\/+$/, '')}/.credentials.json`;
  let text: string;
  try {
    text = await (src.readText ?? ((p: string) => readFile(p, 'utf8')))(where);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? 'error';
    if (code === 'ENOENT' || code === 'ENOTDIR') {
      return {
        ok: false,
        reason: 'missing',
        message: `no Claude OAuth credentials at ${where} — sign in with \`claude\` (/login); an API-key seat has no per-model weekly bars or credits`,
        where,
        fingerprint: null,
      };
    }
    return { ok: false, reason: 'unreadable', message: `cannot read ${where} (${code}) — check its owner and permissions`, where, fingerprint: null };
  }
  return parseCredentials(text, where, 'file', src.now());
}

/** Reads the login: keychain first on macOS (where Claude Code keeps it), then the credentials file. Never throws. */
export async function readClaudeCredentials(src: CredentialsSource): Promise<ClaudeCredentials> {
  const platform = src.platform ?? process.platform;
  let keychainFailure: ClaudeCredentials | null = null;
  if (platform === 'darwin') {
    const security = src.security ?? runSecurity;
    for (const service of keychainServices(src.claudeConfigDir, src.configDirFromEnv ?? false)) {
      let secret: string;
      try {
        secret = (await security(['find-generic-password', '-s', service, '-w'])).trim();
      } catch {
        continue; // not found (exit 44), locked or denied: try the next place
      }
      if (!secret) continue;
      const found = parseCredentials(secret, `keychain item "${service}"`, 'keychain', src.now());
      if (found.ok) return found;
      keychainFailure ??= found;
    }
  }
  const file = await fromFile(src);
  if (file.ok) return file;
  // A keychain item that exists but is expired or odd says more than a missing file.
  if (keychainFailure && file.reason === 'missing') return keychainFailure;
  return file;
}

/** One line for `sleds doctor` when musher is not there to ask: where the login is, or what is wrong with it. */
export function describeCredentials(c: ClaudeCredentials, nowMs: number): string {
  if (!c.ok) return `claude login: ${c.message}`;
  const expires = c.expiresAt === null ? '' : `, expires in ${Math.max(0, Math.round((c.expiresAt - nowMs) / 60_000))} min`;
  return `claude login: ok (${c.source === 'keychain' ? c.where : 'credentials file'}, token ${c.fingerprint}${expires})`;
}
