/**
 * What musher leaves on disk (the built dist/, a real musher): files only the user can read, hook events as the
 * fields musher uses (never a tool's output or a file's contents), raw events pruned after the retention setting,
 * and a spooled event that fails kept (with a line in the log) while musher goes on answering.
 */
import Database from 'better-sqlite3';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeSpool } from '../../hooks/spool.js';
import { writeSledsConfig } from '../support/sleds-config.js';
import { sleds, startMusher, status, stopMusher, waitFor, type SledsWorld } from '../support/sleds-env.js';
import { useWorlds } from '../support/worlds.js';

const DAY = 24 * 3_600_000;
const world = useWorlds();

// musher must not rely on the umask it was started with: start it under a permissive one.
let umaskBefore = 0;
beforeAll(() => void (umaskBefore = process.umask(0o022)));
afterAll(() => void process.umask(umaskBefore));

async function hook(w: SledsWorld, event: string, payload: Record<string, unknown>): Promise<void> {
  const r = await sleds(w, ['hook', event], JSON.stringify({ hook_event_name: event, ...payload }));
  expect(r.code, r.stderr).toBe(0);
}

function db(w: SledsWorld): Database.Database {
  return new Database(join(w.sledsHome, 'data', 'sleds.db'));
}

function hookRows(w: SledsWorld): Array<{ event: string; payload: string; received_at: number }> {
  const c = db(w);
  try {
    return c.prepare(`SELECT event, payload, received_at FROM hook_events ORDER BY received_at`).all() as Array<{ event: string; payload: string; received_at: number }>;
  } finally {
    c.close();
  }
}

/** Every file and folder under `dir`, with its permission bits. */
function modes(dir: string): Array<{ path: string; mode: number }> {
  const out: Array<{ path: string; mode: number }> = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    const st = statSync(path);
    out.push({ path, mode: st.mode & 0o777 });
    if (st.isDirectory()) out.push(...modes(path));
  }
  return out;
}

/** Every file under `dir` whose bytes hold `needle` (the SQLite database, its WAL and shm included). */
function filesHolding(dir: string, needle: string): string[] {
  return modes(dir)
    .filter((e) => statSync(e.path).isFile() && readFileSync(e.path).includes(needle))
    .map((e) => e.path);
}

describe('what musher keeps at rest', () => {
  it('the database and its -wal/-shm are 0600, and nothing musher made is readable by others, under a umask of 022', async () => {
    const w = world();
    await startMusher(w);
    await hook(w, 'SessionStart', { session_id: 's-mode', cwd: w.root, source: 'startup' });
    await waitFor('the event recorded', () => hookRows(w).length === 1);

    const dbFile = join(w.sledsHome, 'data', 'sleds.db');
    for (const f of [dbFile, `${dbFile}-wal`, `${dbFile}-shm`]) expect({ f, mode: (statSync(f).mode & 0o777).toString(8) }).toEqual({ f, mode: '600' });
    expect(modes(w.sledsHome).filter((e) => (e.mode & 0o077) !== 0).map((e) => `${e.path} ${e.mode.toString(8)}`)).toEqual([]);
  });

  it("a PostToolUse is kept as the tool and the files it changed: the tool's input and output are stored nowhere", async () => {
    const w = world();
    await startMusher(w);
    const file = join(w.root, 'src', 'config.ts');
    await hook(w, 'PostToolUse', {
      session_id: 's-rest',
      cwd: w.root,
      tool_name: 'Write',
      tool_input: { file_path: file, content: 'export const password = "WRITTEN-CONTENT-7f3a";' },
      tool_response: { type: 'create', filePath: file, content: 'export const password = "RESPONSE-BODY-7f3a";' },
    });
    await hook(w, 'PostToolUse', {
      session_id: 's-rest',
      cwd: w.root,
      tool_name: 'Bash',
      tool_input: { command: 'cat ~/.aws/credentials # COMMAND-LINE-7f3a' },
      tool_response: { stdout: 'aws_secret_access_key=COMMAND-OUTPUT-7f3a', stderr: '', interrupted: false },
    });
    await waitFor('both events recorded', () => hookRows(w).length === 2);

    expect(hookRows(w).map((r) => [r.event, JSON.parse(r.payload)])).toEqual([
      ['PostToolUse', { tool: 'Write', files: [file] }],
      ['PostToolUse', { tool: 'Bash' }],
    ]);
    for (const needle of ['WRITTEN-CONTENT-7f3a', 'RESPONSE-BODY-7f3a', 'COMMAND-LINE-7f3a', 'COMMAND-OUTPUT-7f3a']) {
      expect({ needle, files: filesHolding(w.sledsHome, needle) }).toEqual({ needle, files: [] });
    }
  });

  it("hook events older than config.yml's retention.rawEventsDays are removed when musher starts", async () => {
    const w = world();
    writeSledsConfig(w, { retention: { rawEventsDays: 7 } });
    await startMusher(w);
    await hook(w, 'SessionStart', { session_id: 's-old', cwd: w.root, source: 'startup' });
    await hook(w, 'SessionStart', { session_id: 's-new', cwd: w.root, source: 'startup' });
    await waitFor('both events recorded', () => hookRows(w).length === 2);
    await stopMusher(w);
    const c = db(w);
    c.prepare(`UPDATE hook_events SET received_at = ? WHERE session_id = 's-old'`).run(Date.now() - 8 * DAY);
    c.prepare(`UPDATE hook_events SET received_at = ? WHERE session_id = 's-new'`).run(Date.now() - 6 * DAY);
    c.close();

    await startMusher(w);
    await waitFor('the old event pruned', () => hookRows(w).length === 1);
    expect(readFileSync(w.logFile, 'utf8')).toContain('retention: removed 1 hook event(s) older than 7 days');
    const c2 = db(w);
    expect(c2.prepare(`SELECT session_id FROM hook_events`).all()).toEqual([{ session_id: 's-new' }]);
    c2.close();
  });

  it('a spooled event whose handling fails is kept in spool/failed with one log line; musher keeps answering, and takes it at its next start', async () => {
    const w = world();
    await startMusher(w);
    // The store refuses this one event, as a full disk or a constraint would.
    const c = db(w);
    c.exec(`CREATE TRIGGER poison BEFORE INSERT ON hook_events WHEN NEW.event_id = 'evt-poison' BEGIN SELECT RAISE(ABORT, 'the store refused it'); END`);
    c.close();
    const envelope = { eventId: 'evt-poison', event: 'SessionStart', harness: 'claude-code', receivedAt: Date.now(), raw: JSON.stringify({ session_id: 's-poison', cwd: w.root, hook_event_name: 'SessionStart' }) };
    const name = writeSpool(w.spoolDir, envelope);

    const failed = join(w.spoolDir, 'failed', name);
    await waitFor('the event kept in spool/failed', () => existsSync(failed));
    expect(existsSync(join(w.spoolDir, name))).toBe(false);
    const lines = readFileSync(w.logFile, 'utf8').split('\n').filter((l) => l.includes(name));
    expect(lines).toEqual([expect.stringMatching(new RegExp(` ERROR spool ${name}: the store refused it — kept in .*/spool/failed/${name}; musher tries it again at its next start$`))]);
    const doctor = JSON.parse((await sleds(w, ['doctor', '--json'])).stdout) as { steps: Array<{ id: string; status: string; message: string }> };
    const steps = Object.fromEntries(doctor.steps.map((s) => [s.id, s]));
    expect(steps.spool).toMatchObject({ status: 'ok', message: 'spool is empty' });
    expect(steps['spool failed']).toMatchObject({ status: 'warn', message: `1 spooled event could not be taken in and is kept in ${join(w.spoolDir, 'failed')}` });

    // musher is still up and answering hooks.
    const pid = (await status(w)).musher.pid;
    await hook(w, 'SessionStart', { session_id: 's-after', cwd: w.root, source: 'startup' });
    await waitFor('the next event recorded', () => hookRows(w).length === 1);
    expect((await status(w)).musher.pid).toBe(pid);

    // Fixed (the trigger gone), the next start takes it.
    await stopMusher(w);
    const c2 = db(w);
    c2.exec(`DROP TRIGGER poison`);
    c2.close();
    await startMusher(w);
    await waitFor('the kept event recorded at the next start', () => hookRows(w).length === 2);
    expect(existsSync(failed)).toBe(false);
  });
});
