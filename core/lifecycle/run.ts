import { z } from 'zod';
import { illegal, targetOf, type LifeCycle, type StepResult } from './machine.js';

/**
 * A run (SPEC.md § run): the unit the engine and the overnight runner drive — one task's work in one worktree by one
 * harness, from the queue to a merged pull request. Its terminal reason is kept apart from its state, and the time
 * it spends waiting (for a limit's reset, an answer, a merge, the queue, a recovery) apart from its runtime: `now`
 * comes in with every event and the time since the last one is added to the account of the state it was in.
 * No store yet: the engine (issue 14) keeps runs.
 */
export const RUN_STATES = [
  'QUEUED',
  'CLAIMING',
  'PREPARING',
  'RUNNING',
  'VERIFYING',
  'AWAITING_MERGE',
  'COMPLETED',
  'WAITING_FOR_LIMIT',
  'WAITING_FOR_INPUT',
  'RECOVERY_REQUIRED',
  'FAILED',
  'CANCELLED',
] as const;
export type RunStateName = (typeof RUN_STATES)[number];

export const RUN_EVENTS = [
  'claim',
  'claimed',
  'claim-lost',
  'prepared',
  'turn-completed',
  'verified',
  'verification-failed',
  'merged',
  'sent-back',
  'rate-limited',
  'limit-reset',
  'question',
  'answered',
  'lost',
  'recovered',
  'fail',
  'cancel',
  'slept',
] as const;
export type RunEventType = (typeof RUN_EVENTS)[number];

export const RunEvent = z.discriminatedUnion('type', [
  z.object({ type: z.literal('rate-limited'), resetsAtMs: z.number().nullable() }),
  z.object({ type: z.literal('question'), questionId: z.string() }),
  z.object({ type: z.literal('turn-completed'), sessionId: z.string() }),
  z.object({ type: z.literal('fail'), reason: z.string().min(1) }),
  z.object({ type: z.literal('cancel'), reason: z.string().min(1) }),
  // Why the run needs a person: the git error of a worktree that could not be made, a session that would not resume.
  z.object({ type: z.literal('lost'), reason: z.string().min(1).optional() }),
  // The pull request sent it back to its session: failing checks, changes requested, a merge conflict.
  z.object({ type: z.literal('sent-back'), why: z.string().min(1) }),
  // The machine slept (a closed lid) from `sinceMs` until now: that time is not runtime. The run stays where it was.
  z.object({ type: z.literal('slept'), sinceMs: z.number() }),
  // What the checks said ("test ✓ (340/340 tests) · types ✓"): kept in the run's log, which `sleds queue` shows.
  z.object({ type: z.literal('verified'), checks: z.string().max(500).optional() }),
  z.object({ type: z.enum(['claim', 'claimed', 'claim-lost', 'prepared', 'verification-failed', 'merged', 'limit-reset', 'answered', 'recovered']) }),
]);
export type RunEvent = z.infer<typeof RunEvent>;

/** Where the time since the last event goes, by the state it was spent in. */
export type WaitAccount = 'queue' | 'limit' | 'input' | 'merge' | 'recovery' | 'asleep';
const ACCOUNT: Record<RunStateName, 'runtime' | WaitAccount | null> = {
  QUEUED: 'queue',
  CLAIMING: 'runtime',
  PREPARING: 'runtime',
  RUNNING: 'runtime',
  VERIFYING: 'runtime',
  AWAITING_MERGE: 'merge',
  WAITING_FOR_LIMIT: 'limit',
  WAITING_FOR_INPUT: 'input',
  RECOVERY_REQUIRED: 'recovery',
  COMPLETED: null,
  FAILED: null,
  CANCELLED: null,
};

export interface RunState {
  state: RunStateName;
  /** When the run entered its state (the start of the time not yet accounted). */
  enteredAt: number;
  runtimeMs: number;
  waitMs: Record<WaitAccount, number>;
  /** Why a run ended (merged, the failure's one line, who cancelled it); null while it is not over. */
  reason: string | null;
  /** The session of the last completed turn (a resume continues it). */
  sessionId: string | null;
  /** The limit's reset while it waits for one, the question while it waits for an answer. */
  resetsAtMs: number | null;
  questionId: string | null;
  /** Times it was claimed: a recovered run is claimed again. */
  claims: number;
  /** Why it is in RECOVERY_REQUIRED (the git error, the failed resume), or why its pull request sent it back; else null. */
  problem: string | null;
}

export type RunEffect =
  | { type: 'wake-at'; at: number }
  | { type: 'ask'; questionId: string }
  | { type: 'release-claim' }
  | { type: 'open-pull-request' };

export function newRun(now: number): RunState {
  return { state: 'QUEUED', enteredAt: now, runtimeMs: 0, waitMs: { queue: 0, limit: 0, input: 0, merge: 0, recovery: 0, asleep: 0 }, reason: null, sessionId: null, resetsAtMs: null, questionId: null, claims: 0, problem: null };
}

const ACTIVE: readonly RunStateName[] = ['QUEUED', 'CLAIMING', 'PREPARING', 'RUNNING', 'VERIFYING', 'AWAITING_MERGE', 'WAITING_FOR_LIMIT', 'WAITING_FOR_INPUT', 'RECOVERY_REQUIRED'];
const every = (event: RunEventType, to: RunStateName): Partial<Record<RunStateName, Partial<Record<RunEventType, RunStateName>>>> =>
  Object.fromEntries(ACTIVE.map((s) => [s, { [event]: to }]));

function merge(...parts: Array<Partial<Record<RunStateName, Partial<Record<RunEventType, RunStateName>>>>>): Record<RunStateName, Partial<Record<RunEventType, RunStateName>>> {
  const table = Object.fromEntries(RUN_STATES.map((s) => [s, {}])) as Record<RunStateName, Partial<Record<RunEventType, RunStateName>>>;
  for (const part of parts) for (const [s, moves] of Object.entries(part)) Object.assign(table[s as RunStateName], moves);
  return table;
}

export const RUN_CYCLE: LifeCycle<RunStateName, RunEventType> = {
  kind: 'run',
  states: RUN_STATES,
  events: RUN_EVENTS,
  terminal: ['COMPLETED', 'FAILED', 'CANCELLED'],
  table: merge(
    {
      QUEUED: { claim: 'CLAIMING' },
      CLAIMING: { claimed: 'PREPARING', 'claim-lost': 'QUEUED', slept: 'CLAIMING' },
      PREPARING: { prepared: 'RUNNING', lost: 'RECOVERY_REQUIRED', slept: 'PREPARING' },
      RUNNING: { 'turn-completed': 'VERIFYING', 'rate-limited': 'WAITING_FOR_LIMIT', question: 'WAITING_FOR_INPUT', lost: 'RECOVERY_REQUIRED', slept: 'RUNNING' },
      VERIFYING: { verified: 'AWAITING_MERGE', 'verification-failed': 'RUNNING', 'rate-limited': 'WAITING_FOR_LIMIT', lost: 'RECOVERY_REQUIRED', slept: 'VERIFYING' },
      AWAITING_MERGE: { merged: 'COMPLETED', 'sent-back': 'RUNNING' },
      WAITING_FOR_LIMIT: { 'limit-reset': 'RUNNING' },
      WAITING_FOR_INPUT: { answered: 'RUNNING' },
      RECOVERY_REQUIRED: { recovered: 'QUEUED' },
    },
    every('fail', 'FAILED'),
    every('cancel', 'CANCELLED'),
  ),
};

export function stepRun(s: RunState, e: RunEvent, now: number): StepResult<RunState, RunEffect> {
  const to = targetOf(RUN_CYCLE, s.state, e.type);
  if (to === null) return illegal('run', s.state, e.type, ACCOUNT[s.state] === null ? `it is over (${s.reason ?? 'no reason kept'})` : undefined);
  if (now < s.enteredAt) return { ok: false, error: `a run event at ${now} is before the run entered ${s.state} at ${s.enteredAt} — the clock went back` };
  // A run stored before time asleep was kept has no such account yet.
  const waits: Record<WaitAccount, number> = { ...s.waitMs, asleep: s.waitMs.asleep ?? 0 };
  // Asleep from `sinceMs` (never before the state began, never after now): only the time before it was at work.
  const asleepFrom = e.type === 'slept' ? Math.min(Math.max(e.sinceMs, s.enteredAt), now) : now;
  const spent = asleepFrom - s.enteredAt;
  const account = ACCOUNT[s.state];
  const next: RunState = {
    ...s,
    state: to,
    enteredAt: now,
    runtimeMs: account === 'runtime' ? s.runtimeMs + spent : s.runtimeMs,
    waitMs: {
      ...(account === null || account === 'runtime' ? waits : { ...waits, [account]: waits[account] + spent }),
      asleep: waits.asleep + (now - asleepFrom),
    },
    resetsAtMs: to === 'WAITING_FOR_LIMIT' ? s.resetsAtMs : null,
    questionId: to === 'WAITING_FOR_INPUT' ? s.questionId : null,
    // A nap changes nothing of where the run stands, only where its time went.
    problem: e.type === 'slept' ? s.problem : null,
  };
  const effects: RunEffect[] = [];
  switch (e.type) {
    case 'claim':
      next.claims = s.claims + 1;
      break;
    case 'turn-completed':
      next.sessionId = e.sessionId;
      break;
    case 'verified':
      effects.push({ type: 'open-pull-request' });
      break;
    case 'rate-limited':
      next.resetsAtMs = e.resetsAtMs;
      if (e.resetsAtMs !== null) effects.push({ type: 'wake-at', at: e.resetsAtMs });
      break;
    case 'question':
      next.questionId = e.questionId;
      effects.push({ type: 'ask', questionId: e.questionId });
      break;
    case 'merged':
      next.reason = 'merged';
      break;
    case 'fail':
    case 'cancel':
      next.reason = e.reason;
      effects.push({ type: 'release-claim' });
      break;
    case 'sent-back':
      next.problem = e.why;
      break;
    case 'lost':
      next.problem = e.reason ?? 'its lease or process was lost';
      effects.push({ type: 'release-claim' });
      break;
    case 'claim-lost':
      effects.push({ type: 'release-claim' });
      break;
  }
  return { ok: true, state: next, effects };
}
