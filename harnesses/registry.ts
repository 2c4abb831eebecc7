import { z } from 'zod';
import { claudeCode } from './claude-code/index.js';
import { codex } from './codex/index.js';
import { geminiCli } from './gemini-cli/index.js';
import { cursorAgent } from './cursor-agent/index.js';
import { opencode } from './opencode/index.js';
import type { HarnessAdapter } from './port.js';

/**
 * Every harness sleds knows, by id: the one place that lists them. Adding a harness is one folder
 * (`harnesses/<id>/index.ts`, implementing port.ts) plus one line in BUILT_IN. An id that is not here is an
 * error to report, never taken for another harness.
 */
const BUILT_IN = [claudeCode, codex, geminiCli, opencode, cursorAgent] as const;

/** The ids stored with sessions, walls and jobs. */
export const HarnessId = z.enum([claudeCode.id, codex.id]);
export type HarnessId = z.infer<typeof HarnessId>;

const registered = new Map<string, HarnessAdapter>(BUILT_IN.map((a) => [a.id, a]));

export type HarnessLookup = { ok: true; adapter: HarnessAdapter } | { ok: false; error: string };

/** The adapter for a stored or typed harness id, or a one-line error naming the ids there are. */
export function harnessById(id: string | null | undefined): HarnessLookup {
  const adapter = id ? registered.get(id) : undefined;
  if (adapter) return { ok: true, adapter };
  const known = [...registered.keys()].join(', ');
  return { ok: false, error: id ? `unknown harness '${id.slice(0, 40)}' — sleds knows ${known}` : `no harness named — sleds knows ${known}` };
}

/** The adapter of an id already checked to be one of sleds' own (a HarnessId). */
export function builtInHarness(id: HarnessId): HarnessAdapter {
  const found = harnessById(id);
  // Only a stored row cast to HarnessId without a check gets here with another id: say so, not a TypeError later.
  if (!found.ok) throw new Error(found.error);
  return found.adapter;
}

/** The id as a HarnessId, or null when sleds does not know it (stored data from a newer or foreign sleds). */
export function knownHarnessId(id: string | null | undefined): HarnessId | null {
  const r = HarnessId.safeParse(id);
  return r.success ? r.data : null;
}

export type StoredHarness = { ok: true; id: HarnessId; adapter: HarnessAdapter } | { ok: false; error: string };

/**
 * The harness a stored row names (a session's, a wall's, a hand-off's), as one of sleds' own; else a one-line error
 * to report. Replaces the old `harnessOf()`, which took anything that was not 'codex' for Claude Code.
 */
export function storedHarness(id: string | null | undefined): StoredHarness {
  const known = knownHarnessId(id);
  if (known) return { ok: true, id: known, adapter: builtInHarness(known) };
  const found = harnessById(id);
  return { ok: false, error: found.ok ? `sleds keeps no sessions for harness '${found.adapter.id}'` : found.error };
}

/** The harness that alone produces a wall signal source ('codex-rollout' → Codex), or null. */
export function harnessOfSource(source: string): HarnessAdapter | null {
  return allHarnesses().find((a) => a.signalSources.includes(source)) ?? null;
}

/** The harness whose plan bars a provider's are ('openai' → Codex), or null: names a bar by what a person runs. */
export function harnessOfProvider(provider: string): HarnessAdapter | null {
  return allHarnesses().find((a) => a.provider === provider) ?? null;
}

export function allHarnesses(): HarnessAdapter[] {
  return [...registered.values()];
}

/**
 * The harnesses sleds keeps sessions of (its hooks run inside them: walls, the picker's dispatch, hand-offs and
 * pickups). The others (Gemini CLI, OpenCode, Cursor's agent) run route nodes headless only.
 */
export function sessionHarnesses(): HarnessAdapter[] {
  return allHarnesses().filter((a) => knownHarnessId(a.id) !== null);
}

/** Adds an adapter (a harness folder outside the built-in list: the test-only minimal adapter). Ids are unique. */
export function registerHarness(adapter: HarnessAdapter): void {
  if (registered.has(adapter.id)) throw new Error(`harness '${adapter.id}' is registered already`);
  registered.set(adapter.id, adapter);
}
