import type { Clock } from '../clock.js';
import type { Log } from '../log.js';

/** A resumed session: how to start it (argument arrays only) and where. */
export interface ResumeRequest {
  harness: 'claude-code' | 'codex';
  sessionId: string;
  cwd: string;
  model: string | null;
  prompt: string | null;
  env: Record<string, string>;
  mode: 'tmux' | 'headless';
  /** The pane to restart in place, and the tmux server it belongs to. */
  tmux: { socket: string; pane: string } | null;
}

export interface ResumeCommand {
  file: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
}

export interface ScheduledJob {
  kind: 'hold' | 'defer' | 'overnight';
  wallId: string;
  sessionId: string;
  runAtMs: number;
  payload: Record<string, unknown>;
}

/** The machinery the exits stand on: the gateway, resuming a session, and the scheduler. */
export interface ExitDeps {
  clock: Clock;
  log: Log;
  timeZone: string;
  seat: string;
  gateway: {
    /** A local token for one resumed session, and the base URL the harness should use. */
    mint(req: { seat: string; project: string | null; sessionId: string; wallId: string; ttlMs: number }): Promise<{ token: string; baseUrl: string }>;
  } | null;
  resume: {
    /** The tmux pane a live harness process of this session runs in, if any. */
    livePane(sessionId: string): { socket: string; pane: string } | null;
    plan(req: ResumeRequest): ResumeCommand;
    /** Starts the command: in its pane (returns once tmux has), or headless (returns when the run ends). */
    run(cmd: ResumeCommand, mode: 'tmux' | 'headless', label: string): Promise<{ ok: boolean; line: string }>;
  };
  scheduler: {
    schedule(job: ScheduledJob): string;
    cancelForWall(wallId: string): number;
  };
  /** Parses "+2h", "11:30am", an ISO time… in the user's zone. */
  parseWhen(text: string, nowMs: number, timeZone: string): { ok: true; atMs: number } | { ok: false; error: string };
  sessionCwd(sessionId: string): string | null;
}

/** What a session resumed by sleds is told, in Claude Code's own words for the same moment. */
export const CONTINUE_PROMPT =
  'Your usage limit has reset (sleds resumed this session). Continue the task you were working on when the limit was reached; do not repeat work that is already complete.';
