import type Database from 'better-sqlite3';
import { keptHookFields } from '../../core/hook-fields.js';
import { CREATE_DEDUP_INDEX, QUARTER_HOUR_TRIGGERS, SUM_QUARTER_HOURS } from './usage-schema.js';

/**
 * Versioned migrations, applied in order inside one transaction each; PRAGMA user_version holds the
 * number applied. Never edit a shipped migration: add the next one. A migration is SQL, or a function for what SQL
 * cannot say.
 */
type Migration = string | ((db: Database.Database) => void);

const MIGRATIONS: ReadonlyArray<Migration> = [
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
  // 3: spend and tokens per quarter hour and model, kept by triggers, so "today" (from local midnight, which falls
  // on a quarter hour in every time zone) and all-time totals are sums of a few rows however big the history is.
  `
  CREATE TABLE usage_quarter_hours (
    bucket          INTEGER NOT NULL,
    model           TEXT NOT NULL,
    cost_micros     INTEGER NOT NULL,
    unpriced        INTEGER NOT NULL,
    records         INTEGER NOT NULL,
    input_tokens    INTEGER NOT NULL,
    output_tokens   INTEGER NOT NULL,
    cache_read      INTEGER NOT NULL,
    cache_write     INTEGER NOT NULL,
    PRIMARY KEY (bucket, model)
  ) WITHOUT ROWID;
  INSERT INTO usage_quarter_hours
    SELECT ts / 900000, model, COALESCE(SUM(cost_micros), 0), SUM(cost_micros IS NULL), COUNT(*),
      SUM(input_tokens), SUM(output_tokens), SUM(cache_read), SUM(cache_write_5m + cache_write_1h)
    FROM usage_records GROUP BY ts / 900000, model;
  CREATE TRIGGER usage_quarter_hours_insert AFTER INSERT ON usage_records BEGIN
    INSERT INTO usage_quarter_hours
    VALUES (NEW.ts / 900000, NEW.model, COALESCE(NEW.cost_micros, 0), NEW.cost_micros IS NULL, 1,
      NEW.input_tokens, NEW.output_tokens, NEW.cache_read, NEW.cache_write_5m + NEW.cache_write_1h)
    ON CONFLICT(bucket, model) DO UPDATE SET cost_micros = cost_micros + excluded.cost_micros,
      unpriced = unpriced + excluded.unpriced, records = records + 1,
      input_tokens = input_tokens + excluded.input_tokens, output_tokens = output_tokens + excluded.output_tokens,
      cache_read = cache_read + excluded.cache_read, cache_write = cache_write + excluded.cache_write;
  END;
  CREATE TRIGGER usage_quarter_hours_update AFTER UPDATE OF cost_micros, output_tokens ON usage_records BEGIN
    UPDATE usage_quarter_hours
    SET cost_micros = cost_micros - COALESCE(OLD.cost_micros, 0) + COALESCE(NEW.cost_micros, 0),
        unpriced = unpriced - (OLD.cost_micros IS NULL) + (NEW.cost_micros IS NULL),
        output_tokens = output_tokens - OLD.output_tokens + NEW.output_tokens
    WHERE bucket = NEW.ts / 900000 AND model = NEW.model;
  END;
  `,
  // 4: the seat-credits rail (Claude extra usage, Codex credits), one reading per observation.
  `
  CREATE TABLE credit_readings (
    id                  INTEGER PRIMARY KEY,
    provider            TEXT NOT NULL,
    observed_at         INTEGER NOT NULL,
    enabled             INTEGER,
    unlimited           INTEGER,
    currency            TEXT,
    exponent            INTEGER NOT NULL,
    used_minor          INTEGER,
    limit_minor         INTEGER,
    balance_minor       INTEGER,
    utilization_pct     REAL,
    disabled_reason     TEXT,
    source              TEXT NOT NULL
  );
  CREATE INDEX credit_readings_provider ON credit_readings(provider, observed_at);
  `,
  // 5: the platform-key rail: spend on the team's API key, per seat, project and model, as metered by the gateway
  // (one row per response, keyed by its request id so a re-read never counts twice).
  `
  CREATE TABLE platform_key_usage (
    request_id     TEXT PRIMARY KEY,
    seat           TEXT NOT NULL,
    project        TEXT,
    model          TEXT NOT NULL,
    ts             INTEGER NOT NULL,
    input_tokens   INTEGER NOT NULL,
    output_tokens  INTEGER NOT NULL,
    cache_write    INTEGER NOT NULL,
    cache_read     INTEGER NOT NULL,
    cost_micros    INTEGER,
    source         TEXT NOT NULL
  );
  CREATE INDEX platform_key_usage_ts ON platform_key_usage(ts, seat, model, cost_micros);
  `,
  // 6: walls (a bar at 100% in a session, with its priced exits, the policy's decision and the choice) and their
  // append-only audit log; the worth the user gave a session.
  `
  CREATE TABLE walls (
    wall_id       TEXT PRIMARY KEY,
    session_id    TEXT NOT NULL,
    harness       TEXT NOT NULL,
    window        TEXT,
    resets_at     INTEGER,
    hit_at        INTEGER NOT NULL,
    signal        TEXT NOT NULL,
    state         TEXT NOT NULL,
    snapshot_id   TEXT,
    snapshot_note TEXT,
    context       TEXT NOT NULL,
    offers        TEXT NOT NULL,
    decision      TEXT,
    choice        TEXT,
    choice_arg    TEXT,
    chosen_by     TEXT,
    chosen_at     INTEGER,
    outcome       TEXT,
    closed_at     INTEGER
  );
  CREATE INDEX walls_session ON walls(session_id, hit_at);
  CREATE TABLE wall_events (
    id       INTEGER PRIMARY KEY,
    wall_id  TEXT NOT NULL,
    at       INTEGER NOT NULL,
    kind     TEXT NOT NULL,
    detail   TEXT NOT NULL
  );
  CREATE INDEX wall_events_wall ON wall_events(wall_id, id);
  ALTER TABLE sessions ADD COLUMN worth TEXT;
  ALTER TABLE sessions ADD COLUMN tmux_socket TEXT;
  ALTER TABLE sessions ADD COLUMN tmux_pane TEXT;
  `,
  // 7: snapshots taken at walls (the files are under the data dir; the id is the manifest's content hash).
  `
  CREATE TABLE snapshots (
    id          TEXT PRIMARY KEY,
    session_id  TEXT NOT NULL,
    wall_id     TEXT,
    harness     TEXT NOT NULL,
    taken_at    INTEGER NOT NULL,
    size_bytes  INTEGER NOT NULL,
    note        TEXT
  );
  CREATE INDEX snapshots_taken ON snapshots(taken_at);
  CREATE INDEX snapshots_session ON snapshots(session_id, taken_at);
  `,
  // 8: jobs: what musher does at a time (resume a held or deferred session). State moves are conditional UPDATEs.
  `
  CREATE TABLE jobs (
    id           TEXT PRIMARY KEY,
    kind         TEXT NOT NULL,
    wall_id      TEXT,
    session_id   TEXT,
    run_at       INTEGER NOT NULL,
    state        TEXT NOT NULL CHECK (state IN ('scheduled', 'running', 'done', 'failed', 'cancelled')),
    payload      TEXT NOT NULL,
    result       TEXT,
    handle       TEXT,
    attempts     INTEGER NOT NULL DEFAULT 0,
    last_check   TEXT,
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL,
    started_at   INTEGER,
    finished_at  INTEGER,
    reported_at  INTEGER
  );
  CREATE INDEX jobs_due ON jobs(state, run_at);
  CREATE INDEX jobs_wall ON jobs(wall_id, state);
  CREATE INDEX jobs_session ON jobs(session_id, state);
  `,
  // 9: the gateway: the local tokens musher mints per resumed session (only their sha256 is kept), and whether a
  // metered response's output is known (a stream cut before its final usage records the input side alone).
  `
  CREATE TABLE gateway_tokens (
    token_hash   TEXT PRIMARY KEY,
    seat         TEXT NOT NULL,
    project      TEXT,
    session_id   TEXT NOT NULL,
    wall_id      TEXT,
    created_at   INTEGER NOT NULL,
    expires_at   INTEGER NOT NULL
  );
  CREATE INDEX gateway_tokens_expiry ON gateway_tokens(expires_at);
  ALTER TABLE platform_key_usage ADD COLUMN output_known INTEGER NOT NULL DEFAULT 1;
  CREATE INDEX platform_key_usage_seat ON platform_key_usage(seat, ts, cost_micros);
  `,
  // 10: hand-offs sent and received: who, when, until when, over which transport, and whether it was picked up.
  `
  CREATE TABLE handoffs (
    id            TEXT PRIMARY KEY,
    direction     TEXT NOT NULL CHECK (direction IN ('sent', 'received')),
    wall_id       TEXT,
    session_id    TEXT,
    harness       TEXT,
    peer          TEXT NOT NULL,
    created_at    INTEGER NOT NULL,
    expires_at    INTEGER NOT NULL,
    transport     TEXT NOT NULL,
    ref           TEXT,
    branch        TEXT,
    state         TEXT NOT NULL,
    picked_up_by  TEXT,
    picked_up_at  INTEGER,
    note          TEXT
  );
  CREATE INDEX handoffs_created ON handoffs(created_at);
  `,
  // 11: tasks, each with its sessions (a session works on one task at a time: the one it was last attached to).
  `
  CREATE TABLE tasks (
    id            TEXT PRIMARY KEY,
    title         TEXT NOT NULL,
    worth         TEXT,
    type          TEXT,
    repo          TEXT,
    source        TEXT NOT NULL,
    source_ref    TEXT,
    state         TEXT NOT NULL CHECK (state IN ('open', 'parked', 'done')),
    prompt_chars  INTEGER NOT NULL DEFAULT 0,
    turns         INTEGER NOT NULL DEFAULT 0,
    created_at    INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL,
    ended_at      INTEGER
  );
  CREATE INDEX tasks_created ON tasks(created_at);
  CREATE UNIQUE INDEX tasks_source_ref ON tasks(source, source_ref) WHERE source_ref IS NOT NULL;
  CREATE TABLE task_sessions (
    session_id    TEXT PRIMARY KEY,
    task_id       TEXT NOT NULL REFERENCES tasks(id),
    attached_at   INTEGER NOT NULL
  );
  CREATE INDEX task_sessions_task ON task_sessions(task_id);
  `,
  // 12: receipts (one per task, ever: the UNIQUE task_id), the band a task was given when it was created, and which
  // session a platform-key response was metered for (a receipt's key spend).
  `
  CREATE TABLE receipts (
    id            TEXT PRIMARY KEY,
    task_id       TEXT NOT NULL UNIQUE,
    body          TEXT NOT NULL,
    signature     TEXT,
    signer        TEXT,
    created_at    INTEGER NOT NULL
  );
  CREATE INDEX receipts_created ON receipts(created_at);
  ALTER TABLE tasks ADD COLUMN band TEXT;
  ALTER TABLE platform_key_usage ADD COLUMN session_id TEXT;
  CREATE INDEX platform_key_usage_session ON platform_key_usage(session_id) WHERE session_id IS NOT NULL;
  `,
  // 13: a task keeps the request it started from, so a seat picked for it can be started with it.
  `
  ALTER TABLE tasks ADD COLUMN prompt TEXT;
  `,
  // 14: parked questions (the MCP park tool): a task waits on one until it is answered A or B, and the answer goes back
  // into the asking session's context (delivered_at).
  `
  CREATE TABLE questions (
    id            TEXT PRIMARY KEY,
    task_id       TEXT NOT NULL REFERENCES tasks(id),
    session_id    TEXT,
    question      TEXT NOT NULL,
    option_a      TEXT NOT NULL,
    option_b      TEXT NOT NULL,
    state         TEXT NOT NULL CHECK (state IN ('open', 'answered')),
    choice        TEXT CHECK (choice IN ('A', 'B')),
    answered_by   TEXT,
    asked_at      INTEGER NOT NULL,
    answered_at   INTEGER,
    delivered_at  INTEGER
  );
  CREATE INDEX questions_task ON questions(task_id);
  `,
  // 15: tracker items taken as tasks, and the one comment sleds wrote on each (so a restart never comments twice).
  `
  CREATE TABLE tracker_items (
    source_ref    TEXT PRIMARY KEY,
    adapter       TEXT NOT NULL,
    item_key      TEXT NOT NULL,
    task_id       TEXT NOT NULL REFERENCES tasks(id),
    comment_ref   TEXT,
    comment_body  TEXT,
    commented_at  INTEGER,
    receipt_line  TEXT,
    seen_at       INTEGER NOT NULL
  );
  CREATE INDEX tracker_items_task ON tracker_items(task_id);
  `,
  // 16: prompts handed out by the picker's Dispatch/Switch, until the session they start sends one (it joins the task):
  // kept across a restart of musher in between.
  `
  CREATE TABLE dispatched_prompts (
    prompt        TEXT PRIMARY KEY,
    task_id       TEXT NOT NULL REFERENCES tasks(id),
    until_ms      INTEGER NOT NULL
  );
  `,
  // 17: hook events as the fields musher reads (core/hook-fields.ts), no longer the payload as received: the rows
  // kept before (a tool's output, a file's contents, a prompt) are rewritten. The store runs with secure_delete, so
  // the old bytes are zeroed, not left in free pages.
  slimHookEvents,
  // 18: the session whose reading a bar holds: a newer reading of the same session wins even when it is lower (usage
  // rolled back, a promotion, another account after /login), while another session's lower one is stale.
  `
  ALTER TABLE bars ADD COLUMN session_id TEXT;
  `,
  // 19: a picked-up transcript is the sender's history (issue 12): the bytes each pickup installed, per file, and
  // whose seat they are; usage read from them keeps that seat and stays out of this seat's quarter hours (Today).
  `
  CREATE TABLE installed_histories (
    path          TEXT PRIMARY KEY,
    bytes         INTEGER NOT NULL,
    seat          TEXT NOT NULL,
    handoff_id    TEXT NOT NULL,
    installed_at  INTEGER NOT NULL
  );
  CREATE INDEX installed_histories_handoff ON installed_histories(handoff_id);
  ALTER TABLE usage_records ADD COLUMN seat TEXT;
  DROP TRIGGER usage_quarter_hours_insert;
  DROP TRIGGER usage_quarter_hours_update;
  CREATE TRIGGER usage_quarter_hours_insert AFTER INSERT ON usage_records WHEN NEW.seat IS NULL BEGIN
    INSERT INTO usage_quarter_hours
    VALUES (NEW.ts / 900000, NEW.model, COALESCE(NEW.cost_micros, 0), NEW.cost_micros IS NULL, 1,
      NEW.input_tokens, NEW.output_tokens, NEW.cache_read, NEW.cache_write_5m + NEW.cache_write_1h)
    ON CONFLICT(bucket, model) DO UPDATE SET cost_micros = cost_micros + excluded.cost_micros,
      unpriced = unpriced + excluded.unpriced, records = records + 1,
      input_tokens = input_tokens + excluded.input_tokens, output_tokens = output_tokens + excluded.output_tokens,
      cache_read = cache_read + excluded.cache_read, cache_write = cache_write + excluded.cache_write;
  END;
  CREATE TRIGGER usage_quarter_hours_update AFTER UPDATE OF cost_micros, output_tokens ON usage_records WHEN NEW.seat IS NULL BEGIN
    UPDATE usage_quarter_hours
    SET cost_micros = cost_micros - COALESCE(OLD.cost_micros, 0) + COALESCE(NEW.cost_micros, 0),
        unpriced = unpriced - (OLD.cost_micros IS NULL) + (NEW.cost_micros IS NULL),
        output_tokens = output_tokens - OLD.output_tokens + NEW.output_tokens
    WHERE bucket = NEW.ts / 900000 AND model = NEW.model;
  END;
  `,
  // 20: bars are an account's (issue 12): two accounts' readings never mix. Rows from before carry '' until musher
  // adopts them for its own account at start (BarStore.adoptUnkeyed), the only account it could have read then.
  `
  CREATE TABLE bars_by_account (
    provider      TEXT NOT NULL,
    account       TEXT NOT NULL,
    account_label TEXT,
    window        TEXT NOT NULL,
    used_pct      REAL NOT NULL,
    resets_at     INTEGER,
    changed_at    INTEGER NOT NULL,
    observed_at   INTEGER NOT NULL,
    source        TEXT NOT NULL,
    session_id    TEXT,
    PRIMARY KEY (provider, account, window)
  );
  INSERT INTO bars_by_account (provider, account, window, used_pct, resets_at, changed_at, observed_at, source, session_id)
    SELECT provider, '', window, used_pct, resets_at, changed_at, observed_at, source, session_id FROM bars;
  DROP TABLE bars;
  ALTER TABLE bars_by_account RENAME TO bars;
  ALTER TABLE bar_samples ADD COLUMN account TEXT NOT NULL DEFAULT '';
  DROP INDEX bar_samples_window;
  CREATE INDEX bar_samples_window ON bar_samples(provider, account, window, observed_at);
  `,
  // 21 (issue 13): every move of a life cycle (SPEC.md), one append-only
  // table: the wall's, task's, hand-off's and job's steps with their correlation id. Written only by
  // store/lifecycle-events.ts, in the transaction of the move; never updated or deleted.
  `
  CREATE TABLE lifecycle_events (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    entity_kind     TEXT NOT NULL CHECK (entity_kind IN ('wall', 'task', 'handoff', 'job', 'run')),
    entity_id       TEXT NOT NULL,
    event_type      TEXT NOT NULL,
    from_state      TEXT,
    to_state        TEXT NOT NULL,
    correlation_id  TEXT NOT NULL,
    at              INTEGER NOT NULL,
    payload         TEXT NOT NULL DEFAULT '{}'
  );
  CREATE INDEX lifecycle_events_entity ON lifecycle_events(entity_kind, entity_id, id);
  CREATE INDEX lifecycle_events_correlation ON lifecycle_events(correlation_id, id);
  CREATE TRIGGER lifecycle_events_append_only_update BEFORE UPDATE ON lifecycle_events
  BEGIN SELECT RAISE(ABORT, 'lifecycle_events is append-only'); END;
  CREATE TRIGGER lifecycle_events_append_only_delete BEFORE DELETE ON lifecycle_events
  BEGIN SELECT RAISE(ABORT, 'lifecycle_events is append-only'); END;
  `,
  // 22 (issue 14): routes, their nodes and the decisions taken on them. Written only by musher/engine/route-store.ts.
  // A node's run is core/lifecycle/run.ts's RunState (JSON) with its state mirrored in `state` for the conditional
  // UPDATE; `fencing_token` goes up by one on every claim or take-over, so an engine that lost its lease writes
  // nothing. (lifecycle_events already takes 'run' since 21.)
  `
  CREATE TABLE routes (
    key         TEXT PRIMARY KEY,
    title       TEXT NOT NULL,
    tracker     TEXT,
    mode        TEXT NOT NULL CHECK (mode IN ('approve', 'auto')),
    notes       TEXT,
    repo_root   TEXT NOT NULL,
    file_path   TEXT NOT NULL,
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL
  );
  CREATE TABLE route_nodes (
    route_key        TEXT NOT NULL REFERENCES routes(key) ON DELETE CASCADE,
    node_id          TEXT NOT NULL,
    position         INTEGER NOT NULL,
    title            TEXT NOT NULL,
    brief            TEXT NOT NULL,
    depends_on       TEXT NOT NULL DEFAULT '[]',
    area             TEXT,
    harness          TEXT,
    model            TEXT,
    overnight        INTEGER NOT NULL DEFAULT 0,
    band             TEXT,
    wave             INTEGER NOT NULL,
    armed            INTEGER NOT NULL DEFAULT 0,
    approved         INTEGER NOT NULL DEFAULT 0,
    state            TEXT NOT NULL,
    run              TEXT NOT NULL,
    fencing_token    INTEGER NOT NULL DEFAULT 0,
    lease_owner      TEXT,
    lease_expires_at INTEGER,
    session_id       TEXT,
    pid              INTEGER,
    log_path         TEXT,
    worktree         TEXT,
    branch           TEXT,
    base_sha         TEXT,
    pr_number        INTEGER,
    pr_url           TEXT,
    verify_failures  INTEGER NOT NULL DEFAULT 0,
    last_error       TEXT,
    receipt          TEXT,
    updated_at       INTEGER NOT NULL,
    PRIMARY KEY (route_key, node_id)
  );
  CREATE INDEX route_nodes_ready ON route_nodes(state, armed, wave);
  CREATE INDEX route_nodes_lease ON route_nodes(lease_owner);
  CREATE TABLE route_decisions (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    route_key    TEXT NOT NULL,
    node_id      TEXT NOT NULL,
    question     TEXT NOT NULL,
    options      TEXT NOT NULL,
    answer       TEXT NOT NULL,
    answered_by  TEXT NOT NULL,
    answered_at  INTEGER NOT NULL,
    source       TEXT NOT NULL
  );
  CREATE INDEX route_decisions_route ON route_decisions(route_key, id);
  `,
  // 25 (issue 14 § 5): what a node's agent said it did when its turn ended: its PR says it, and the pack of every node
  // after it carries it ("the PR summaries of the nodes it depends on").
  `ALTER TABLE route_nodes ADD COLUMN summary TEXT;`,
  // 26 (issue 14 § 10): a node's parked question (the agent's MCP park verb, or its harness's own ask tool): open until
  // a person answers it from the CLI or a Slack button; the Slack message it was posted as, to update it once answered.
  `
  CREATE TABLE route_questions (
    id           TEXT PRIMARY KEY,
    route_key    TEXT NOT NULL,
    node_id      TEXT NOT NULL,
    question     TEXT NOT NULL,
    options      TEXT NOT NULL,
    asked_at     INTEGER NOT NULL,
    state        TEXT NOT NULL,
    choice       TEXT,
    answer       TEXT,
    answered_by  TEXT,
    answered_at  INTEGER,
    source       TEXT,
    slack_channel TEXT,
    slack_ts     TEXT
  );
  CREATE INDEX route_questions_open ON route_questions(state, route_key, node_id);
  `,
  // 27 (issue 14 § 10): when an answer reached the agent (its node resumed with it). A tap can come before the agent's
  // turn has ended: the answer waits, undelivered, and the end of the turn hands it over instead of dropping it.
  `
  ALTER TABLE route_questions ADD COLUMN delivered_at INTEGER;
  UPDATE route_questions SET delivered_at = answered_at WHERE state = 'answered';
  `,
  // 28 (issue 15 § 3): the price tier a gateway token buys. 'batch' sends a Claude request as a Message Batch of one
  // and an OpenAI one with service_tier flex (half price, slower); every token minted before is 'standard'.
  `
  ALTER TABLE gateway_tokens ADD COLUMN tier TEXT NOT NULL DEFAULT 'standard';
  `,
  // 29 (issue 15 § 1): an overnight node's own cap (the route file's `cap:`); null: the policy's overnight.cap.
  `ALTER TABLE route_nodes ADD COLUMN cap_micros INTEGER;`,
  // 30 (issue 15 § 1, § 3): an overnight job made at a wall resumes the wall's session: its harness session id and the
  // transcript it was read from (placed for the job's worktree before the first run); null: the node starts fresh. A job
  // route remembers its wall, so /sled cancel at that wall ends it. base_ref: the commit a job's worktree starts from (the
  // wall session's HEAD with its uncommitted work); null: the remote's base branch, as every route node.
  `
  ALTER TABLE route_nodes ADD COLUMN resume_from TEXT;
  ALTER TABLE route_nodes ADD COLUMN resume_transcript TEXT;
  ALTER TABLE routes ADD COLUMN wall_id TEXT;
  ALTER TABLE route_nodes ADD COLUMN base_ref TEXT;
  `,
  // 31 (issue 15 § 5): the ladder. A decision keeps its rung (context, decided, on-call, person) and its reason; a
  // question asked through the MCP ask verb keeps whether it is reversible, its risk, its rung (escalated, then parked
  // when its on-call did not answer in time), who it went to and until when it holds its job's overnight slot.
  `
  ALTER TABLE route_decisions ADD COLUMN rung TEXT;
  ALTER TABLE route_decisions ADD COLUMN reason TEXT;
  ALTER TABLE route_questions ADD COLUMN rung TEXT;
  ALTER TABLE route_questions ADD COLUMN reversible INTEGER;
  ALTER TABLE route_questions ADD COLUMN risk TEXT;
  ALTER TABLE route_questions ADD COLUMN escalated_to TEXT;
  ALTER TABLE route_questions ADD COLUMN escalate_until INTEGER;
  ALTER TABLE route_questions ADD COLUMN parked_at INTEGER;
  `,
  // 32 (issue 15 § 3): every Message Batch the gateway's batch tier sent, kept across a musher crash: the same request
  // sent again to a restarted musher (the harness retries a dropped connection) attaches to the batch already paid
  // for, and `billed_at` is set in the transaction that meters its answer, so no process bills it twice. Rows are
  // pruned after a day (a batch ends within 24 h). Written only by musher/store/gateway-batches.ts.
  `
  CREATE TABLE IF NOT EXISTS gateway_batches (
    batch_id    TEXT PRIMARY KEY,
    dedup_key   TEXT NOT NULL,
    seat        TEXT NOT NULL,
    custom_id   TEXT NOT NULL,
    created_at  INTEGER NOT NULL,
    state       TEXT NOT NULL,
    ended_at    INTEGER,
    billed_at   INTEGER
  );
  CREATE INDEX IF NOT EXISTS gateway_batches_dedup ON gateway_batches(dedup_key, created_at);
  CREATE INDEX IF NOT EXISTS gateway_batches_created ON gateway_batches(created_at);
  `,
  // 33 (issue 15 § 4): a node's last checkpoint — its harness session and a commit of its worktree as the turn left it
  // (JSON {sessionId, commit, at}); a crash, a restart or a lost worktree resumes from it instead of starting over.
  `ALTER TABLE route_nodes ADD COLUMN checkpoint TEXT;`,
  // 34 (issue 16 § 1): a large backfill's usage waits here, unindexed and in the order it was read, committed with the
  // files' offsets; UsageStore.mergeStaged moves it into usage_records in key order, a bounded chunk per transaction
  // (random-key inserts, a few hundred per commit, were most of a cold backfill's time). Rows here count nowhere yet.
  `
  CREATE TABLE usage_staged (
    dedup_key      TEXT NOT NULL,
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
    unpriced_reason TEXT,
    seat           TEXT
  );
  `,
  // 35 (issue 16 § 1): usage_records keyed by a unique index rather than its primary key, so a cold backfill loads
  // without it and builds it once, sorted, at the end (random keys inserted one by one were half its time); and a
  // session's spend is summed from its index alone again: every session query asks for \`seat IS NULL\` (since 19),
  // which the index did not hold, so the statusline's "this session" paid a row lookup per reply.
  rekeyUsageRecords,
];

function rekeyUsageRecords(db: Database.Database): void {
  db.exec(`
  CREATE TABLE usage_records_rekeyed (
    dedup_key      TEXT NOT NULL,
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
    unpriced_reason TEXT,
    seat           TEXT
  );
  INSERT INTO usage_records_rekeyed SELECT dedup_key, source, session_id, model, ts, input_tokens, output_tokens,
    cache_write_5m, cache_write_1h, cache_read, web_searches, service_tier, inference_geo, cost_micros, unpriced_reason, seat
    FROM usage_records ORDER BY rowid;
  DROP TABLE usage_records;
  ALTER TABLE usage_records_rekeyed RENAME TO usage_records;
  ${CREATE_DEDUP_INDEX};
  CREATE INDEX usage_session_cost ON usage_records(session_id, seat, model, cost_micros, ts);
  CREATE INDEX usage_ts_cost ON usage_records(ts, model, cost_micros);
  ${SUM_QUARTER_HOURS}
  `);
  // Summed again, not kept: a backfill killed before this version left them unsummed, with their triggers dropped.
  for (const trigger of QUARTER_HOUR_TRIGGERS) db.exec(trigger);
}

function slimHookEvents(db: Database.Database): void {
  const page = db.prepare(`SELECT rowid AS id, event, payload FROM hook_events WHERE rowid > ? ORDER BY rowid LIMIT 500`);
  const update = db.prepare(`UPDATE hook_events SET payload = ? WHERE rowid = ?`);
  let after = 0;
  for (;;) {
    const rows = page.all(after) as Array<{ id: number; event: string; payload: string }>;
    if (rows.length === 0) return;
    for (const r of rows) {
      let parsed: unknown = null;
      try {
        parsed = JSON.parse(r.payload);
      } catch {
        // not JSON: nothing of it is kept
      }
      update.run(JSON.stringify(keptHookFields(r.event, parsed)), r.id);
      after = r.id;
    }
  }
}

/** Applies the migrations not yet applied, up to `upTo` (all by default; tests stop short to build an old store). */
export function migrate(db: Database.Database, upTo: number = MIGRATIONS.length): number {
  const current = db.pragma('user_version', { simple: true }) as number;
  for (let version = current; version < Math.min(upTo, MIGRATIONS.length); version++) {
    const step = MIGRATIONS[version]!;
    db.transaction(() => {
      if (typeof step === 'string') db.exec(step);
      else step(db);
      db.pragma(`user_version = ${version + 1}`);
    })();
  }
  return db.pragma('user_version', { simple: true }) as number;
}
