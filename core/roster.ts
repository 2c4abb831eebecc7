import { z } from 'zod';
import { RawPublicKeyB64 } from './handoff/header.js';

/**
 * The team roster, `.sleds/roster.yml` in the repository: who is on the team, what each owns, how to reach them.
 * Pure: the schema, and who owns a set of changed files. `keys` are the seat's public keys for hand-offs (what
 * `sleds keys init` prints): X25519 to seal to them, Ed25519 to check what they sign.
 */
export const TeammateKeys = z.looseObject({ x25519: RawPublicKeyB64, ed25519: RawPublicKeyB64 });
export type TeammateKeys = z.infer<typeof TeammateKeys>;

export const RosterFile = z.looseObject({
  teammates: z
    .array(
      z.looseObject({
        handle: z.string().regex(/^[a-z0-9][a-z0-9._-]*$/i, 'a handle is letters, digits, dot, dash or underscore'),
        name: z.string().min(1).optional(),
        slack: z.string().optional(),
        areas: z.array(z.string().min(1)).default([]),
        harnesses: z.array(z.string()).default([]),
        /** Their GitHub login, when it differs from the handle (CODEOWNERS names people by it). */
        github: z.string().optional(),
        keys: TeammateKeys.optional(),
      }),
    )
    .default([]),
});
export type RosterFile = z.infer<typeof RosterFile>;
export type Teammate = RosterFile['teammates'][number];

/** A glob as CODEOWNERS and .gitignore write them: `**` any folders, `*` within a name, `?` one character; a
 *  trailing `/` means everything below; a pattern without a `/` matches at any depth. */
export function globToRegExp(glob: string): RegExp {
  let g = glob.trim();
  if (g.endsWith('/')) g += '**';
  const anchored = g.startsWith('/') || g.slice(0, -1).includes('/');
  g = g.replace(/^\//, '');
  let re = '';
  for (let i = 0; i < g.length; i++) {
    const c = g[i]!;
    if (c === '*' && g[i + 1] === '*') {
      re += g[i + 2] === '/' ? '(?:.*/)?' : '.*';
      i += g[i + 2] === '/' ? 2 : 1;
    } else if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else re += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${anchored ? '' : '(?:.*/)?'}${re}(?:/.*)?$`);
}

/** One CODEOWNERS rule: a pattern and the owners it names (`@login`, `@org/team` or an email). */
export interface CodeownersRule {
  pattern: RegExp;
  owners: string[];
}

/** CODEOWNERS as GitHub reads it: one rule per line, `#` comments, the last matching rule wins. */
export function parseCodeowners(text: string): CodeownersRule[] {
  const rules: CodeownersRule[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.replace(/(^|\s)#.*$/, '').trim();
    if (!line) continue;
    const [pattern, ...owners] = line.split(/\s+/);
    rules.push({ pattern: globToRegExp(pattern!), owners: owners.map((o) => o.replace(/^@/, '').toLowerCase()) });
  }
  return rules;
}

/**
 * The area's owner: the teammate (other than `self`) who owns the most changed files, by their roster globs or by
 * the CODEOWNERS rule that governs the file (its last match, naming them by handle or GitHub login). Ties go to the
 * roster's order. Null when nobody owns any.
 */
export function ownerOf(roster: RosterFile, changedFiles: readonly string[], self: string | null, codeowners: readonly CodeownersRule[] = []): Teammate | null {
  const governing = (file: string): string[] => {
    for (let i = codeowners.length - 1; i >= 0; i--) if (codeowners[i]!.pattern.test(file)) return codeowners[i]!.owners;
    return [];
  };
  let best: { who: Teammate; count: number } | null = null;
  for (const who of roster.teammates) {
    if (self !== null && who.handle.toLowerCase() === self.toLowerCase()) continue;
    const globs = who.areas.map(globToRegExp);
    const names = [who.handle.toLowerCase(), ...(who.github ? [who.github.toLowerCase()] : [])];
    const count = changedFiles.filter((f) => globs.some((g) => g.test(f)) || governing(f).some((o) => names.includes(o))).length;
    if (count > 0 && (!best || count > best.count)) best = { who, count };
  }
  return best?.who ?? null;
}

/** Who a hand-off goes to when nobody is named: the owner of the changed files, else the teammate idle longest (what
 *  musher knows of their headroom; `idleOf` null: not known, never chosen). Null: the user must name someone. */
export function recipientOf(
  roster: RosterFile,
  changedFiles: readonly string[],
  self: string | null,
  codeowners: readonly CodeownersRule[] = [],
  idleOf: (handle: string) => number | null = () => null,
): { who: Teammate; why: 'owner' | 'headroom' } | null {
  const owner = ownerOf(roster, changedFiles, self, codeowners);
  if (owner) return { who: owner, why: 'owner' };
  let best: { who: Teammate; idle: number } | null = null;
  for (const who of othersThan(roster, self)) {
    const idle = idleOf(who.handle);
    if (idle !== null && (!best || idle > best.idle)) best = { who, idle };
  }
  return best ? { who: best.who, why: 'headroom' } : null;
}

/** The roster's teammates other than `self`: the ones a hand-off can name. */
export function othersThan(roster: RosterFile, self: string | null): Teammate[] {
  return roster.teammates.filter((t) => self === null || t.handle.toLowerCase() !== self.toLowerCase());
}

/** The teammate with this handle (case-insensitive), or null. */
export function teammateByHandle(roster: RosterFile, handle: string): Teammate | null {
  return roster.teammates.find((t) => t.handle.toLowerCase() === handle.toLowerCase()) ?? null;
}
