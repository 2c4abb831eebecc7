import { z } from 'zod';
import { LIFECYCLE_KINDS, type LifecycleKind, type StepResult } from '../../core/lifecycle/machine.js';
import type { Db } from './db.js';

/**
 * The one append-only table of life-cycle moves (SPEC.md § The event table); its only writer. Stores call `apply`
 * inside their own write: the reducer's step, the conditional UPDATE and the append are one transaction.
 */

export const LifecycleEventRow = z.object({
  id: z.number(),
  entityKind: z.enum(LIFECYCLE_KINDS),
  entityId: z.string(),
  eventType: z.string(),
  fromState: z.string().nullable(),
  toState: z.string(),
  correlationId: z.string(),
  at: z.number(),
  payload: z.record(z.string(), z.unknown()),
});
export type LifecycleEventRow = z.infer<typeof LifecycleEventRow>;

export type NewLifecycleEvent = Omit<LifecycleEventRow, 'id'>;

/** A move refused: illegal for the state, or someone else moved the row first. One line. */
export class TransitionRefused extends Error {}

export class LifecycleEvents {
  private readonly insertStmt;
  private readonly forEntityStmt;
  private readonly byCorrelationStmt;
  constructor(private readonly db: Db) {
    this.insertStmt = db.prepare(
      `INSERT INTO lifecycle_events (entity_kind, entity_id, event_type, from_state, to_state, correlation_id, at, payload)
       VALUES (@entityKind, @entityId, @eventType, @fromState, @toState, @correlationId, @at, @payload)`,
    );
    this.forEntityStmt = db.prepare(`SELECT * FROM lifecycle_events WHERE entity_kind = ? AND entity_id = ? ORDER BY id`);
    this.byCorrelationStmt = db.prepare(`SELECT * FROM lifecycle_events WHERE correlation_id = ? ORDER BY id`);
  }

  append(e: NewLifecycleEvent): void {
    this.insertStmt.run({ ...e, payload: JSON.stringify(e.payload) });
  }

  forEntity(kind: LifecycleKind, id: string): LifecycleEventRow[] {
    return (this.forEntityStmt.all(kind, id) as Array<Record<string, unknown>>).map(toRow);
  }

  byCorrelation(correlationId: string): LifecycleEventRow[] {
    return (this.byCorrelationStmt.all(correlationId) as Array<Record<string, unknown>>).map(toRow);
  }

  /**
   * One move of a life cycle, whole or not at all: reads the row's life (`read`), steps the reducer, writes the new
   * state with `write(from, to)` — a conditional UPDATE (`… WHERE id = ? AND state = ?`) returning the rows it
   * changed — and appends the event. Refused (nothing written) when there is no row, the reducer refuses, or the
   * UPDATE changed nothing (someone else moved it first).
   */
  apply<L extends { state: string }, E extends { type: string }, F>(m: {
    kind: LifecycleKind;
    id: string;
    correlationId: string;
    event: E;
    at: number;
    read(): L | null;
    step(life: L, event: E, at: number): StepResult<L, F>;
    write(from: L, to: L): number;
  }): { ok: true; from: L; to: L; effects: F[] } | { ok: false; error: string } {
    return this.db.transaction(() => {
      const from = m.read();
      if (!from) return { ok: false as const, error: `no ${m.kind} ${m.id}` };
      const stepped = m.step(from, m.event, m.at);
      if (!stepped.ok) return { ok: false as const, error: `${m.kind} ${m.id}: ${stepped.error}` };
      if (m.write(from, stepped.state) === 0) return { ok: false as const, error: `${m.kind} ${m.id} was moved from ${from.state} meanwhile — nothing changed; look at it again` };
      const { type, ...payload } = m.event;
      this.append({ entityKind: m.kind, entityId: m.id, eventType: type, fromState: from.state, toState: stepped.state.state, correlationId: m.correlationId, at: m.at, payload });
      return { ok: true as const, from, to: stepped.state, effects: stepped.effects };
    })();
  }

  /** A row's first state (from_state null), in the transaction of its INSERT. */
  created(kind: LifecycleKind, id: string, state: string, correlationId: string, at: number, payload: Record<string, unknown> = {}): void {
    this.append({ entityKind: kind, entityId: id, eventType: 'created', fromState: null, toState: state, correlationId, at, payload });
  }
}

function toRow(r: Record<string, unknown>): LifecycleEventRow {
  return LifecycleEventRow.parse({
    id: r.id,
    entityKind: r.entity_kind,
    entityId: r.entity_id,
    eventType: r.event_type,
    fromState: r.from_state ?? null,
    toState: r.to_state,
    correlationId: r.correlation_id,
    at: r.at,
    payload: JSON.parse(r.payload as string) as unknown,
  });
}
