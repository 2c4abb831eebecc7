import type { ExitKind } from '../../core/exits/types.js';
import type { ExitOutcome } from '../../core/exits/outcome.js';
import type { PolicyContext } from '../../core/policy/evaluate.js';
import type { EnginePolicy, TrackerPolicy } from '../../core/policy/schema.js';
import type { WallRow } from '../store/wall-book.js';

/**
 * What the wall keeper needs from the rest of musher, as narrow ports: the policy, the platform key, the snapshot,
 * and the exits' machinery. main.ts wires the real ones; tests can wire their own.
 */

export interface PolicyView {
  cheaperModel(model: string): string | null;
  overnightWindow(nowMs: number, timeZone: string): { startMs: number; endMs: number } | null;
  /** An overnight job's cap unless it says (`overnight.cap`, micro-dollars) and how many run at once; null: no window. */
  overnightLimits?: { capMicros: number; concurrency: number } | null;
  /** The overnight window's own zone (`overnight.time_zone`); null: musher's. */
  overnightZone?: string | null;
  /** The morning digest (`overnight.digest`): its time of day in the window's zone and its Slack channel; null: none. */
  overnightDigest?: { at: string; minute: number; channel: string } | null;
  /** The ladder's overnight on-call and how long an escalation holds its job (issue 15 § 5); null: no window. */
  overnightLadder?: { onCall: string | null; escalateAfterMs: number } | null;
  allowance(seat: string): { perDayMicros: number | null; perWeekMicros: number | null };
  /** The policy's choice at the wall and the evaluation to keep (read back by `sleds policy explain`). */
  decide(input: PolicyInput): { choice: ExitKind | 'ask'; rule: string | null; record: unknown };
  /** The statusline turns amber from this percent. */
  amberAt: number;
  /** The worth levels, highest first (`/sled worth <level>`). */
  worthLevels: string[];
  /** The shared folder hand-offs travel through instead of the remote (`handoff.folder`), `~` expanded; null: the remote. */
  handoffFolder: string | null;
  /** Untracked files that look like secrets but the policy lets travel in a snapshot (`handoff.allow_untracked` globs). */
  handoffAllowUntracked: string[];
  /** What a finished task of each level is worth, micro-dollars (`worth_values`): the picker's gate. */
  worthValues: Record<string, number>;
  /** Where tracker intake looks (`tracker:`). */
  tracker: TrackerPolicy;
  /** How `sleds engine` runs route nodes here (`engine:`). */
  engine: EnginePolicy;
  /** Where the policy came from and any errors in it, for the audit log. */
  sources: string[];
  errors: string[];
}

/** What the policy is asked at a wall: exactly the pure evaluator's context. */
export type PolicyInput = PolicyContext;

export interface PolicyPort {
  forDirectory(cwd: string | null): PolicyView;
  explain(record: unknown): string;
}

export interface KeyPort {
  /** Whether a platform key is configured for the harness's provider. */
  configured(provider: 'anthropic' | 'openai'): Promise<boolean>;
  /** What is left of the seat's allowance today and this week (null where uncapped). */
  allowanceLeft(seat: string, allowance: { perDayMicros: number | null; perWeekMicros: number | null }, nowMs: number): { dayMicros: number | null; weekMicros: number | null };
}

export interface SnapshotPort {
  take(wall: WallRow, session: { cwd: string | null; transcriptPath: string | null; model: string | null; version: string | null }): Promise<{ id: string | null; note: string | null }>;
}

/**
 * What taking an exit did: the typed outcome when it was taken, else why not (one line). `after` runs once the hook
 * has answered (a pane restart kills the asker).
 */
export type TakeResult =
  | {
      ok: true;
      outcome: ExitOutcome;
      after?: () => Promise<void>;
      /** The outcome once `after` has run (a hand-off: where it went, what Slack said). */
      settled?: () => ExitOutcome;
    }
  | { ok: false; line: string; after?: undefined; settled?: undefined };

export interface ExitTaker {
  take(wall: WallRow, arg: string | null): Promise<TakeResult>;
  /** Undo what take scheduled (a hold or a defer); false when there was nothing to undo. */
  cancel?(wall: WallRow): boolean;
}

export type ExitTakers = Record<ExitKind, ExitTaker>;
