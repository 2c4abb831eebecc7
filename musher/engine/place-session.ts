import { copyFileSync, existsSync, mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, isAbsolute, resolve } from 'node:path';
import type { HarnessAdapter } from '../../harnesses/port.js';
import type { SessionPlacer } from './ports.js';

/**
 * A wall's session, made ready to resume in an overnight job's worktree (issue 15 § 1): a harness finds a session by
 * the cwd it resumes in (Claude Code: the project folder of the cwd), so its transcript is copied to where the harness
 * looks for the worktree — the adapter says where, as it does for a pickup (musher/handoff/pickup.ts). A harness that
 * finds sessions by id alone (Codex) places nothing. A transcript already there (a second start) is left as it is: it
 * may hold the job's own turns since.
 */
export function placeSessionFor(adapter: HarnessAdapter, transcript: string | null, cwd: string, env: Record<string, string | undefined>, homeDir: string = homedir()): string | null {
  if (transcript === null) return null;
  if (!isAbsolute(transcript)) throw new Error(`its transcript path ${transcript} is not absolute`);
  if (!existsSync(transcript)) throw new Error(`its transcript ${transcript} is gone`);
  const home = adapter.sessions.home(env, homeDir);
  const to = resolve(home, adapter.sessions.installedPath(transcript, cwd));
  if (to === resolve(transcript) || existsSync(to)) return to;
  mkdirSync(dirname(to), { recursive: true, mode: 0o700 });
  copyFileSync(transcript, to);
  return to;
}

/** The engine's placer: the harness home read from the engine's environment with the run's own on top. */
export function sessionPlacer(baseEnv: NodeJS.ProcessEnv, homeDir: string = homedir()): SessionPlacer {
  return {
    place: async (adapter, transcript, cwd, env) => {
      placeSessionFor(adapter, transcript, cwd, { ...baseEnv, ...env }, homeDir);
    },
  };
}

