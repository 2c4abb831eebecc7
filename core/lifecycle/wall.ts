import { z } from 'zod';
import { EXIT_ORDER, type ExitKind } from '../exits/types.js';
import { illegal, targetOf, type LifeCycle, type StepResult } from './machine.js';

/**
 * A wall (SPEC.md § wall): open (waiting for a choice) → chosen (an exit taken; its work may still be under way) →
 * closed. Another exit may be chosen at a chosen wall (the first is cancelled); a cancelled or failed exit reopens it.
 */
export const WALL_STATES = ['open', 'chosen', 'closed'] as const;
export type WallState = (typeof WALL_STATES)[number];

export const WALL_EVENTS = ['choose', 'reopen', 'close'] as const;
export type WallEventType = (typeof WALL_EVENTS)[number];

export const WallLifeEvent = z.discriminatedUnion('type', [
  z.object({ type: z.literal('choose'), exit: z.enum(EXIT_ORDER), arg: z.string().nullable(), by: z.enum(['policy', 'user']) }),
  z.object({ type: z.literal('reopen'), why: z.string() }),
  z.object({ type: z.literal('close'), why: z.string() }),
]);
export type WallLifeEvent = z.infer<typeof WallLifeEvent>;

export interface WallLife {
  state: WallState;
  choice: ExitKind | null;
  choiceArg: string | null;
  chosenBy: 'policy' | 'user' | null;
  chosenAtMs: number | null;
  closedAtMs: number | null;
}

/** What the caller does besides writing the row: the exit chosen before is undone when another replaces it. */
export type WallEffect = { type: 'cancel-exit'; exit: ExitKind };

export const WALL_CYCLE: LifeCycle<WallState, WallEventType> = {
  kind: 'wall',
  states: WALL_STATES,
  events: WALL_EVENTS,
  terminal: ['closed'],
  table: {
    open: { choose: 'chosen', close: 'closed' },
    chosen: { choose: 'chosen', reopen: 'open', close: 'closed' },
    closed: {},
  },
};

const HINTS: Partial<Record<WallState, string>> = {
  closed: 'the wall is over; a new limit opens a new wall',
  open: 'no exit is taken yet: /sled exits shows them',
};

export function stepWall(s: WallLife, e: WallLifeEvent, now: number): StepResult<WallLife, WallEffect> {
  const to = targetOf(WALL_CYCLE, s.state, e.type);
  if (to === null) return illegal('wall', s.state, e.type, HINTS[s.state]);
  switch (e.type) {
    case 'choose': {
      const effects: WallEffect[] = s.choice !== null && s.choice !== e.exit ? [{ type: 'cancel-exit', exit: s.choice }] : [];
      return { ok: true, state: { ...s, state: to, choice: e.exit, choiceArg: e.arg, chosenBy: e.by, chosenAtMs: now }, effects };
    }
    case 'reopen':
      return { ok: true, state: { ...s, state: to, choice: null, choiceArg: null, chosenBy: null, chosenAtMs: null }, effects: [] };
    case 'close':
      return { ok: true, state: { ...s, state: to, closedAtMs: now }, effects: [] };
  }
}
