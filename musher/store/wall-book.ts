import { harnessById, type HarnessId } from '../../harnesses/registry.js';
import type { Db } from './db.js';
import type { ExitContext, ExitKind, Offer } from '../../core/exits/types.js';
import { stepWall, type WallLife, type WallLifeEvent, type WallState } from '../../core/lifecycle/wall.js';
import { LifecycleEvents } from './lifecycle-events.js';

/**
 * The walls: one row per time a session's bar hit 100%, with what was offered, what the policy decided, what was
 * chosen and what came of it; and the append-only audit log of each (`sleds policy explain` and status read it).
 * States: open (waiting for a choice) → chosen (an exit taken; its work may still be under way) → closed — moved only
 * through core/lifecycle/wall.ts (SPEC.md § wall), each move a conditional UPDATE plus a row in lifecycle_events.
 */
export type { WallState };

/** A move refused (illegal for the wall's state, or someone else moved it first), in one line. */
export type WallMove = { ok: true } | { ok: false; error: string };

export interface WallRow {
  wallId: string;
  sessionId: string;
  harness: HarnessId;
  window: string | null;
  resetsAtMs: number | null;
  hitAtMs: number;
  /** The signal that opened it: "claude-transcript", "hook:StopFailure", "statusline", … */
  signal: string;
  state: WallState;
  snapshotId: string | null;
  snapshotNote: string | null;
  context: ExitContext;
  offers: Offer[];
  /** The policy's evaluation (JSON as the policy module writes it); null until evaluated. */
  decision: unknown;
  choice: ExitKind | null;
  choiceArg: string | null;
  chosenBy: 'policy' | 'user' | null;
  chosenAtMs: number | null;
  outcome: string | null;
  closedAtMs: number | null;
}

export interface WallEvent {
  wallId: string;
  at: number;
  kind: string;
  detail: Record<string, unknown>;
}

export class WallBook {
  private readonly insertStmt;
  private readonly getStmt;
  private readonly latestForSessionStmt;
  private readonly notClosedStmt;
  private readonly recentStmt;
  private readonly eventStmt;
  private readonly eventsStmt;
  private readonly lifeStmt;
  private readonly lifecycle: LifecycleEvents;
  constructor(private readonly db: Db) {
    this.lifecycle = new LifecycleEvents(db);
    this.lifeStmt = db.prepare(`SELECT state, choice, choice_arg, chosen_by, chosen_at, closed_at FROM walls WHERE wall_id = ?`);
    this.insertStmt = db.prepare(
      `INSERT INTO walls (wall_id, session_id, harness, window, resets_at, hit_at, signal, state, context, offers, decision)
       VALUES (@wallId, @sessionId, @harness, @window, @resetsAtMs, @hitAtMs, @signal, 'open', @context, @offers, @decision)`,
    );
    this.getStmt = db.prepare(`SELECT * FROM walls WHERE wall_id = ?`);
    this.latestForSessionStmt = db.prepare(`SELECT * FROM walls WHERE session_id = ? ORDER BY hit_at DESC LIMIT 1`);
    this.notClosedStmt = db.prepare(`SELECT * FROM walls WHERE session_id = ? AND state != 'closed' ORDER BY hit_at DESC`);
    this.recentStmt = db.prepare(`SELECT * FROM walls ORDER BY hit_at DESC LIMIT ?`);
    this.eventStmt = db.prepare(`INSERT INTO wall_events (wall_id, at, kind, detail) VALUES (?, ?, ?, ?)`);
    this.eventsStmt = db.prepare(`SELECT * FROM wall_events WHERE wall_id = ? ORDER BY id`);
  }

  /**
   * Opens the wall unless the session already has one that is the same limit (`foldsInto` says which): the check
   * and the insert are one transaction, so two signals of one limit never both open a wall. Returns 'opened', the
   * wall it folds into, or 'id-taken' (the caller draws another id).
   */
  open(
    w: Pick<WallRow, 'wallId' | 'sessionId' | 'harness' | 'window' | 'resetsAtMs' | 'hitAtMs' | 'signal' | 'context' | 'offers' | 'decision'>,
    foldsInto: (open: WallRow) => boolean = () => false,
  ): { opened: true } | { opened: false; into: WallRow | null } {
    try {
      return this.db
        .transaction(() => {
          const into = (this.notClosedStmt.all(w.sessionId) as Array<Record<string, unknown>>).map(toRow).find(foldsInto);
          if (into) return { opened: false as const, into };
          this.insertStmt.run({ ...w, context: JSON.stringify(w.context), offers: JSON.stringify(w.offers), decision: JSON.stringify(w.decision ?? null) });
          this.event({ wallId: w.wallId, at: w.hitAtMs, kind: 'hit', detail: { signal: w.signal, window: w.window, resetsAtMs: w.resetsAtMs } });
          this.lifecycle.created('wall', w.wallId, 'open', w.wallId, w.hitAtMs, { sessionId: w.sessionId, signal: w.signal });
          return { opened: true as const };
        })
        .immediate();
    } catch (e) {
      if ((e as { code?: string }).code === 'SQLITE_CONSTRAINT_PRIMARYKEY') return { opened: false, into: null };
      throw e;
    }
  }

  /** The window a later signal named, for a wall opened by one that named none. */
  setWindow(wallId: string, window: string, at: number, source: string): void {
    this.db.transaction(() => {
      this.db.prepare(`UPDATE walls SET window = ? WHERE wall_id = ? AND window IS NULL`).run(window, wallId);
      this.event({ wallId, at, kind: 'window', detail: { window, source } });
    })();
  }

  get(wallId: string): WallRow | null {
    const r = this.getStmt.get(wallId) as Record<string, unknown> | undefined;
    return r ? toRow(r) : null;
  }

  latestForSession(sessionId: string): WallRow | null {
    const r = this.latestForSessionStmt.get(sessionId) as Record<string, unknown> | undefined;
    return r ? toRow(r) : null;
  }

  recent(limit = 20): WallRow[] {
    return (this.recentStmt.all(limit) as Array<Record<string, unknown>>).map(toRow);
  }

  setSnapshot(wallId: string, snapshotId: string | null, note: string | null, at: number): void {
    this.db.prepare(`UPDATE walls SET snapshot_id = ?, snapshot_note = ? WHERE wall_id = ?`).run(snapshotId, note, wallId);
    this.event({ wallId, at, kind: 'snapshot', detail: { snapshotId, note } });
  }

  /** A more precise reset from a later signal (the transcript's epoch seconds beat the hook's whole minutes). */
  setReset(wallId: string, resetsAtMs: number, at: number, source: string): void {
    this.db.transaction(() => {
      this.db.prepare(`UPDATE walls SET resets_at = ? WHERE wall_id = ?`).run(resetsAtMs, wallId);
      this.event({ wallId, at, kind: 'reset', detail: { resetsAtMs, source } });
    })();
  }

  /** Another signal of the same wall (the transcript's record after the hook's): noted, nothing else changes. */
  signal(wallId: string, at: number, source: string): void {
    this.event({ wallId, at, kind: 'signal', detail: { source } });
  }

  choose(wallId: string, c: { exit: ExitKind; arg: string | null; by: 'policy' | 'user'; rule: string | null; at: number }): WallMove {
    return this.move(wallId, { type: 'choose', exit: c.exit, arg: c.arg, by: c.by }, c.at, (from, to) =>
      this.db
        .prepare(`UPDATE walls SET state = ?, choice = ?, choice_arg = ?, chosen_by = ?, chosen_at = ?, outcome = NULL WHERE wall_id = ? AND state = ?`)
        .run(to.state, to.choice, to.choiceArg, to.chosenBy, to.chosenAtMs, wallId, from.state).changes,
      { kind: 'chosen', detail: { exit: c.exit, arg: c.arg, by: c.by, rule: c.rule } },
    );
  }

  outcome(wallId: string, at: number, line: string, detail: Record<string, unknown> = {}): void {
    this.db.transaction(() => {
      this.db.prepare(`UPDATE walls SET outcome = ? WHERE wall_id = ?`).run(line, wallId);
      this.event({ wallId, at, kind: 'outcome', detail: { line, ...detail } });
    })();
  }

  /** Back to waiting for a choice (a cancelled hold or defer). */
  reopen(wallId: string, at: number, why: string): WallMove {
    return this.move(wallId, { type: 'reopen', why }, at, (from, to) =>
      this.db
        .prepare(`UPDATE walls SET state = ?, choice = NULL, choice_arg = NULL, chosen_by = NULL, chosen_at = NULL, outcome = NULL WHERE wall_id = ? AND state = ?`)
        .run(to.state, wallId, from.state).changes,
      { kind: 'reopened', detail: { why } },
    );
  }

  close(wallId: string, at: number, why: string): WallMove {
    return this.move(wallId, { type: 'close', why }, at, (from, to) =>
      this.db.prepare(`UPDATE walls SET state = ?, closed_at = ? WHERE wall_id = ? AND state = ?`).run(to.state, to.closedAtMs, wallId, from.state).changes,
      { kind: 'closed', detail: { why } },
    );
  }

  /** One step of the wall's life cycle: the conditional UPDATE, its lifecycle event and its line in the wall's story. */
  private move(wallId: string, event: WallLifeEvent, at: number, write: (from: WallLife, to: WallLife) => number, story: Omit<WallEvent, 'wallId' | 'at'>): WallMove {
    return this.db.transaction((): WallMove => {
      const moved = this.lifecycle.apply({ kind: 'wall', id: wallId, correlationId: wallId, event, at, read: () => this.life(wallId), step: stepWall, write });
      if (!moved.ok) return moved;
      this.event({ wallId, at, ...story });
      return { ok: true };
    })();
  }

  private life(wallId: string): WallLife | null {
    const r = this.lifeStmt.get(wallId) as Record<string, unknown> | undefined;
    if (!r) return null;
    return {
      state: r.state as WallState,
      choice: (r.choice as ExitKind | null) ?? null,
      choiceArg: (r.choice_arg as string | null) ?? null,
      chosenBy: (r.chosen_by as WallLife['chosenBy']) ?? null,
      chosenAtMs: (r.chosen_at as number | null) ?? null,
      closedAtMs: (r.closed_at as number | null) ?? null,
    };
  }

  event(e: WallEvent): void {
    this.eventStmt.run(e.wallId, e.at, e.kind, JSON.stringify(e.detail));
  }

  events(wallId: string): WallEvent[] {
    return (this.eventsStmt.all(wallId) as Array<Record<string, unknown>>).map((r) => ({
      wallId: r.wall_id as string,
      at: r.at as number,
      kind: r.kind as string,
      detail: JSON.parse(r.detail as string) as Record<string, unknown>,
    }));
  }
}

/** A wall opened before its context kept the session's provider gets its harness's (from the registry). */
function withProvider(context: ExitContext, harness: string): ExitContext {
  if (typeof context.session?.provider === 'string') return context;
  const found = harnessById(harness);
  return found.ok ? { ...context, session: { ...context.session, provider: found.adapter.provider } } : context;
}

function toRow(r: Record<string, unknown>): WallRow {
  return {
    wallId: r.wall_id as string,
    sessionId: r.session_id as string,
    harness: r.harness as WallRow['harness'],
    window: (r.window as string | null) ?? null,
    resetsAtMs: (r.resets_at as number | null) ?? null,
    hitAtMs: r.hit_at as number,
    signal: r.signal as string,
    state: r.state as WallState,
    snapshotId: (r.snapshot_id as string | null) ?? null,
    snapshotNote: (r.snapshot_note as string | null) ?? null,
    context: withProvider(JSON.parse(r.context as string) as ExitContext, r.harness as string),
    offers: JSON.parse(r.offers as string) as Offer[],
    decision: JSON.parse((r.decision as string | null) ?? 'null') as unknown,
    choice: (r.choice as ExitKind | null) ?? null,
    choiceArg: (r.choice_arg as string | null) ?? null,
    chosenBy: (r.chosen_by as WallRow['chosenBy']) ?? null,
    chosenAtMs: (r.chosen_at as number | null) ?? null,
    outcome: (r.outcome as string | null) ?? null,
    closedAtMs: (r.closed_at as number | null) ?? null,
  };
}
