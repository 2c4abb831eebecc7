import { homedir } from 'node:os';
import { createInterface } from 'node:readline/promises';
import { refusal, type KeyFingerprints } from '../core/handoff/errors.js';
import { HandleSchema, sameHandle } from '../core/handoff/header.js';
import { trustStandings, type PinnedKeys, type TrustStanding } from '../core/handoff/trust.js';
import { formatClock } from '../core/format.js';
import { resolvePaths } from '../core/paths.js';
import type { RosterFile } from '../core/roster.js';
import { systemClock } from '../musher/clock.js';
import { keyFingerprint } from '../musher/handoff/keys.js';
import { TrustStore, trustFilePath } from '../musher/handoff/trust-store.js';
import type { Log } from '../musher/log.js';
import { findRepoRoot } from '../musher/policy/repo-root.js';
import { RosterReader } from '../musher/roster/reader.js';
import { fail } from './fail.js';

/**
 * `sleds keys trust <handle> [--yes]`, `sleds keys trusted`, `sleds keys untrust <handle>`: the teammates' keys this
 * seat pins, so a roster a branch changed cannot make someone else's key theirs. `trust` reads the roster of the
 * repository it runs in, shows the fingerprints, asks on a terminal, and pins. No musher needed: the pin file is
 * the seat's own, and musher reads it afresh on every hand-off.
 */

interface Out {
  json: boolean;
}

function emit(out: Out, value: unknown, text: string): number {
  process.stdout.write(out.json ? `${JSON.stringify(value, null, 2)}\n` : text);
  return 0;
}

function fingerprints(keys: { x25519: string; ed25519: string }): KeyFingerprints {
  return { x25519: keyFingerprint(keys.x25519), ed25519: keyFingerprint(keys.ed25519) };
}

function store(): TrustStore {
  return new TrustStore(trustFilePath(resolvePaths(process.env, homedir())), systemClock);
}

const who = (handle: string, name: string | null) => (name && name !== handle ? `${handle} (${name})` : handle);

/** The roster of the repository here, or the one line saying why there is none. */
function rosterHere(): { roster: RosterFile } | { error: string } {
  const root = findRepoRoot(process.cwd());
  if (!root) return { error: `this is not a git checkout — run 'sleds keys trust' in a checkout of the repository whose .sleds/roster.yml names your teammate` };
  let problem: string | null = null;
  const log: Log = { info: () => undefined, warn: () => undefined, error: (m) => (problem = m) };
  const roster = new RosterReader(log).rosterAt(root);
  if (roster) return { roster };
  return { error: problem ?? `${root} has no .sleds/roster.yml — pull the roster your team committed, then run this again` };
}

async function ask(question: string, out: Out): Promise<boolean> {
  // With --json the answer on stdout stays JSON: the question goes to stderr.
  const rl = createInterface({ input: process.stdin, output: out.json ? process.stderr : process.stdout });
  try {
    return /^y(es)?$/i.test((await rl.question(question)).trim());
  } finally {
    rl.close();
  }
}

function pinView(p: PinnedKeys) {
  return { handle: p.handle, name: p.name, x25519: p.x25519, ed25519: p.ed25519, fingerprints: fingerprints(p), pinnedAt: p.pinnedAt };
}

function shownLines(s: Extract<TrustStanding, { kind: 'unpinned' | 'changed' }>): string {
  if (s.kind === 'unpinned') {
    const f = s.fingerprints;
    return `${who(s.handle, s.name)} in .sleds/roster.yml, not pinned on this seat yet:\n  x25519  ${f.x25519}\n  ed25519 ${f.ed25519}\nCompare these with ${s.handle} out of band (they run 'sleds keys show').\n`;
  }
  const line = (t: 'x25519' | 'ed25519') => (s.pinned[t] === s.roster[t] ? `${s.roster[t]} (unchanged)` : `pinned ${s.pinned[t]} → roster ${s.roster[t]}`);
  return `${who(s.handle, s.name)}: the keys in .sleds/roster.yml are not the ones pinned on this seat:\n  x25519  ${line('x25519')}\n  ed25519 ${line('ed25519')}\nConfirm the new keys with ${s.handle} out of band (they run 'sleds keys show') before you trust them.\n`;
}

/** The line for a trust that cannot be asked: no terminal and no --yes. */
function cannotAskLine(s: Extract<TrustStanding, { kind: 'unpinned' | 'changed' }>): string {
  if (s.kind === 'changed') {
    const changed = s.differences.map((d) => `${d.type} pinned ${d.expected} → roster ${d.roster}`).join('; ');
    return `'${s.handle}' has other keys in .sleds/roster.yml than the ones pinned on this seat (${changed}) and there is no terminal to ask on — confirm the new keys with ${s.handle} out of band, then run 'sleds keys trust ${s.handle} --yes' to pin them`;
  }
  return `'${s.handle}' is not pinned and there is no terminal to ask on — compare the fingerprints (x25519 ${s.fingerprints.x25519}, ed25519 ${s.fingerprints.ed25519}) with ${s.handle} out of band, then run 'sleds keys trust ${s.handle} --yes' to pin them`;
}

async function trust(args: string[], out: Out, self: string | null): Promise<number> {
  const handleArg = args.find((a) => !a.startsWith('--'));
  if (!handleArg) return fail('whose keys? sleds keys trust <handle> (a handle in .sleds/roster.yml)', 2);
  if (!HandleSchema.safeParse(handleArg).success) return fail(`'${handleArg}' is not a handle — letters, digits, '.', '_' or '-'`, 2);
  const handle = handleArg.toLowerCase();
  if (self && sameHandle(self, handle)) return fail(`'${handle}' is this seat — your own keys are checked against this seat's, not pinned; 'sleds keys show' prints them`);
  const here = rosterHere();
  if ('error' in here) return fail(here.error);
  const pins = store();
  let current: PinnedKeys[];
  try {
    current = pins.load();
  } catch (e) {
    return fail((e as Error).message);
  }
  const s = trustStandings(here.roster, current, null, keyFingerprint).find((x) => x.handle === handle);
  if (!s) return fail(`'${handle}' is not in .sleds/roster.yml here — pull the latest roster, or check the handle`);
  if (s.kind === 'no-keys') return fail(`${handle} has no keys in .sleds/roster.yml — they run 'sleds keys init' and commit the entry it prints`);
  if (s.kind === 'ambiguous') return fail(refusal.ambiguousRoster(handle).message);
  if (s.kind === 'pinned') {
    const pin = current.find((p) => p.handle === handle)!;
    const f = fingerprints(pin);
    return emit(out, { handle, name: s.name, pinned: pinView(pin), previous: null, changed: false, alreadyPinned: true, file: pins.path }, `${who(handle, s.name)} is already pinned with the roster's keys (x25519 ${f.x25519}, ed25519 ${f.ed25519}).\n`);
  }
  if (s.kind !== 'unpinned' && s.kind !== 'changed') return fail(`'${handle}' cannot be pinned`);

  if (!args.includes('--yes')) {
    if (!process.stdin.isTTY) return fail(cannotAskLine(s));
    (out.json ? process.stderr : process.stdout).write(shownLines(s));
    if (!(await ask('Trust these keys? [y/N] ', out))) return fail(`nothing pinned — ${handle}'s keys are not trusted on this seat`);
  } else if (!out.json) process.stdout.write(shownLines(s));

  let outcome;
  try {
    outcome = pins.pin({ handle, name: s.name, x25519: s.keys.x25519, ed25519: s.keys.ed25519 });
  } catch (e) {
    return fail((e as Error).message);
  }
  const now = fingerprints(outcome.pinned);
  const before = outcome.previous ? fingerprints(outcome.previous) : null;
  const text = before
    ? `Pinned ${handle}'s new keys: x25519 ${before.x25519} → ${now.x25519}, ed25519 ${before.ed25519} → ${now.ed25519}.\n`
    : `Pinned ${handle}'s keys (x25519 ${now.x25519}, ed25519 ${now.ed25519}).\n`;
  return emit(
    out,
    { handle, name: s.name, pinned: pinView(outcome.pinned), previous: outcome.previous ? pinView(outcome.previous) : null, changed: before !== null, alreadyPinned: false, file: pins.path },
    text,
  );
}

function trusted(out: Out): number {
  const pins = store();
  let list: PinnedKeys[];
  try {
    list = pins.list();
  } catch (e) {
    return fail((e as Error).message);
  }
  if (out.json) return emit(out, { file: pins.path, pins: list.map(pinView) }, '');
  if (list.length === 0) return emit(out, null, `No teammate's keys are pinned yet — 'sleds keys trust <handle>' in a checkout pins them from its roster.\n`);
  const rows = list.map((p) => {
    const f = fingerprints(p);
    const day = new Date(p.pinnedAt).toLocaleDateString('en-US', { month: 'short', day: 'numeric', year: 'numeric' });
    return `${who(p.handle, p.name)}\n  x25519  ${f.x25519}\n  ed25519 ${f.ed25519}\n  pinned ${day} ${formatClock(p.pinnedAt)}\n`;
  });
  return emit(out, null, `Pinned keys (${pins.path}):\n${rows.join('')}`);
}

function untrust(args: string[], out: Out): number {
  const handle = args.find((a) => !a.startsWith('--'));
  if (!handle) return fail('whose keys? sleds keys untrust <handle>', 2);
  const pins = store();
  let removed: PinnedKeys | null;
  try {
    removed = pins.unpin(handle);
  } catch (e) {
    return fail((e as Error).message);
  }
  if (!removed) return fail(`'${handle.toLowerCase()}' is not pinned — 'sleds keys trusted' lists the pins`);
  const f = fingerprints(removed);
  return emit(
    out,
    { removed: pinView(removed), file: pins.path },
    `Unpinned ${removed.handle} (x25519 ${f.x25519}, ed25519 ${f.ed25519}); a hand-off from ${removed.handle} is refused until 'sleds keys trust ${removed.handle}' pins them again.\n`,
  );
}

export async function runKeysTrust(sub: 'trust' | 'trusted' | 'untrust', args: string[], json: boolean, self: string | null): Promise<number> {
  const out = { json };
  switch (sub) {
    case 'trust':
      return trust(args, out, self);
    case 'trusted':
      return trusted(out);
    case 'untrust':
      return untrust(args, out);
  }
}
