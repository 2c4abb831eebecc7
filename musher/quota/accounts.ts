import { readFileSync, realpathSync, statSync } from 'node:fs';
import { claudeAccount, claudeConfigDirOfTranscript, claudeGlobalConfigPaths, codexAccount, codexHomeOfRollout, type Account } from '../../core/account.js';
import type { Log } from '../log.js';
import { harnessById } from '../../harnesses/registry.js';

/** A global config over this is not read for its account (it would cost the statusline its budget). */
const MAX_GLOBAL_CONFIG_BYTES = 16 * 1024 * 1024;

/**
 * Which account a session's readings belong to, from the files it names: a Claude session's config dir (from its
 * transcript path) and the account signed in there; a Codex rollout's home. musher's own config dir and Codex home
 * are the default (the usage endpoint reads those; a reading that names no file is theirs). Cached per config file,
 * re-read when its size or mtime changes (Claude Code rewrites `.claude.json` often; the account rarely changes).
 */
export class Accounts {
  private readonly cache = new Map<string, { stamp: string; account: Account }>();
  private readonly real = new Map<string, string>();

  constructor(
    private readonly o: { claudeConfigDir: string; codexHome: string; homeDir: string; log: Log },
  ) {}

  defaultClaude(): Account {
    return this.forClaudeDir(this.o.claudeConfigDir);
  }

  defaultCodex(): Account {
    return codexAccount(this.canonical(this.o.codexHome), this.o.homeDir);
  }

  /** The account of a Claude session by its transcript path (the default one when it names none). */
  forTranscript(transcriptPath: string | null | undefined): Account {
    const dir = transcriptPath ? claudeConfigDirOfTranscript(transcriptPath) : null;
    return dir ? this.forClaudeDir(dir) : this.defaultClaude();
  }

  /** The account of a Codex rollout by its path. */
  forRollout(rolloutPath: string | null | undefined): Account {
    const home = rolloutPath ? codexHomeOfRollout(rolloutPath) : null;
    return home ? codexAccount(this.canonical(home), this.o.homeDir) : this.defaultCodex();
  }

  /** A session's account from what the session store knows of it. */
  forSession(harness: string, transcriptPath: string | null): Account {
    // Whose bars: the provider's whose plan the harness spends (a rollout's home, or a Claude config dir).
    const found = harnessById(harness);
    return found.ok && found.adapter.provider === 'openai' ? this.forRollout(transcriptPath) : this.forTranscript(transcriptPath);
  }

  forClaudeDir(configDir: string): Account {
    const dir = this.canonical(configDir);
    for (const path of claudeGlobalConfigPaths(dir)) {
      let stamp: string;
      try {
        const s = statSync(path);
        if (!s.isFile()) continue;
        stamp = `${s.size}:${s.mtimeMs}`;
        if (s.size > MAX_GLOBAL_CONFIG_BYTES) return claudeAccount(dir, null, this.o.homeDir);
      } catch {
        continue; // not there: the next candidate, or the config dir itself is the account
      }
      const hit = this.cache.get(path);
      if (hit && hit.stamp === stamp) return hit.account;
      let parsed: unknown = null;
      try {
        parsed = JSON.parse(readFileSync(path, 'utf8'));
      } catch (e) {
        // Claude Code rewrites it in place: a half-written file is read again on its next change.
        this.o.log.warn(`accounts: ${path} is not readable JSON (${(e as Error).message.split('\n')[0]}) — keyed by its folder`);
      }
      const account = claudeAccount(dir, parsed, this.o.homeDir);
      this.cache.set(path, { stamp, account });
      return account;
    }
    return claudeAccount(dir, null, this.o.homeDir);
  }

  /** One spelling per folder (a symlinked CLAUDE_CONFIG_DIR, a trailing slash): the real path where it exists. */
  private canonical(dir: string): string {
    const trimmed = dir.length > 1 ? dir.replace(/\/+$/, '') : dir;
    const known = this.real.get(trimmed);
    if (known !== undefined) return known;
    try {
      const real = realpathSync(trimmed);
      this.real.set(trimmed, real);
      return real;
    } catch {
      return trimmed; // not there (yet): its own spelling, asked again next time
    }
  }
}
