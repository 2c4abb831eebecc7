import Database from 'better-sqlite3';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { sleds, startMusher, waitFor, type SledsWorld } from '../support/sleds-env.js';
import { useWorlds } from '../support/worlds.js';
import type { SignedReceipt } from '../../core/receipt/receipt.js';
import type { Band } from '../../core/estimate/band.js';

const world = useWorlds({ SLEDS_KEYRING: 'file', SLEDS_SEAT: 'dana' });
const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const MIN = 60_000;

function repoDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'sleds-rcpt-repo-'));
  dirs.push(d);
  mkdirSync(join(d, '.git'));
  return d;
}

function db(w: SledsWorld): Database.Database {
  return new Database(join(w.sledsHome, 'data', 'sleds.db'));
}

/** The session's model calls, as the transcript reader records them: [minutes from start, micro-dollars]. */
function seedUsage(w: SledsWorld, sessionId: string, start: number, calls: Array<[minute: number, micros: number]>, model = 'claude-opus-5-5'): void {
  const d = db(w);
  const insert = d.prepare(
    `INSERT INTO usage_records (dedup_key, source, session_id, model, ts, input_tokens, output_tokens, cache_write_5m, cache_write_1h, cache_read, web_searches, cost_micros)
     VALUES (?, 'claude-transcript', ?, ?, ?, 10, 10, 0, 0, 0, 0, ?)`,
  );
  for (const [minute, micros] of calls) insert.run(`${sessionId}:${minute}`, sessionId, model, start + minute * MIN, micros);
  d.close();
}

async function hook(w: SledsWorld, event: string, payload: Record<string, unknown>): Promise<string> {
  const r = await sleds(w, ['hook', event], JSON.stringify({ hook_event_name: event, ...payload }));
  return r.stdout.trim() === '' ? '' : ((JSON.parse(r.stdout) as { reason?: string }).reason ?? '');
}

async function receipts(w: SledsWorld): Promise<Array<{ receipt: SignedReceipt; line: string }>> {
  const r = await sleds(w, ['receipts', '--json']);
  expect(r.code, r.stderr).toBe(0);
  return (JSON.parse(r.stdout) as { receipts: Array<{ receipt: SignedReceipt; line: string }> }).receipts;
}

async function taskOf(w: SledsWorld, title: string): Promise<{ id: string; turns: number; state: string }> {
  const r = await sleds(w, ['tasks', '--json']);
  return (JSON.parse(r.stdout) as { tasks: Array<{ id: string; title: string; turns: number; state: string }> }).tasks.find((t) => t.title === title)!;
}

describe('receipts', () => {
  it('/sled done writes one signed receipt: dollars, key spend, active minutes, files, the band it had; verify passes, tampering fails', async () => {
    const w = world();
    const init = await sleds(w, ['keys', 'init']);
    expect(init.code, init.stderr).toBe(0);
    await startMusher(w);
    const repo = repoDir();
    await hook(w, 'SessionStart', { session_id: 's1', cwd: repo, model: 'claude-opus-5-5', source: 'startup' });
    await hook(w, 'UserPromptSubmit', { session_id: 's1', cwd: repo, prompt: 'Fix the checkout total rounding' });
    const task = await taskOf(w, 'Fix the checkout total rounding');
    // The band it was given (as if five similar receipts had existed): $5–10, 10–30 min.
    const band: Band = { lowMicros: 5_000_000, highMicros: 10_000_000, lowMinutes: 10, highMinutes: 30, fit: { inBand: 4, of: 5 }, basis: 'receipts', n: 6 };
    const d = db(w);
    d.prepare(`UPDATE tasks SET band = ? WHERE id = ?`).run(JSON.stringify(band), task.id);
    // A key response metered for the session by the gateway.
    d.prepare(
      `INSERT INTO platform_key_usage (request_id, seat, project, model, ts, input_tokens, output_tokens, cache_write, cache_read, cost_micros, source, session_id)
       VALUES ('req_1', 'dana', NULL, 'claude-opus-5-5', ?, 1, 1, 0, 0, 1500000, 'gateway', 's1')`,
    ).run(Date.now());
    d.close();
    // 12 minutes of calls, a 40-minute wait for input, 8 more minutes: 20 active minutes, $7.40.
    const start = Date.now() - 90 * MIN;
    seedUsage(w, 's1', start, [[0, 1_000_000], [4, 1_000_000], [8, 1_000_000], [12, 1_000_000], [52, 1_000_000], [56, 1_000_000], [60, 1_400_000]]);
    for (const file of ['src/total.ts', 'src/total.ts', 'test/total.test.ts']) {
      await hook(w, 'PostToolUse', { session_id: 's1', cwd: repo, tool_name: 'Edit', tool_input: { file_path: join(repo, file) }, tool_response: {} });
    }
    await hook(w, 'PostToolUse', { session_id: 's1', cwd: repo, tool_name: 'Read', tool_input: { file_path: join(repo, 'README.md') }, tool_response: {} });
    await waitFor('the tool events recorded', async () => {
      const c = db(w);
      const n = (c.prepare(`SELECT COUNT(*) AS n FROM hook_events WHERE event = 'PostToolUse'`).get() as { n: number }).n;
      c.close();
      return n === 4;
    });

    const answer = await hook(w, 'UserPromptSubmit', { session_id: 's1', cwd: repo, prompt: '/sled done' });
    expect(answer).toMatch(new RegExp(`^sled: task ${task.id} done \\(Fix the checkout total rounding\\)\\. Receipt [a-z2-9]{12}: 20 min · \\$7\\.40 · in band · seat dana · claude-opus-5-5 · signed\\. Your next prompt starts a new task\\.$`));

    const [only, ...more] = await receipts(w);
    expect(more).toHaveLength(0);
    expect(only!.receipt.body).toMatchObject({
      taskId: task.id, title: 'Fix the checkout total rounding', repo, seat: 'dana', harness: 'claude-code', models: ['claude-opus-5-5'],
      costMicros: 7_400_000, keyMicros: 1_500_000, activeMinutes: 20, filesTouched: 2, turns: 1, band, inBand: true,
    });
    expect(only!.line).toBe('20 min · $7.40 · in band · seat dana · claude-opus-5-5 · signed');
    const id = only!.receipt.body.id;

    // The task's row shows it; ending it again gives the same receipt, never a second.
    const shown = await sleds(w, ['task', task.id]);
    expect(shown.stdout).toContain(`  receipt ${id}: 20 min · $7.40 · in band · seat dana · claude-opus-5-5 · signed`);
    expect(shown.stdout).toContain('  state done');
    const again = await sleds(w, ['task', task.id, 'done', '--json']);
    expect(again.code, again.stderr).toBe(0);
    expect((JSON.parse(again.stdout) as { receipt: SignedReceipt }).receipt.body.id).toBe(id);
    expect(await receipts(w)).toHaveLength(1);

    const ok = await sleds(w, ['receipt', 'verify', id]);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toMatch(new RegExp(`^receipt ${id} verifies: signed by the Ed25519 key [0-9a-f]{4} [0-9a-f]{4} [0-9a-f]{4} [0-9a-f]{4}`));

    // A teammate checks it from a file; the same file with the dollars changed fails, in one line.
    const saved = await sleds(w, ['receipt', 'show', id, '--json']);
    const file = join(w.root, 'receipt.json');
    writeFileSync(file, saved.stdout);
    expect((await sleds(w, ['receipt', 'verify', file])).code).toBe(0);
    // In the repository, the roster says whose key it is: dana's, or — with another key on her entry — not hers.
    const entry = (JSON.parse((await sleds(w, ['keys', 'show', '--json'])).stdout) as { entry: { handle: string; keys: { x25519: string; ed25519: string } } }).entry;
    mkdirSync(join(repo, '.sleds'), { recursive: true });
    writeFileSync(join(repo, '.sleds', 'roster.yml'), JSON.stringify({ teammates: [entry] }));
    const byRoster = await sleds(w, ['receipt', 'verify', file], undefined, {}, repo);
    expect(byRoster.code, byRoster.stderr).toBe(0);
    expect(byRoster.stdout).toMatch(new RegExp(`^receipt ${id} verifies: signed with dana's key in \\.sleds/roster\\.yml \\(`));
    const otherKey = Buffer.alloc(32, 7).toString('base64');
    writeFileSync(join(repo, '.sleds', 'roster.yml'), JSON.stringify({ teammates: [{ ...entry, keys: { ...entry.keys, ed25519: otherKey } }] }));
    const notHers = await sleds(w, ['receipt', 'verify', file, '--json'], undefined, {}, repo);
    expect(notHers.code).toBe(1);
    expect(JSON.parse(notHers.stdout)).toMatchObject({ ok: false, id, seat: 'dana', seatKey: false });
    const notHersWords = await sleds(w, ['receipt', 'verify', file], undefined, {}, repo);
    expect(notHersWords.stderr).toMatch(new RegExp(`^sleds: receipt ${id} is signed, but not with dana's key in \\.sleds/roster\\.yml .* pull the roster and ask them\n$`));

    const tampered = JSON.parse(readFileSync(file, 'utf8')) as { receipt: SignedReceipt };
    tampered.receipt.body.costMicros = 2_000_000;
    writeFileSync(file, JSON.stringify(tampered));
    const bad = await sleds(w, ['receipt', 'verify', file]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toBe(`sleds: receipt ${id} does not verify: the signature does not match the body — the receipt was changed after it was signed\n`);

    // Changed where it is stored: it fails there too.
    const c = db(w);
    const row = c.prepare(`SELECT body FROM receipts WHERE id = ?`).get(id) as { body: string };
    c.prepare(`UPDATE receipts SET body = ? WHERE id = ?`).run(row.body.replace('"inBand":true', '"inBand":false'), id);
    c.close();
    const stored = await sleds(w, ['receipt', 'verify', id, '--json']);
    expect(stored.code).toBe(1);
    expect(JSON.parse(stored.stdout)).toMatchObject({ ok: false, id, why: 'the signature does not match the body — the receipt was changed after it was signed' });
  });

  it('a task whose sessions have all ended gets its receipt after the quiet period; without seat keys it is kept unsigned and says so', async () => {
    const w = world({ SLEDS_TASK_QUIET_MS: '1500' });
    await startMusher(w);
    const repo = repoDir();
    await hook(w, 'UserPromptSubmit', { session_id: 'a1', cwd: repo, prompt: 'Add the CSV export' });
    const task = await taskOf(w, 'Add the CSV export');
    // A second session joins the task (the MCP intake or a hand-off attaches it).
    const d = db(w);
    d.prepare(`INSERT INTO task_sessions (session_id, task_id, attached_at) VALUES ('a2', ?, ?)`).run(task.id, Date.now());
    d.close();
    await hook(w, 'SessionStart', { session_id: 'a2', cwd: repo, model: 'claude-sonnet-5', source: 'startup' });
    const start = Date.now() - 30 * MIN;
    seedUsage(w, 'a1', start, [[0, 200_000], [3, 300_000]]);
    seedUsage(w, 'a2', start, [[10, 500_000], [12, 500_000]], 'claude-sonnet-5');

    await hook(w, 'SessionEnd', { session_id: 'a1', cwd: repo, reason: 'prompt_input_exit' });
    await waitFor('the first session ended', async () => {
      const c = db(w);
      const ended = (c.prepare(`SELECT ended_at FROM sessions WHERE session_id = 'a1'`).get() as { ended_at: number | null } | undefined)?.ended_at;
      c.close();
      return ended != null;
    });
    expect(await receipts(w)).toHaveLength(0);

    await hook(w, 'SessionEnd', { session_id: 'a2', cwd: repo, reason: 'other' });
    const jobs = JSON.parse((await sleds(w, ['jobs', '--json'])).stdout) as { jobs: Array<{ kind: string; state: string; payload: { taskId?: string } }> };
    expect(jobs.jobs.filter((j) => j.kind === 'task-end').map((j) => [j.state, j.payload.taskId])).toEqual([['scheduled', task.id]]);
    const [r] = await waitFor('the receipt', async () => {
      const list = await receipts(w);
      return list.length > 0 ? list : null;
    });
    expect(r!.receipt.signature).toBeNull();
    expect(r!.receipt.body).toMatchObject({ taskId: task.id, costMicros: 1_500_000, activeMinutes: 5, models: ['claude-opus-5-5', 'claude-sonnet-5'], band: null, inBand: null, harness: 'claude-code' });
    expect(r!.line).toBe('5 min · $1.50 · no band · seat dana · claude-opus-5-5+claude-sonnet-5 · unsigned — run sleds keys init');
    const verify = await sleds(w, ['receipt', 'verify', r!.receipt.body.id]);
    expect(verify.code).toBe(1);
    expect(verify.stderr).toBe(`sleds: receipt ${r!.receipt.body.id} does not verify: the receipt is unsigned (its seat had no keys) — nothing to verify\n`);
    const human = await sleds(w, ['receipts']);
    expect(human.stdout).toContain(`${r!.receipt.body.id}  task ${task.id}  5 min · $1.50`);
  });

  it('a session resumed within the quiet period keeps its task open: closing Claude Code and resuming it is the same task', async () => {
    const w = world({ SLEDS_TASK_QUIET_MS: '3000' });
    await startMusher(w);
    const repo = repoDir();
    await hook(w, 'UserPromptSubmit', { session_id: 'r1', cwd: repo, prompt: 'Tidy the importer' });
    const task = await taskOf(w, 'Tidy the importer');
    await hook(w, 'SessionEnd', { session_id: 'r1', cwd: repo, reason: 'prompt_input_exit' });
    await hook(w, 'SessionStart', { session_id: 'r1', cwd: repo, source: 'resume' });
    type Jobs = { jobs: Array<{ kind: string; state: string; result: { summary: string } | null }> };
    const ran = await waitFor('the quiet period to pass', async () => {
      const j = (JSON.parse((await sleds(w, ['jobs', '--json'])).stdout) as Jobs).jobs.find((x) => x.kind === 'task-end');
      return j && j.state === 'done' ? j : null;
    });
    expect(ran.result?.summary).toBe(`task ${task.id} goes on: a session of it was resumed`);
    expect(await receipts(w)).toHaveLength(0);
    await hook(w, 'UserPromptSubmit', { session_id: 'r1', cwd: repo, prompt: 'and the exporter' });
    expect((await taskOf(w, 'Tidy the importer')).turns).toBe(2);
  });

  it('receipts feed the estimator: five finished bugfixes give the next one a band', async () => {
    const w = world();
    await sleds(w, ['keys', 'init']);
    await startMusher(w);
    const repo = repoDir();
    const start = Date.now() - 300 * MIN;
    for (let i = 0; i < 5; i++) {
      const sid = `b${i}`;
      await hook(w, 'UserPromptSubmit', { session_id: sid, cwd: repo, prompt: `Fix bug number ${i}` });
      await hook(w, 'UserPromptSubmit', { session_id: sid, cwd: repo, prompt: '/sled type bugfix' });
      seedUsage(w, sid, start + i * 20 * MIN, [[0, 1_000_000 * (i + 1)], [i + 1, 1_000_000]]);
      expect(await hook(w, 'UserPromptSubmit', { session_id: sid, cwd: repo, prompt: '/sled done' })).toContain('no band · seat dana');
    }
    await hook(w, 'UserPromptSubmit', { session_id: 'b9', cwd: repo, prompt: 'Fix bug number 9' });
    await hook(w, 'UserPromptSubmit', { session_id: 'b9', cwd: repo, prompt: '/sled type bugfix' });
    const est = await hook(w, 'UserPromptSubmit', { session_id: 'b9', cwd: repo, prompt: '/sled estimate' });
    expect(est).toMatch(/: \$2\.80–5\.20 · 2–4 min · no fit yet — from 5 similar bugfix receipts in this repository/);
  });
});
