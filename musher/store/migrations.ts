import type Database from 'better-sqlite3';

/**
 * Versioned migrations, applied in order inside one transaction each; PRAGMA user_version holds the
 * number applied. Never edit a shipped migration: add the next one.
 */
const MIGRATIONS: ReadonlyArray<string> = [
  // 1: the hook path, transcripts, bars and walls.
  `
  CREATE TABLE hook_events (
    event_id      TEXT PRIMARY KEY,
    event         TEXT NOT NULL,
    session_id    TEXT,
    received_at   INTEGER NOT NULL,
    via_spool     INTEGER NOT NULL DEFAULT 0,
    payload       TEXT NOT NULL
  );
  CREATE INDEX hook_events_session ON hook_events(session_id, received_at);

  CREATE TABLE sessions (
    session_id      TEXT PRIMARY KEY,
    harness         TEXT NOT NULL,
    cwd             TEXT,
    transcript_path TEXT,
    model           TEXT,
    first_seen_at   INTEGER NOT NULL,
    last_seen_at    INTEGER NOT NULL,
    ended_at        INTEGER,
    end_reason      TEXT
  );

  CREATE TABLE usage_records (
    dedup_key      TEXT PRIMARY KEY,
    source         TEXT NOT NULL,
    session_id     TEXT NOT NULL,
    model          TEXT NOT NULL,
    ts             INTEGER NOT NULL,
    input_tokens   INTEGER NOT NULL,
    output_tokens  INTEGER NOT NULL,
    cache_write_5m INTEGER NOT NULL,
    cache_write_1h INTEGER NOT NULL,
    cache_read     INTEGER NOT NULL,
    web_searches   INTEGER NOT NULL,
    service_tier   TEXT,
    inference_geo  TEXT,
    cost_micros    INTEGER,
    unpriced_reason TEXT
  );
  CREATE INDEX usage_session ON usage_records(session_id);
  CREATE INDEX usage_ts ON usage_records(ts);

  CREATE TABLE bar_samples (
    id          INTEGER PRIMARY KEY,
    provider    TEXT NOT NULL,
    window      TEXT NOT NULL,
    used_pct    REAL NOT NULL,
    resets_at   INTEGER,
    observed_at INTEGER NOT NULL,
    source      TEXT NOT NULL,
    session_id  TEXT
  );
  CREATE INDEX bar_samples_window ON bar_samples(provider, window, observed_at);

  CREATE TABLE bars (
    provider      TEXT NOT NULL,
    window        TEXT NOT NULL,
    used_pct      REAL NOT NULL,
    resets_at     INTEGER,
    changed_at    INTEGER NOT NULL,
    observed_at   INTEGER NOT NULL,
    source        TEXT NOT NULL,
    PRIMARY KEY (provider, window)
  );

  CREATE TABLE wall_signals (
    dedup_key   TEXT PRIMARY KEY,
    source      TEXT NOT NULL,
    session_id  TEXT,
    ts          INTEGER NOT NULL,
    window      TEXT,
    resets_at   INTEGER,
    message     TEXT NOT NULL
  );
  CREATE INDEX wall_signals_ts ON wall_signals(ts);

  CREATE TABLE file_offsets (
    path       TEXT PRIMARY KEY,
    offset     INTEGER NOT NULL,
    inode      INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
  );
  `,
  // 2: covering indexes, so the statusline's "this session" and "today" sums never touch the table itself.
  `
  DROP INDEX usage_session;
  DROP INDEX usage_ts;
  CREATE INDEX usage_session_cost ON usage_records(session_id, model, cost_micros, ts);
  CREATE INDEX usage_ts_cost ON usage_records(ts, model, cost_micros);
  `,
];

export function migrate(db: Database.Database): number {
  const current = db.pragma('user_version', { simple: true }) as number;
  for (let version = current; version < MIGRATIONS.length; version++) {
    const sql = MIGRATIONS[version]!;
    db.transaction(() => {
      db.exec(sql);
      db.pragma(`user_version = ${version + 1}`);
    })();
  }
  return MIGRATIONS.length;
}
