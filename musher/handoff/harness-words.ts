import { pickupCommand, type HarnessWords } from '../../core/handoff/answer.js';
import type { PickupWay } from '../../core/notify/messages.js';
import { DEFAULT_HARNESS_ID } from '../../harnesses/hook-defaults.js';
import type { HarnessAdapter } from '../../harnesses/port.js';
import { harnessById, sessionHarnesses } from '../../harnesses/registry.js';

/** What the hand-off answers say of one harness, from its adapter (core/handoff/answer.ts names none). */
export function wordsOf(adapter: HarnessAdapter): HarnessWords {
  return {
    id: adapter.id,
    displayName: adapter.displayName,
    pickupFlag: adapter.binary.name,
    sledCommand: adapter.sledCommand ?? '/sled',
    resumeWords: (sessionId) => adapter.resumeWords(sessionId),
  };
}

/** The words of a harness by its stored id; an id sleds does not know is said as itself (never another's). */
export function harnessWords(id: string): HarnessWords {
  const found = harnessById(id);
  if (found.ok) return wordsOf(found.adapter);
  const unknown = (): never => {
    throw new Error(found.error);
  };
  return { id, displayName: id, pickupFlag: id, sledCommand: '/sled', resumeWords: unknown };
}

/**
 * A roster entry ("codex", "Claude Code", "codex-cli") as the harness it names, or null. Only harnesses sleds keeps
 * sessions for can pick a hand-off up (one that runs route nodes only, like Gemini CLI, has no `/sled pickup`).
 */
function adapterOfRosterEntry(entry: string): HarnessAdapter | null {
  const e = entry.toLowerCase();
  return sessionHarnesses().find((a) => [a.id, a.binary.name, a.displayName.toLowerCase()].some((w) => e.includes(w))) ?? null;
}

/**
 * Where a teammate picks a hand-off up: the one harness every entry of their roster line names; else (none listed,
 * several, or one sleds does not know) the default harness, whose slash command any of its sessions routes.
 */
export function rosterHarness(theirHarnesses: readonly string[]): HarnessWords {
  const named = theirHarnesses.map(adapterOfRosterEntry);
  const first = named[0];
  if (first && named.every((a) => a === first)) return wordsOf(first);
  return harnessWords(DEFAULT_HARNESS_ID);
}

/** How a hand-off is picked up in each harness, the default harness's way first (a message for any reader). */
export function pickupWays(handoffId: string): PickupWay[] {
  return everyHarnessWords().map((w) => ({ harness: w.displayName, command: pickupCommand(handoffId, w) }));
}

/** Every harness's words, the default first: a message that cannot know the reader's harness lists them all. */
export function everyHarnessWords(): HarnessWords[] {
  const all = sessionHarnesses().map(wordsOf);
  return [...all.filter((w) => w.id === DEFAULT_HARNESS_ID), ...all.filter((w) => w.id !== DEFAULT_HARNESS_ID)];
}
