/**
 * The hook-event log on a real SQLite file: what is kept of an event, the migration that slims the rows an older
 * musher stored verbatim, and the retention rounds on an injected clock and timers.
 */
import Database from 'better-sqlite3';
import { mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Log } from '../../musher/log.js';
import { openStore, type Db } from '../../musher/store/db.js';
import { HookEventStore } from '../../musher/store/hook-events.js';
import { migrate } from '../../musher/store/migrations.js';
import { DAY_MS, RawEventRetention } from '../../musher/store/retention.js';
import { ManualTimers } from '../support/manual-timers.js';

const T0 = Date.UTC(2026, 5, 1, 12, 0);

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const c of cleanups.splice(0).reverse()) c();
});

function tempDbFile(): string {
  const dir = mkdtempSync(join(tmpdir(), 'sl-he-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return join(dir, 'sleds.db');
}

function store(): { db: Db; events: HookEventStore } {
  const db = openStore(tempDbFile());
  cleanups.push(() => db.close());
  return { db, events: new HookEventStore(db) };
}

function logLines(): { log: Log; lines: string[] } {
  const lines: string[] = [];
  return { lines, log: { info: (m) => lines.push(m), warn: (m) => lines.push(m), error: (m) => lines.push(m) } };
}

const ids = (db: Db) => (db.prepare(`SELECT event_id FROM hook_events ORDER BY received_at`).all() as Array<{ event_id: string }>).map((r) => r.event_id);

function record(events: HookEventStore, eventId: string, receivedAt: number): void {
  events.record({ eventId, event: 'SessionStart', sessionId: 's1', receivedAt, viaSpool: false, payload: { session_id: 's1' } });
}

describe('hook events at rest', () => {
  it('rows an older musher stored verbatim are slimmed by the migration, and their bytes leave the file', () => {
    const file = tempDbFile();
    const old = new Database(file);
    old.pragma('journal_mode = WAL');
    migrate(old, 16);
    const verbatim = {
      session_id: 's1',
      tool_name: 'Edit',
      tool_input: { file_path: '/r/src/a.ts', old_string: 'OLD-STRING-91c2', new_string: 'NEW-STRING-91c2' },
      tool_response: { filePath: '/r/src/a.ts', originalFile: 'ORIGINAL-FILE-BODY-91c2'.repeat(200) },
    };
    const insert = old.prepare(`INSERT INTO hook_events (event_id, event, session_id, received_at, via_spool, payload) VALUES (?, ?, 's1', ?, 0, ?)`);
    insert.run('e1', 'PostToolUse', T0, JSON.stringify(verbatim));
    insert.run('e2', 'UserPromptSubmit', T0 + 1, JSON.stringify({ session_id: 's1', prompt: 'PROMPT-TEXT-91c2' }));
    insert.run('e3', 'Stop', T0 + 2, 'not json at all');
    old.close();

    const db = openStore(file);
    const rows = db.prepare(`SELECT event_id, payload FROM hook_events ORDER BY received_at`).all();
    expect(rows).toEqual([
      { event_id: 'e1', payload: JSON.stringify({ tool: 'Edit', files: ['/r/src/a.ts'] }) },
      { event_id: 'e2', payload: '{}' },
      { event_id: 'e3', payload: '{}' },
    ]);
    expect(new HookEventStore(db).keptFieldsOf(['s1'], 'PostToolUse')).toEqual([{ tool: 'Edit', files: ['/r/src/a.ts'] }]);
    db.close();
    for (const f of [file, `${file}-wal`]) {
      let bytes: Buffer;
      try {
        bytes = readFileSync(f);
      } catch {
        continue;
      }
      for (const needle of ['OLD-STRING-91c2', 'NEW-STRING-91c2', 'ORIGINAL-FILE-BODY-91c2', 'PROMPT-TEXT-91c2']) expect({ f, needle, held: bytes.includes(needle) }).toEqual({ f, needle, held: false });
    }
  });

  it('retention prunes events older than its days at start, then once a day on the injected clock', () => {
    const { db, events } = store();
    const clock = { t: T0, now: () => clock.t };
    const timers = new ManualTimers();
    const { log, lines } = logLines();
    record(events, 'forty-days', T0 - 40 * DAY_MS);
    record(events, 'twenty-nine-days', T0 - 29 * DAY_MS);
    record(events, 'yesterday', T0 - DAY_MS);
    const retention = new RawEventRetention({ events, days: 30, clock, timers, log });

    retention.start();
    expect(ids(db)).toEqual(['twenty-nine-days', 'yesterday']);
    expect(lines).toEqual(['retention: removed 1 hook event(s) older than 30 days (retention.rawEventsDays in config.yml)']);
    expect(timers.pending.map((t) => t.ms)).toEqual([DAY_MS]);

    // A day on, nothing has aged past 30 days yet (29 + 1 = 30, not older): kept, and the next round armed.
    clock.t += DAY_MS;
    timers.fireAll();
    expect(ids(db)).toEqual(['twenty-nine-days', 'yesterday']);
    expect(lines).toHaveLength(1);
    expect(timers.pending.map((t) => t.ms)).toEqual([DAY_MS]);

    clock.t += DAY_MS;
    timers.fireAll();
    expect(ids(db)).toEqual(['yesterday']);

    retention.stop();
    expect(timers.pending).toEqual([]);
  });

  it('spooled events that failed and were never taken since go with the same retention', () => {
    const { events } = store();
    const dir = mkdtempSync(join(tmpdir(), 'sl-failed-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const clock = { t: Date.now(), now: () => clock.t };
    const { log, lines } = logLines();
    for (const [name, ageDays] of [['old.json', 31], ['recent.json', 29]] as const) {
      writeFileSync(join(dir, name), '{"raw":"a payload as received"}');
      const at = new Date(clock.t - ageDays * DAY_MS);
      utimesSync(join(dir, name), at, at);
    }
    new RawEventRetention({ events, days: 30, failedSpoolDir: dir, clock, timers: new ManualTimers(), log }).start();
    expect(readdirSync(dir)).toEqual(['recent.json']);
    expect(lines).toEqual([`retention: removed 1 failed spooled event(s) older than 30 days from ${dir}`]);
  });

  it('a round that fails is one line, and the rounds go on', () => {
    const clock = { t: T0, now: () => clock.t };
    const timers = new ManualTimers();
    const { log, lines } = logLines();
    const retention = new RawEventRetention({
      events: {
        pruneBefore: () => {
          throw new Error('database is locked');
        },
      },
      days: 30,
      clock,
      timers,
      log,
    });
    retention.start();
    expect(lines).toEqual(['retention: could not remove old hook events: database is locked — tried again in a day']);
    expect(timers.pending).toHaveLength(1);
  });
});
