import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { othersThan, parseCodeowners, recipientOf, RosterFile, type CodeownersRule } from '../../core/roster.js';
import type { Log } from '../log.js';
import { findRepoRoot } from '../policy/repo-root.js';
import { parseYamlFile } from '../policy/yaml-file.js';
import { gitText } from '../snapshot/run-git.js';

export interface AreaOwner {
  handle: string;
  name: string;
  /** How long they have been idle, when something tells us (a team hub later); null: not known. */
  idleMs: number | null;
  /** Chosen as the owner of the changed files, or (nobody owning them) as the teammate with the most headroom. */
  why: 'owner' | 'headroom';
}

/**
 * Reads `.sleds/roster.yml` of a session's repository and names who owns what the session changed. A broken file
 * is one log line naming its line (once per change) and no owner, never a failed wall.
 */
export class RosterReader {
  private readonly reported = new Map<string, string>();
  constructor(private readonly log: Log) {}

  async ownerFor(cwd: string | null, self: string): Promise<AreaOwner | null> {
    const root = cwd ? findRepoRoot(cwd) : null;
    if (!root) return null;
    const roster = this.read(join(root, '.sleds', 'roster.yml'));
    if (!roster || roster.teammates.length === 0) return null;
    const tracked = (await gitText(['diff', '--name-only', 'HEAD'], root)) ?? '';
    const untracked = (await gitText(['ls-files', '--others', '--exclude-standard'], root)) ?? '';
    const files = `${tracked}\n${untracked}`.split('\n').filter((f) => f !== '');
    // Nothing on this machine knows a teammate's idle time yet (a team hub would): headroom never decides today.
    const chosen = recipientOf(roster, files, self, this.codeowners(root), () => null);
    return chosen ? { handle: chosen.who.handle, name: chosen.who.name ?? chosen.who.handle, idleMs: null, why: chosen.why } : null;
  }

  /** Every teammate of the roster of `cwd`'s repository but `self`: the ones a hand-off can name. */
  teammatesAt(cwd: string | null, self: string): Array<{ handle: string; name: string }> {
    const roster = cwd ? this.rosterAt(cwd) : null;
    return roster ? othersThan(roster, self).map((t) => ({ handle: t.handle, name: t.name ?? t.handle })) : [];
  }

  /** The repository's CODEOWNERS, where GitHub looks for it (first found); none is no rules. */
  private codeowners(root: string): CodeownersRule[] {
    for (const place of ['.github/CODEOWNERS', 'CODEOWNERS', 'docs/CODEOWNERS']) {
      try {
        return parseCodeowners(readFileSync(join(root, place), 'utf8'));
      } catch {
        // not there
      }
    }
    return [];
  }

  /** The roster of the repository `cwd` is in; null when it has none or it is broken (logged). */
  rosterAt(cwd: string): RosterFile | null {
    const root = findRepoRoot(cwd);
    return root ? this.read(join(root, '.sleds', 'roster.yml')) : null;
  }

  private read(path: string): RosterFile | null {
    let text: string;
    try {
      if (!statSync(path).isFile()) return null;
      text = readFileSync(path, 'utf8');
    } catch {
      // No roster file there: no roster.
      return null;
    }
    const yaml = parseYamlFile(text);
    let problem: string | null = null;
    let roster: RosterFile | null = null;
    if (yaml.errors.length > 0) problem = `${path}:${yaml.errors[0]!.line ?? '?'}: ${yaml.errors[0]!.message}`;
    else {
      const parsed = RosterFile.safeParse(yaml.data);
      if (parsed.success) roster = parsed.data;
      else {
        const issue = parsed.error.issues[0]!;
        problem = `${path}:${yaml.lineOf(issue.path as Array<string | number>) ?? '?'}: ${issue.path.join('.')}: ${issue.message}`;
      }
    }
    if (problem && this.reported.get(path) !== problem) this.log.error(`roster: ${problem} — no hand-off owner until it is fixed`);
    this.reported.set(path, problem ?? '');
    return roster;
  }
}
