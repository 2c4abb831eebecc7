import { execFile } from 'node:child_process';
import type { SecretStore } from '../secrets/store.js';

/**
 * Where the GitHub token comes from: the secret store (`sleds github set-token`), else `gh auth token` (the GitHub
 * CLI's login, which itself prefers GH_TOKEN and GITHUB_TOKEN). The token is never logged and never in argv.
 */

export const GITHUB_TOKEN_SECRET = 'github-token';
const GH_TIMEOUT_MS = 5_000;

export type TokenAnswer = { ok: true; token: string; source: 'secret-store' | 'gh' } | { ok: false; error: string };

export interface TokenSourceDeps {
  secrets: Pick<SecretStore, 'get'>;
  /** The `gh` to ask, looked up when asked (config.yml's binaries.gh, else gh on PATH); null: there is none. Default: `gh` by PATH. */
  ghBin?: () => string | null;
  /** The GitHub host for `gh auth token --hostname` (GitHub Enterprise); null for github.com. */
  ghHostname?: string | null;
}

export const NO_TOKEN_LINE = "no GitHub token — run 'sleds github set-token' (reads it from stdin) or 'gh auth login'";

/** `gh auth token`: the token on stdout and a newline; exit 1 with "no oauth token found…" when logged out. */
function ghToken(bin: string, hostname: string | null): Promise<string | null> {
  const args = ['auth', 'token', ...(hostname ? ['--hostname', hostname] : [])];
  return new Promise((resolve) => {
    execFile(bin, args, { timeout: GH_TIMEOUT_MS, windowsHide: true }, (err, stdout) => {
      if (err) return resolve(null);
      const token = String(stdout).trim();
      resolve(token && !/\s/.test(token) ? token : null);
    });
  });
}

export function githubTokenSource(deps: TokenSourceDeps): () => Promise<TokenAnswer> {
  const ghBin = deps.ghBin ?? (() => 'gh');
  return async () => {
    let stored: string | null;
    try {
      stored = (await deps.secrets.get(GITHUB_TOKEN_SECRET))?.trim() || null;
    } catch (e) {
      return { ok: false, error: `could not read the GitHub token — ${(e as Error).message}` };
    }
    if (stored) return { ok: true, token: stored, source: 'secret-store' };
    const bin = ghBin();
    const fromGh = bin ? await ghToken(bin, deps.ghHostname ?? null) : null;
    return fromGh ? { ok: true, token: fromGh, source: 'gh' } : { ok: false, error: NO_TOKEN_LINE };
  };
}
