/**
 * The shape every life cycle shares (SPEC.md): a transition table from state × event to the next state, and a pure
 * `step(state, event, now)` that either moves along the table or refuses in one line. Stores apply an accepted step
 * with a conditional `UPDATE … WHERE state = ?` and append it to `lifecycle_events`.
 */

/** The life cycles that have a reducer; `lifecycle_events.entity_kind` takes the same names. */
export const LIFECYCLE_KINDS = ['wall', 'task', 'handoff', 'job', 'run'] as const;
export type LifecycleKind = (typeof LIFECYCLE_KINDS)[number];

/** from state → event → to state; a missing entry is an illegal move. */
export type TransitionTable<S extends string, E extends string> = Readonly<Record<S, Readonly<Partial<Record<E, S>>>>>;

export type StepResult<St, Fx> = { ok: true; state: St; effects: Fx[] } | { ok: false; error: string };

/** A life cycle as data: what SPEC.md's matrix is checked against. */
export interface LifeCycle<S extends string, E extends string> {
  kind: LifecycleKind;
  states: readonly S[];
  events: readonly E[];
  /** States nothing leaves. */
  terminal: readonly S[];
  table: TransitionTable<S, E>;
}

/** The state an event leads to from `from`, or null when the table has no such move. */
export function targetOf<S extends string, E extends string>(cycle: LifeCycle<S, E>, from: S, event: E): S | null {
  return cycle.table[from]?.[event] ?? null;
}

/** The one-line refusal of a move the table does not have. */
export function illegal(kind: LifecycleKind, from: string, event: string, hint?: string): { ok: false; error: string } {
  return { ok: false, error: `a ${kind} that is ${from} cannot take '${event}'${hint ? ` — ${hint}` : ''}` };
}
