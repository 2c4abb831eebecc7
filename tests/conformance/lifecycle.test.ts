import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { LifeCycle, StepResult } from '../../core/lifecycle/machine.js';
import { WALL_CYCLE, stepWall, type WallLifeEvent, type WallState } from '../../core/lifecycle/wall.js';
import { TASK_CYCLE, stepTask, type TaskEventType, type TaskLifeState } from '../../core/lifecycle/task.js';
import { HANDOFF_CYCLE, stepHandoff, type HandoffEventType, type HandoffLifeEvent, type HandoffLifeState } from '../../core/lifecycle/handoff.js';
import { JOB_CYCLE, stepJob, type JobEventType, type JobLifeEvent, type JobLifeState } from '../../core/lifecycle/job.js';
import { RUN_CYCLE, newRun, stepRun, type RunEvent, type RunEventType, type RunStateName } from '../../core/lifecycle/run.js';

/**
 * SPEC.md is the specification of every life cycle: this suite parses its matrices and steps each reducer through
 * every (state, event) cell. A move in the reducer that SPEC.md does not list, or the other way round, fails here.
 */
const SPEC = readFileSync(join(import.meta.dirname, '..', '..', 'SPEC.md'), 'utf8');
const NOW = Date.UTC(2026, 11, 2, 9, 0);

interface Matrix {
  events: string[];
  rows: Map<string, Array<string | null>>;
}

/** The markdown table that follows `<!-- matrix: kind -->` in SPEC.md. */
function matrixOf(spec: string, kind: string): Matrix {
  const start = spec.indexOf(`<!-- matrix: ${kind} -->`);
  if (start < 0) throw new Error(`SPEC.md has no matrix for ${kind}`);
  const lines = spec.slice(start).split('\n').slice(1);
  const table = lines.slice(0, lines.findIndex((l) => !l.trim().startsWith('|')));
  const cells = (line: string): string[] => line.trim().replace(/^\||\|$/g, '').split('|').map((c) => c.trim().replace(/^`|`$/g, ''));
  const [header, , ...body] = table;
  const events = cells(header!).slice(1);
  const rows = new Map<string, Array<string | null>>();
  for (const line of body) {
    const [state, ...targets] = cells(line);
    rows.set(state!, targets.map((t) => (t === '—' ? null : t)));
  }
  return { events, rows };
}

interface Case<S extends string, E extends string> {
  cycle: LifeCycle<S, E>;
  step(state: S, event: E): StepResult<{ state: string }, unknown>;
}

const wallEvent = (type: WallLifeEvent['type']): WallLifeEvent =>
  type === 'choose' ? { type, exit: 'hold', arg: null, by: 'user' } : { type, why: 'a test' };
const handoffEvent = (type: HandoffEventType): HandoffLifeEvent =>
  type === 'pushed' ? { type, ref: 'refs/sleds/handoffs/x' } : type === 'push-failed' ? { type, error: 'refused' } : type === 'picked-up' ? { type, by: 'dana' } : { type };
const jobEvent = (type: JobEventType): JobLifeEvent => (type === 'retry' ? { type, runAt: NOW + 60_000, why: 'not yet' } : { type });
const runEvent = (type: RunEventType): RunEvent => {
  switch (type) {
    case 'rate-limited':
      return { type, resetsAtMs: NOW + 3_600_000 };
    case 'question':
      return { type, questionId: 'q1' };
    case 'turn-completed':
      return { type, sessionId: 's1' };
    case 'fail':
    case 'cancel':
      return { type, reason: 'a test' };
    case 'sent-back':
      return { type, why: 'a test' };
    case 'lost':
      return { type };
    case 'slept':
      return { type, sinceMs: 0 };
    case 'verified':
      return { type };
    default:
      return { type };
  }
};

const CASES = [
  {
    cycle: WALL_CYCLE,
    step: (state: WallState, event: WallLifeEvent['type']) =>
      stepWall({ state, choice: state === 'open' ? null : 'continue', choiceArg: null, chosenBy: state === 'open' ? null : 'user', chosenAtMs: null, closedAtMs: null }, wallEvent(event), NOW),
  } satisfies Case<WallState, WallLifeEvent['type']>,
  { cycle: TASK_CYCLE, step: (state: TaskLifeState, event: TaskEventType) => stepTask({ state, endedAt: null }, { type: event }, NOW) } satisfies Case<TaskLifeState, TaskEventType>,
  {
    cycle: HANDOFF_CYCLE,
    step: (state: HandoffLifeState, event: HandoffEventType) => stepHandoff({ state, pickedUpBy: null, pickedUpAt: null }, handoffEvent(event), NOW),
  } satisfies Case<HandoffLifeState, HandoffEventType>,
  { cycle: JOB_CYCLE, step: (state: JobLifeState, event: JobEventType) => stepJob({ state, runAt: NOW - 1, attempts: 0 }, jobEvent(event), NOW) } satisfies Case<JobLifeState, JobEventType>,
  {
    cycle: RUN_CYCLE,
    step: (state: RunStateName, event: RunEventType) => stepRun({ ...newRun(NOW - 60_000), state }, runEvent(event), NOW),
  } satisfies Case<RunStateName, RunEventType>,
] as Array<Case<string, string>>;

describe('life cycles: SPEC.md matrices and the reducers agree', () => {
  for (const { cycle, step } of CASES) {
    describe(cycle.kind, () => {
      const matrix = matrixOf(SPEC, cycle.kind);

      it('SPEC.md names the same states and events as the reducer', () => {
        expect(matrix.events).toEqual([...cycle.events]);
        expect([...matrix.rows.keys()]).toEqual([...cycle.states]);
        for (const [state, targets] of matrix.rows) {
          expect(targets, `row ${state}`).toHaveLength(cycle.events.length);
          for (const t of targets) if (t !== null) expect(cycle.states, `${state} leads to ${t}`).toContain(t);
        }
      });

      for (const state of cycle.states) {
        it(`from ${state}: the reducer accepts exactly the moves SPEC.md lists, to the same state`, () => {
          const targets = matrix.rows.get(state)!;
          cycle.events.forEach((event, i) => {
            const listed = targets[i] ?? null;
            const result = step(state, event);
            if (listed === null) {
              expect(result.ok, `${cycle.kind} ${state} × ${event} is refused in SPEC.md`).toBe(false);
              if (!result.ok) expect(result.error, 'a refusal is one line').toMatch(/^[^\n]+$/);
            } else {
              expect(result.ok, `${cycle.kind} ${state} × ${event} → ${listed} in SPEC.md${result.ok ? '' : `, refused: ${result.error}`}`).toBe(true);
              if (result.ok) expect(result.state.state, `${cycle.kind} ${state} × ${event}`).toBe(listed);
            }
          });
        });
      }

      it('terminal states take no event', () => {
        for (const state of cycle.terminal) expect(matrix.rows.get(state)!.every((t) => t === null), `${state} is terminal`).toBe(true);
      });
    });
  }
});
