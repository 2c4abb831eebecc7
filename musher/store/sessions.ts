import type { Db } from './db.js';

export interface SessionTouch {
  sessionId: string;
  harness: string;
  at: number;
  cwd?: string | null;
  transcriptPath?: string | null;
  model?: string | null;
}

export interface SessionRow {
  sessionId: string;
  harness: string;
  cwd: string | null;
  transcriptPath: string | null;
  model: string | null;
  firstSeenAt: number;
  lastSeenAt: number;
  endedAt: number | null;
  endReason: string | null;
}

/** Sessions seen through hooks, the statusline or transcripts. */
export class SessionStore {
  private readonly upsert;
  private readonly endStmt;
  private readonly getStmt;
  private readonly listStmt;
  constructor(private readonly db: Db) {
    this.upsert = db.prepare(
      `INSERT INTO sessions (session_id, harness, cwd, transcript_path, model, first_seen_at, last_seen_at)
       VALUES (@sessionId, @harness, @cwd, @transcriptPath, @model, @at, @at)
       ON CONFLICT(session_id) DO UPDATE SET
         cwd = COALESCE(excluded.cwd, sessions.cwd),
         transcript_path = COALESCE(excluded.transcript_path, sessions.transcript_path),
         model = COALESCE(excluded.model, sessions.model),
         first_seen_at = MIN(sessions.first_seen_at, excluded.first_seen_at),
         last_seen_at = MAX(sessions.last_seen_at, excluded.last_seen_at)`,
    );
    this.endStmt = db.prepare(`UPDATE sessions SET ended_at = @at, end_reason = @reason WHERE session_id = @sessionId`);
    this.getStmt = db.prepare(`SELECT * FROM sessions WHERE session_id = ?`);
    this.listStmt = db.prepare(`SELECT * FROM sessions ORDER BY last_seen_at DESC LIMIT ?`);
  }

  touch(t: SessionTouch): void {
    this.upsert.run({
      sessionId: t.sessionId,
      harness: t.harness,
      cwd: t.cwd ?? null,
      transcriptPath: t.transcriptPath ?? null,
      model: t.model ?? null,
      at: t.at,
    });
  }

  end(sessionId: string, reason: string, at: number): void {
    this.endStmt.run({ sessionId, reason, at });
  }

  get(sessionId: string): SessionRow | null {
    const r = this.getStmt.get(sessionId) as Record<string, unknown> | undefined;
    return r ? toRow(r) : null;
  }

  /** The worth the user gave the session's task (`/sled worth high`); null when none was given. */
  setWorth(sessionId: string, worth: string | null): void {
    this.db.prepare(`UPDATE sessions SET worth = ? WHERE session_id = ?`).run(worth, sessionId);
  }

  worth(sessionId: string): string | null {
    const r = this.db.prepare(`SELECT worth FROM sessions WHERE session_id = ?`).get(sessionId) as { worth: string | null } | undefined;
    return r?.worth ?? null;
  }

  /** Where the session's harness last ran in tmux (from its hooks' environment). */
  setPane(sessionId: string, socket: string, pane: string): void {
    this.db.prepare(`UPDATE sessions SET tmux_socket = ?, tmux_pane = ? WHERE session_id = ?`).run(socket, pane, sessionId);
  }

  pane(sessionId: string): { socket: string; pane: string } | null {
    const r = this.db.prepare(`SELECT tmux_socket, tmux_pane FROM sessions WHERE session_id = ?`).get(sessionId) as { tmux_socket: string | null; tmux_pane: string | null } | undefined;
    return r?.tmux_socket && r.tmux_pane ? { socket: r.tmux_socket, pane: r.tmux_pane } : null;
  }

  recent(limit = 50): SessionRow[] {
    return (this.listStmt.all(limit) as Array<Record<string, unknown>>).map(toRow);
  }
}

function toRow(r: Record<string, unknown>): SessionRow {
  return {
    sessionId: r.session_id as string,
    harness: r.harness as string,
    cwd: (r.cwd as string | null) ?? null,
    transcriptPath: (r.transcript_path as string | null) ?? null,
    model: (r.model as string | null) ?? null,
    firstSeenAt: r.first_seen_at as number,
    lastSeenAt: r.last_seen_at as number,
    endedAt: (r.ended_at as number | null) ?? null,
    endReason: (r.end_reason as string | null) ?? null,
  };
}
